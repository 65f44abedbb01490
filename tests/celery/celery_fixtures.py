#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Celery protocol v2 fixtures and interop checks, produced by the real python3-celery library
# (Debian python3-celery 5.2.6 / python3-kombu 5.2.4). No broker is used: messages are captured
# at kombu's Producer._publish (the serialized body, headers and properties exactly as they go to
# AMQP), and result metas are captured from a key-value result backend's set() while a real
# worker Request executes the task in-process.
#
# Regenerate the committed fixtures (tests/data/celery/*.json) with:
#   /usr/bin/python3 tests/celery/celery_fixtures.py generate tests/data/celery
# Run the live round trip against our codec (what the celery_interop CTest does):
#   /usr/bin/python3 tests/celery/celery_fixtures.py interop <path to celery_codec_tool>
# Exit code 77 means python3-celery is not installed (CTest reports the test as skipped).
#
# Envelope fixture format (also what celery_codec_tool reads and writes):
#   {"properties": {"content_type", "content_encoding", "correlation_id", "priority",
#                   "delivery_mode", "reply_to"}, "headers": {...}, "body": "<utf-8 text>",
#    "inputs": {what was sent: task, id, args, kwargs, options}}
# Values that vary per run are pinned: origin is "gen1@fixture", reply_to is "fixture-oid",
# and the backend clock (date_done) is fixed.
import datetime as _dt
import json
import os
import subprocess
import sys

try:
    import celery
    import kombu
    from celery import Celery
    from celery.backends import base as backend_base
    from celery.backends.base import KeyValueStoreBackend
    from celery.worker.request import Request
    from kombu.message import Message
    from kombu.messaging import Producer
except ImportError as exc:  # pragma: no cover
    print(f"skipped: python3-celery not available ({exc})")
    sys.exit(77)

TASK = "run_mineru_inference"
FIXED_NOW = _dt.datetime(2024, 5, 6, 7, 8, 9, 123456)


class _FixedClock(_dt.datetime):
    """Celery's backend takes date_done from datetime.utcnow(); pin it for reproducible bytes."""

    @classmethod
    def utcnow(cls):
        return FIXED_NOW


class CaptureBackend(KeyValueStoreBackend):
    """Result backend that keeps the exact bytes Celery would SETEX into Redis."""

    def __init__(self, app, **kwargs):
        super().__init__(app, **kwargs)
        self.store = {}

    def get(self, key):
        return self.store.get(key)

    def mget(self, keys):
        return [self.store.get(k) for k in keys]

    def set(self, key, value):
        self.store[key] = value

    def delete(self, key):
        self.store.pop(key, None)


def make_app():
    app = Celery("fixtures", broker="memory://", set_as_current=True)
    app._local.backend = CaptureBackend(app)  # app.backend reads this thread-local in 5.2
    app.thread_oid  # noqa: B018 (force creation, then pin)
    app._thread_oid = "fixture-oid"  # stable reply_to
    app.conf.task_send_sent_event = False
    return app


captured = []


def _capture_publish(self, body, priority, content_type, content_encoding, headers, properties,
                     routing_key, mandatory, immediate, exchange, declare, timeout=None):
    props = dict(properties)
    props["priority"] = priority
    props["content_type"] = content_type
    props["content_encoding"] = content_encoding
    captured.append({"body": body, "headers": dict(headers), "properties": props,
                     "routing_key": routing_key, "exchange": exchange})


Producer._publish = _capture_publish


def capture(app, **send):
    captured.clear()
    name = send.pop("name", TASK)
    app.send_task(name, **send)
    msg = captured[-1]
    msg["headers"]["origin"] = "gen1@fixture"
    props = msg["properties"]
    props["reply_to"] = "fixture-oid"
    body = msg["body"]
    if isinstance(body, bytes):
        body = body.decode("utf-8")
    return {
        "properties": {k: props.get(k) for k in ("content_type", "content_encoding",
                                                 "correlation_id", "priority", "delivery_mode",
                                                 "reply_to")},
        "headers": msg["headers"],
        "body": body,
    }


def to_kombu_message(env, app):
    body = env["body"].encode("utf-8")
    props = dict(env["properties"])
    return Message(body=body, content_type=props.pop("content_type"),
                   content_encoding=props.pop("content_encoding"), properties=props,
                   headers=env["headers"], delivery_info={"exchange": "",
                                                          "routing_key": "celery"},
                   accept=["application/json"], channel=None)


def run_in_worker(app, env):
    """Executes a message as a Celery 5.2.6 worker would (in-process) and returns the stored meta."""
    req = Request(to_kombu_message(env, app), app=app, hostname="fixture@host")
    if req.revoked():  # expired messages are revoked here, as in the worker's strategy
        pass
    else:
        req.execute()
    raw = app.backend.store[app.backend.get_key_for_task(req.id)]
    return req, raw.decode("utf-8") if isinstance(raw, bytes) else raw


def register_tasks(app):
    @app.task(name=TASK)
    def run_mineru_inference(*args, **kwargs):
        if kwargs.get("fail"):
            raise ValueError(kwargs["fail"])
        return {"a": [1, 2.5, None, True], "b": {"c": "x\u00e9\u4e2d\U0001f600", "d": []},
                "e": 1e20, "f": 0.0001, "g": -3}

    return run_mineru_inference


UTC = _dt.timezone.utc
ENVELOPES = {
    "envelope_plain": dict(task_id="11111111-1111-4111-8111-111111111111",
                           args=["doc-123", 2], kwargs={"dpi": 200, "lang": "en"}),
    "envelope_priority": dict(task_id="22222222-2222-4222-8222-222222222222",
                              args=["doc-\u00e9"], kwargs={}, priority=7),
    "envelope_eta": dict(task_id="33333333-3333-4333-8333-333333333333", args=[],
                         kwargs={"x": None},
                         eta=_dt.datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)),
    "envelope_expires": dict(task_id="44444444-4444-4444-8444-444444444444", args=[1],
                             kwargs={},
                             expires=_dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)),
    "envelope_retries": dict(task_id="55555555-5555-4555-8555-555555555555", args=[[1, 2]],
                             kwargs={"nested": {"k": [True, False]}}, retries=3),
}


def generate(outdir):
    os.makedirs(outdir, exist_ok=True)
    backend_base.datetime = _FixedClock
    app = make_app()
    register_tasks(app)

    def write(name, obj):
        with open(os.path.join(outdir, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False, sort_keys=True)
            f.write("\n")

    envs = {}
    for name, send in ENVELOPES.items():
        env = capture(app, **dict(send))
        inputs = {"task": TASK, "id": send["task_id"], "args": send["args"],
                  "kwargs": send["kwargs"], "options": {}}
        for key in ("priority", "retries"):
            if key in send:
                inputs["options"][key] = send[key]
        for key in ("eta", "expires"):
            if key in send:
                inputs["options"][key] = send[key].isoformat()
        env["inputs"] = inputs
        envs[name] = env
        write(name, env)

    # A chain: the first task carries the rest of the chain in the body's embed.
    sig_a = app.signature(TASK, args=["doc-1"], task_id="66666666-6666-4666-8666-666666666666")
    sig_b = app.signature("postprocess", args=[], kwargs={"k": 1})
    captured.clear()
    (sig_a | sig_b).apply_async()
    first = [m for m in captured if m["headers"]["task"] == TASK][-1]
    first["headers"]["origin"] = "gen1@fixture"
    first["properties"]["reply_to"] = "fixture-oid"
    body = first["body"].decode("utf-8") if isinstance(first["body"], bytes) else first["body"]
    # The chained signature gets a fresh uuid each run; pin it.
    embed = json.loads(body)[2]
    for sig in embed.get("chain") or []:
        sig["options"]["task_id"] = "77777777-7777-4777-8777-777777777777"
        sig["options"]["reply_to"] = "fixture-oid"
    args, kwargs, _ = json.loads(body)
    body = kombu.utils.json.dumps([args, kwargs, embed])
    props = first["properties"]
    write("envelope_chain", {
        "properties": {k: props.get(k) for k in ("content_type", "content_encoding",
                                                 "correlation_id", "priority",
                                                 "delivery_mode", "reply_to")},
        "headers": first["headers"], "body": body})

    # Result metas, written by a real Request executing the task in-process.
    succ = dict(envs["envelope_plain"])
    succ["headers"] = dict(succ["headers"], group="g-1", parent_id="p-1")
    _, raw = run_in_worker(app, succ)
    write("meta_success", {"task_id": ENVELOPES["envelope_plain"]["task_id"], "raw": raw})

    fail_env = capture(app, task_id="88888888-8888-4888-8888-888888888888", args=["doc"],
                       kwargs={"fail": "bad page"})
    _, raw = run_in_worker(app, fail_env)
    # The traceback names this script; keep the checkout's location out of the fixture.
    raw = raw.replace(os.path.dirname(os.path.abspath(__file__)), "tests/celery")
    write("meta_failure", {"task_id": "88888888-8888-4888-8888-888888888888", "raw": raw})

    _, raw = run_in_worker(app, envs["envelope_expires"])
    write("meta_revoked", {"task_id": ENVELOPES["envelope_expires"]["task_id"], "raw": raw})
    print(f"wrote fixtures to {outdir} (celery {celery.__version__}, kombu {kombu.__version__})")


def _text(body):
    return body.decode("utf-8") if isinstance(body, bytes) else body


def tool(path, mode, payload):
    out = subprocess.run([path, mode], input=json.dumps(payload).encode(), capture_output=True,
                         check=False)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed ({out.returncode}): {out.stderr.decode()}")
    return json.loads(out.stdout)


def interop(tool_path):
    """Fresh messages from Celery decoded by our codec; our messages executed by a Celery Request."""
    app = make_app()
    register_tasks(app)
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    for name, send in ENVELOPES.items():
        send = dict(send, task_id=None)  # fresh uuid and origin from the library
        send.pop("task_id")
        captured.clear()
        result = app.send_task(TASK, **send)
        msg = captured[-1]
        env = {"properties": dict(msg["properties"]), "headers": msg["headers"],
               "body": _text(msg["body"])}
        ours = tool(tool_path, "decode", env)
        check(f"{name} id", ours.get("id"), result.id)
        check(f"{name} args", ours.get("args"), send["args"])
        check(f"{name} kwargs", ours.get("kwargs"), send["kwargs"])
        # kombu sends priority 0 when none is given.
        check(f"{name} priority", ours.get("priority"), send.get("priority", 0))
        check(f"{name} retries", ours.get("retries"), send.get("retries", 0))
        for key in ("eta", "expires"):
            want = send[key].isoformat() if key in send else None
            check(f"{name} {key}", ours.get(key), want)

        # Our encoding of the same inputs, executed by Celery's worker Request.
        inputs = {"task": TASK, "id": f"ours-{name}", "args": send["args"],
                  "kwargs": send["kwargs"], "options": {}}
        for key in ("priority", "retries"):
            if key in send:
                inputs["options"][key] = send[key]
        for key in ("eta", "expires"):
            if key in send:
                inputs["options"][key] = send[key].isoformat()
        our_env = tool(tool_path, "encode", inputs)
        req = Request(to_kombu_message(our_env, app), app=app, hostname="interop@host")
        check(f"{name} celery id", req.id, inputs["id"])
        check(f"{name} celery args", list(req.args), send["args"])
        check(f"{name} celery kwargs", req.kwargs, send["kwargs"])
        for key, parsed in (("eta", req.eta), ("expires", req.expires)):
            check(f"{name} celery {key}", parsed and parsed.isoformat(),
                  inputs["options"].get(key))
        check(f"{name} celery retries", req.request_dict.get("retries"), send.get("retries", 0))
        check(f"{name} celery priority", req.delivery_info.get("priority"),
              send.get("priority", 0))
        if name == "envelope_plain":
            req.execute()
            meta = app.backend.get_task_meta(inputs["id"])
            check("executed status", meta["status"], "SUCCESS")

    # Our result meta read by Celery's AsyncResult.
    for status, result in (("SUCCESS", {"pages": [1, 2], "md": "# T\u00e9"}),
                           ("FAILURE", "bad page"), ("REVOKED", "expired")):
        task_id = f"meta-{status}"
        raw = tool(tool_path, "meta", {"status": status, "result": result, "id": task_id})
        app.backend.set(app.backend.get_key_for_task(task_id), raw["raw"].encode("utf-8"))
        res = app.AsyncResult(task_id)
        check(f"{status} state", res.state, status)
        if status == "SUCCESS":
            check("success result", res.get(timeout=1), result)
        elif status == "FAILURE":
            try:
                res.get(timeout=1)
                failures.append("FAILURE: get() did not raise")
            except ValueError as exc:
                check("failure exception", str(exc), "bad page")
        else:
            exc = res.result
            check("revoked exception", type(exc).__name__, "TaskRevokedError")
            check("revoked reason", str(exc), "expired")
        check(f"{status} date_done parses", res.date_done is not None, True)

    # A chain must be refused by our decoder, not run half-way.
    captured.clear()
    (app.signature(TASK, args=["x"]) | app.signature("b")).apply_async()
    msg = [m for m in captured if m["headers"]["task"] == TASK][-1]
    env = {"properties": dict(msg["properties"]), "headers": msg["headers"],
           "body": _text(msg["body"])}
    out = subprocess.run([tool_path, "decode"], input=json.dumps(env).encode(),
                         capture_output=True, check=False)
    if out.returncode == 0 or b"unsupported" not in out.stdout + out.stderr:
        failures.append(f"chain not refused: {out.stdout!r} {out.stderr!r}")

    if failures:
        print("\n".join(failures))
        return 1
    print(f"interop ok with celery {celery.__version__}, kombu {kombu.__version__}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("generate", "interop"):
        print(__doc__ or "usage: celery_fixtures.py generate DIR | interop TOOL")
        sys.exit(2)
    if sys.argv[1] == "generate":
        generate(sys.argv[2])
    else:
        sys.exit(interop(sys.argv[2]))
