#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed inputs of fuzz/corpus/<target>/seed-*: a few small valid inputs per target,
from the test data (tests/data/celery, tests/data/tokenizer) and the formats' own rules (images
drawn with Debian's Pillow 9.4). Run it from anywhere; it rewrites only the seed-* files, so the
inputs the fuzzer found (and every crash ever found) stay. Deterministic: the same files every
run.

    /usr/bin/python3 fuzz/make_seeds.py
"""

import base64
import io
import json
import pathlib
import struct

from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
DATA = ROOT / "tests" / "data"


def write(target, name, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (folder / f"seed-{name}").write_bytes(data)


def clear_seeds():
    for path in CORPUS.glob("*/seed-*"):
        path.unlink()


# --- images -----------------------------------------------------------------------------------


def picture(mode, size=(7, 5)):
    image = Image.new("RGB", size)
    for y in range(size[1]):
        for x in range(size[0]):
            image.putpixel((x, y), (x * 36 % 256, y * 50 % 256, (x + y) * 20 % 256))
    if mode == "RGB":
        return image
    if mode == "P":
        return image.quantize(8)
    if mode == "I;16":
        return image.convert("L").convert("I").point(lambda v: v * 257).convert("I;16")
    return image.convert(mode)


def exif(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    return e.tobytes()


def encode(image, fmt, **options):
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def images():
    seeds = {
        "png": {
            "rgb": encode(picture("RGB"), "PNG"),
            "rgba": encode(picture("RGBA"), "PNG"),
            "palette": encode(picture("P"), "PNG", transparency=0),
            "gray": encode(picture("L"), "PNG"),
            "gray16": encode(picture("I;16"), "PNG"),
            "bilevel": encode(picture("1"), "PNG"),
            "interlaced": encode(picture("RGB"), "PNG", interlace=1),
            "exif6": encode(picture("RGB"), "PNG", exif=exif(6)),
        },
        "jpeg": {
            "baseline": encode(picture("RGB"), "JPEG", quality=80),
            "progressive": encode(picture("RGB"), "JPEG", progressive=True),
            "gray": encode(picture("L"), "JPEG"),
            "cmyk": encode(picture("CMYK"), "JPEG"),
            "exif8": encode(picture("RGB"), "JPEG", exif=exif(8)),
            "444": encode(picture("RGB"), "JPEG", subsampling=0),
        },
        "webp": {
            "lossy": encode(picture("RGB"), "WEBP", quality=70),
            "lossless": encode(picture("RGB"), "WEBP", lossless=True),
            "alpha": encode(picture("RGBA"), "WEBP", lossless=True),
            "exif3": encode(picture("RGB"), "WEBP", exif=exif(3)),
            "animated": encode(picture("RGB"), "WEBP", save_all=True,
                               append_images=[picture("L").convert("RGB")], duration=100),
        },
        "tiff": {
            "raw": encode(picture("RGB"), "TIFF"),
            "lzw": encode(picture("RGB"), "TIFF", compression="tiff_lzw"),
            "deflate": encode(picture("RGBA"), "TIFF", compression="tiff_adobe_deflate"),
            "packbits": encode(picture("L"), "TIFF", compression="packbits"),
            "gray16": encode(picture("I;16"), "TIFF"),
            "cmyk": encode(picture("CMYK"), "TIFF"),
            "bilevel-g4": encode(picture("1"), "TIFF", compression="group4"),
            "palette": encode(picture("P"), "TIFF"),
            "exif5": encode(picture("RGB"), "TIFF", exif=exif(5)),
        },
        "bmp": {
            "rgb24": encode(picture("RGB"), "BMP"),
            "palette8": encode(picture("P"), "BMP"),
            "gray": encode(picture("L"), "BMP"),
            "bilevel": encode(picture("1"), "BMP"),
            "rgba32": encode(picture("RGBA"), "BMP"),
        },
        "gif": {
            "static": encode(picture("P"), "GIF"),
            "transparent": encode(picture("P"), "GIF", transparency=2),
            "animated": encode(picture("P"), "GIF", save_all=True,
                               append_images=[picture("L").convert("P")], duration=50, loop=0),
            "interlaced": encode(picture("P", (16, 12)), "GIF", interlace=True),
        },
    }
    for fmt, files in seeds.items():
        for name, data in files.items():
            write(f"image_{fmt}", name, data)
    return seeds


# --- service ----------------------------------------------------------------------------------


def http_requests():
    body = '{"model":"mineru","messages":[{"role":"user","content":"hi"}]}'
    seeds = {
        "get": "GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "params": "GET /tasks/0b2f/result/a.md?x=1&y HTTP/1.1\r\nHost: h\r\n"
                  "Accept: a\r\nAccept: b\r\n\r\n",
        "post": f"POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\nContent-Type: application/json"
                f"\r\nContent-Length: {len(body)}\r\n\r\n{body}",
        "chunked": "POST /tasks HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n",
        "pipelined": "GET /tasks/a HTTP/1.1\r\nHost: h\r\n\r\nHEAD /tasks/a HTTP/1.1\r\nHost: h\r\n"
                     "\r\nDELETE /tasks/a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
        "http10": "GET /v1/models HTTP/1.0\r\n\r\n",
        "not-found": "GET /nope HTTP/1.1\r\nHost: h\r\n\r\nPUT /tasks HTTP/1.1\r\nHost: h\r\n"
                     "Content-Length: 2\r\n\r\nab",
        "events": "POST /events?name HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\na\nb\r\nc\rd",
        "stream": "GET /tasks/a/events?since=3 HTTP/1.1\r\nHost: h\r\n\r\n",
        "expect": "POST /tasks HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                  "Content-Length: 3\r\n\r\nabc",
        "te-gzip": "POST /tasks HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n"
                   "GET /health/live HTTP/1.1\r\nHost: h\r\n\r\n",
        "cl-te": "POST /tasks HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    }
    for name, data in seeds.items():
        write("http_request", name, data)
    # The head parser alone reads the same requests, plus the codings the server refuses.
    seeds["te-chunked-gzip"] = ("POST /tasks HTTP/1.1\r\nHost: h\r\n"
                                "Transfer-Encoding: chunked, gzip\r\n\r\n")
    seeds["te-gzip-chunked"] = ("POST /tasks HTTP/1.1\r\nHost: h\r\n"
                                "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")
    seeds["header-fold"] = "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n"
    for name, data in seeds.items():
        write("http_head", name, data)


def multipart():
    ct = "multipart/form-data; boundary=XyZ"
    seeds = {
        "fields": ct + "\n--XyZ\r\nContent-Disposition: form-data; name=\"backend\"\r\n\r\n"
                       "vlm\r\n--XyZ\r\nContent-Disposition: form-data; name=\"return_md\"\r\n\r\n"
                       "true\r\n--XyZ\r\nContent-Disposition: form-data; name=\"start_page_id\""
                       "\r\n\r\n-12\r\n--XyZ--\r\n",
        "file": ct + "\nignored preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"files\";"
                     " filename=\"C:\\\\docs\\\\a b.pdf\"\r\nContent-Type: application/pdf\r\n\r\n"
                     "%PDF-1.7\r\n--XyZ--\r\nepilogue",
        "filename-star": "multipart/form-data; BOUNDARY=\"a'b\"\n--a'b\r\nContent-Disposition: "
                         "form-data; name=files; filename=\"x.pdf\"; filename*=UTF-8''%E6%96%87"
                         "%2E.pdf\r\nX-Other: 1\r\n\r\n\r\n--a'b \t\r\n"
                         "Content-Disposition: form-data; name=\"n\"\r\n\r\n--a'b-\r\n--a'b--",
        "empty": ct + "\n--XyZ--",
    }
    for name, data in seeds.items():
        write("multipart", name, data)


def chat_requests(image_seeds):
    png = base64.b64encode(image_seeds["png"]["rgb"]).decode()
    jpeg = base64.b64encode(image_seeds["jpeg"]["exif8"]).decode()
    seeds = {
        "text": {"model": "mineru", "messages": [{"role": "user", "content": "Hello"}]},
        "image": {
            "model": "mineru",
            "messages": [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + png}},
                    {"type": "text", "text": "\nLayout Detection:"}]}],
            "temperature": 0.0, "top_p": 0.01, "top_k": 1, "max_completion_tokens": 4096,
            "max_tokens": 4096, "skip_special_tokens": False,
            "vllm_xargs": {"no_repeat_ngram_size": 100, "debug": True},
            "presence_penalty": 0.0, "frequency_penalty": 0.0, "repetition_penalty": 1.0,
        },
        "stream": {
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "a"},
                {"type": "image_url", "image_url": "data:image/jpeg;base64," + jpeg},
                {"type": "text", "text": "b"}]},
                {"role": "assistant", "content": None}],
            "stream": True, "stream_options": {"include_usage": True}, "stop": ["</s>", ""],
            "priority": -3, "seed": 7, "n": 1,
        },
        "refused": {"model": "other", "messages": []},
    }
    for name, data in seeds.items():
        write("chat_request", name, json.dumps(data))


def data_urls(image_seeds):
    seeds = {
        "png": "data:image/png;base64," + base64.b64encode(image_seeds["png"]["rgb"]).decode(),
        "params": "data:text/plain;charset=utf-8;base64,SGVsbG8=",
        "empty": "data:;base64,",
        "padding": "data:image/gif;base64,R0lGOD==",
    }
    for name, data in seeds.items():
        write("data_url", name, data)


# --- model server answers, Retry-After values and base URLs (--model-server) ------------------


def model_server_answers():
    seeds = {
        "stop": '{"choices":[{"finish_reason":"stop","message":{"content":"abc<|im_end|>"}}],'
        '"usage":{"prompt_tokens":12,"completion_tokens":3}}',
        "length": '{"choices":[{"finish_reason":"length","message":{"content":null}}]}',
        "error": '{"object":"error","message":"x"}',
        "no-choices": '{"choices":[]}',
        "tool-calls": '{"choices":[{"finish_reason":"tool_calls","message":{"content":"a"}}]}',
        "retry-seconds": "120",
        "retry-date": "Wed, 21 Oct 2026 07:28:00 GMT",
        "retry-rfc850": "Wednesday, 21-Oct-26 07:28:00 GMT",
        "retry-asctime": "Wed Oct 21 07:28:00 2026",
        "url": "http://gpu-1:30000/v1/",
        "url-prefix": "https://models.example/mineru/",
        "url-ipv6": "http://[::1]:8000",
    }
    for name, data in seeds.items():
        write("model_server_answer", name, data)


# --- PDF helper protocol ----------------------------------------------------------------------


def frame(kind, payload=b""):
    return struct.pack("<IHHQ", 0x444E524D, 1, kind, len(payload)) + payload


def pdf_protocol():
    open_ = frame(1, struct.pack("<I", 6) + b"secret")
    render = frame(2, struct.pack("<IdII", 3, 2.5, 1000, 1400))
    close = frame(3)
    box = struct.pack("<4dBBBB", 10, 20, 110, 80, 255, 0, 0, 1)
    number = struct.pack("<4dI", 10, 20, 30, 40, 7)
    layout = frame(4, struct.pack("<IIII", 1, 0, 1, 1) + box + number)
    finish = frame(5)
    info = frame(0x81, struct.pack("<I", 2) + struct.pack("<ddI", 595.0, 842.0, 0) +
                 struct.pack("<ddI", 842.0, 595.0, 90))
    page = frame(0x82, struct.pack("<IIId", 0, 2, 1, 1.5) + bytes(range(6)))
    error = frame(0x83, struct.pack("<II", 3, 0xFFFFFFFF) + b"damaged PDF\n")
    data = frame(0x84, b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    done = frame(0x85, struct.pack("<II", 0, 1)) + frame(0x85, struct.pack("<II", 0xFFFFFFFF, 0))
    write("pdf_protocol", "client", open_ + render + layout + finish + close)
    write("pdf_protocol", "helper", info + page + error + data + done)


# --- cache, tasks and celery ------------------------------------------------------------------


def shortstr(s):
    s = s.encode() if isinstance(s, str) else s
    return struct.pack("B", len(s)) + s


def longstr(s):
    s = s.encode() if isinstance(s, str) else s
    return struct.pack(">I", len(s)) + s


def amqp_value(v):
    if v is None:
        return b"V"
    if isinstance(v, bool):
        return b"t" + struct.pack("B", 1 if v else 0)
    if isinstance(v, int):
        return b"I" + struct.pack(">i", v) if -2**31 <= v < 2**31 else b"l" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"d" + struct.pack(">d", v)
    if isinstance(v, str):
        return b"S" + longstr(v)
    if isinstance(v, list):
        items = b"".join(amqp_value(x) for x in v)
        return b"A" + struct.pack(">I", len(items)) + items
    if isinstance(v, dict):
        return b"F" + amqp_table(v)
    raise TypeError(v)


def amqp_table(d):
    entries = b"".join(shortstr(k) + amqp_value(v) for k, v in d.items())
    return struct.pack(">I", len(entries)) + entries


def amqp_properties(p, headers):
    # AMQP 0-9-1 basic properties: 16 flag bits, then the fields they name, in order.
    flags, fields = 0, b""
    if "content_type" in p:
        flags |= 1 << 15
        fields += shortstr(p["content_type"])
    if "content_encoding" in p:
        flags |= 1 << 14
        fields += shortstr(p["content_encoding"])
    if headers is not None:
        flags |= 1 << 13
        fields += amqp_table(headers)
    if "delivery_mode" in p:
        flags |= 1 << 12
        fields += struct.pack("B", p["delivery_mode"])
    if "priority" in p:
        flags |= 1 << 11
        fields += struct.pack("B", p["priority"])
    if "correlation_id" in p:
        flags |= 1 << 10
        fields += shortstr(p["correlation_id"])
    if "reply_to" in p:
        flags |= 1 << 9
        fields += shortstr(p["reply_to"])
    if "expiration" in p:
        flags |= 1 << 8
        fields += shortstr(p["expiration"])
    if "message_id" in p:
        flags |= 1 << 7
        fields += shortstr(p["message_id"])
    return struct.pack(">H", flags) + fields


def celery():
    for path in sorted((DATA / "celery").glob("envelope_*.json")):
        envelope = json.loads(path.read_text())
        name = path.stem.removeprefix("envelope_")
        headers = json.dumps(envelope["headers"]).encode()
        write("celery_message", name, headers + b"\0" + envelope["body"].encode())
        write("amqp_properties", name,
              amqp_properties(envelope["properties"], envelope["headers"]))
    write("amqp_properties", "types",
          amqp_properties({"content_type": "text/plain", "message_id": "m", "expiration": "6000"},
                          {"i8": None, "list": [1, 2.5, [True, {"k": "v"}]], "big": 2**40}))


def put_u64(v):
    return struct.pack("<Q", v)


def document(name, images=()):
    # cache/document_codec.h, version 3.
    fields = [name, "# Title\n", '{"pdf_info": []}', "[]", "[]", "{}", "[]", ""]
    out = b"MDOC" + struct.pack("<I", 3)
    for f in fields:
        out += put_u64(len(f.encode())) + f.encode()
    out += put_u64(len(images))
    for file_name, data in images:
        out += put_u64(len(file_name)) + file_name.encode() + put_u64(len(data)) + data
    return out


def document_outputs(image_seeds):
    one = document("report", [("a.jpg", image_seeds["jpeg"]["baseline"][:64]), ("b.jpg", b"\xff")])
    two = document("empty")
    write("document_outputs", "document", one)
    write("document_outputs", "document-empty", two)
    task = b"MTSK" + struct.pack("<I", 1) + put_u64(2)
    for d in (one, two):
        task += put_u64(len(d)) + d
    write("document_outputs", "task", task)


def shared_tasks():
    base = {
        "format": 1, "id": "0b2f8c1e-3d4a-4b5c-9d6e-7f8091a2b3c4",
        "node": "11111111-2222-4333-8444-555555555555", "version": 7, "status": "processing",
        "file_names": ["a.pdf", "b.png"], "documents": ["a", "b"],
        "options": {"formula": True, "table": False, "image_analysis": None, "start_page": 1,
                    "end_page": None},
        "created_at_ms": 1714980000000, "started_at_ms": 1714980001000, "completed_at_ms": None,
        "error": None, "queued_ahead": 0,
        "progress": {"documents_done": 1, "documents_total": 2, "pages_done": 3,
                     "pages_total": 9, "blocks_done": 40, "generated_tokens": 1234},
        "cache_hits": 0, "near_duplicates": [], "annotation": "",
    }
    write("shared_task", "processing", json.dumps(base))
    done = dict(base, status="failed", completed_at_ms=1714980009000, error="page 3: corrupt",
                near_duplicates=["a"], annotation="x")
    write("shared_task", "failed", json.dumps(done))


# --- model and text ---------------------------------------------------------------------------


def safetensors():
    tensors = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]},
        "b": {"dtype": "F32", "shape": [], "data_offsets": [12, 16]},
        "c": {"dtype": "I64", "shape": [0, 5], "data_offsets": [16, 16]},
    }
    header = json.dumps(tensors, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    write("safetensors", "three", struct.pack("<Q", len(header)) + header + bytes(range(16)))


def weights_files():
    """An int8 file (quantize) and a panels file (pack), each of one tensor, for checkpoint "fp"."""

    def file(magic, header, tensor_bytes):
        text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
        offset = header["tensors"]["t"]["offset"]
        prefix = magic + struct.pack("<Q", len(text)) + text
        return prefix + b"\0" * (offset - len(prefix)) + tensor_bytes

    q8 = {"fingerprint": "fp", "format": 1, "group": 32, "layout": "q8-panels-16",
          "tensors": {"t": {"bytes": 576, "cols": 32, "offset": 4096, "rows": 16}}}
    # 16 x 32 weight bytes (stored + 128), then 16 float32 scales of 1/127.
    write("weights_file", "int8", file(b"MINERUQ8", q8,
                                       bytes(range(128, 256)) * 4 + struct.pack("<16f", *[1 / 127] * 16)))
    panels = {"depth_block": 1024, "fingerprint": "fp", "format": 1, "layout": "panels-32",
              "panel_cols": 32,
              "tensors": {"t": {"bytes": 512, "cols": 8, "dtype": "BF16", "offset": 4096,
                                "rows": 20}}}
    write("weights_file", "panels", file(b"MINERUPK", panels, bytes(range(256)) * 2))


def tokenizer():
    fixture = (DATA / "tokenizer" / "fixture_tokenizer.json").read_bytes()
    write("tokenizer_load", "fixture", fixture)
    texts = {
        "plain": "Hello world, 123 tokens!",
        "added": "<|im_start|>user\n<lstrip>  x  <rstrip> café é! start[MASK]zz<|im_end|>",
        "unicode": "e\u0301 \u00e9 \u4e2d\u6587 \U0001f600 \t\r\n  \u00a0x",
        "broken-utf8": b"ab\xff\xc3(\xe2\x82",
    }
    for i, line in enumerate((DATA / "tokenizer" / "qwen_expected.jsonl").open()):
        if i >= 3:
            break
        texts[f"qwen-{i}"] = json.loads(line)["text"]
    for flags, (name, text) in enumerate(texts.items()):
        text = text.encode() if isinstance(text, str) else text
        write("tokenizer_encode", name, bytes([flags % 4]) + text)


def main():
    clear_seeds()
    image_seeds = images()
    http_requests()
    multipart()
    chat_requests(image_seeds)
    data_urls(image_seeds)
    model_server_answers()
    pdf_protocol()
    celery()
    document_outputs(image_seeds)
    shared_tasks()
    safetensors()
    weights_files()
    tokenizer()


if __name__ == "__main__":
    main()
