#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A plain Celery client (Debian's python3-celery 5.2.6) for the worker's end-to-end test: what a
Python team's code does to call `run_mineru_inference` and read its result. Prints one JSON object.

  celery_client.py BROKER BACKEND run FILE [--kwargs JSON] [--task NAME] [--priority N]
                   [--expires-in SECONDS] [--timeout SECONDS] [--id TASK_ID]
  celery_client.py BROKER BACKEND send FILE [same options]   -> {"id"}
  celery_client.py BROKER BACKEND get ID [--timeout SECONDS] -> {"status", "result"|"exc_type", "message"}
  celery_client.py BROKER BACKEND count QUEUE                -> {"messages"}
  celery_client.py BROKER BACKEND revoke ID [--terminate]    -> {"revoked"}
      AsyncResult(ID).revoke(terminate=...): Celery's remote control, broadcast to every worker
  celery_client.py BROKER BACKEND declare-pidbox HOSTNAME    -> {"queue", "consumers"}
      declares the worker's remote control exchange and queue as kombu does: fails
      (PRECONDITION_FAILED) unless the worker declared them identically
"""
import argparse
import base64
import datetime
import json
import sys

from celery import Celery


def outcome(app, task_id, timeout):
    result = app.AsyncResult(task_id)
    value = result.get(timeout=timeout, propagate=False)
    if result.status == "SUCCESS":
        return {"id": task_id, "status": "SUCCESS", "result": value}
    return {"id": task_id, "status": result.status, "exc_type": type(value).__name__,
            "message": str(value)}


def send(app, args):
    with open(args.target, "rb") as f:
        document = base64.b64encode(f.read()).decode("ascii")
    options = {}
    if args.priority is not None:
        options["priority"] = args.priority
    if args.expires_in is not None:
        options["expires"] = (datetime.datetime.utcnow() +
                              datetime.timedelta(seconds=args.expires_in))
    if args.id is not None:
        options["task_id"] = args.id
    return app.send_task(args.task, args=[document], kwargs=json.loads(args.kwargs), **options).id


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("broker")
    parser.add_argument("backend")
    parser.add_argument("command",
                        choices=["run", "send", "get", "count", "revoke", "declare-pidbox"])
    parser.add_argument("target")
    parser.add_argument("--kwargs", default="{}")
    parser.add_argument("--task", default="run_mineru_inference")
    parser.add_argument("--priority", type=int)
    parser.add_argument("--expires-in", type=float)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--terminate", action="store_true")
    parser.add_argument("--id")
    args = parser.parse_args()
    app = Celery("client", broker=args.broker, backend=args.backend)
    if args.command == "count":
        with app.connection_for_write() as conn:
            declared = conn.default_channel.queue_declare(args.target, passive=True)
            print(json.dumps({"messages": declared.message_count}))
        return 0
    if args.command == "revoke":
        app.AsyncResult(args.target).revoke(terminate=args.terminate)
        print(json.dumps({"revoked": args.target}))
        return 0
    if args.command == "declare-pidbox":
        with app.connection_for_write() as conn:
            channel = conn.default_channel
            queue = app.control.mailbox.get_queue(args.target)(channel)
            queue.exchange.declare()
            name, _, consumers = queue.queue_declare()
            print(json.dumps({"queue": name, "consumers": consumers}))
        return 0
    if args.command == "get":
        print(json.dumps(outcome(app, args.target, args.timeout)))
        return 0
    task_id = send(app, args)
    if args.command == "send":
        print(json.dumps({"id": task_id}))
        return 0
    print(json.dumps(outcome(app, task_id, args.timeout)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
