#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Validates the files `mineru-cpp parse` writes against schemas/*.schema.json.

    python3 tools/validate-outputs.py OUTPUT_DIR...

Walks each directory recursively and checks every <stem>_middle.json, <stem>_content_list.json,
<stem>_content_list_v2.json (when present), <stem>_model.json and <stem>_report.json against the
schema of its kind (JSON Schema draft 2020-12, the `jsonschema` module, 4.10 or newer). The
schemas accept both output generations (MinerU 2.7.6 and 3.4.4). Every image_path in a
middle.json, every img_path in a content_list.json and every image_source path in a
content_list_v2.json must also name a file under the sibling images/ folder (an empty path, or
"images/" in content_list_v2.json, means no crop was written and is allowed).

Prints one line per file, then each error with its JSON path. Exit status: 1 when any file
fails (or a directory is missing), else 2 when a directory holds no output files, else 0.
"""

import argparse
import json
import os
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:  # pragma: no cover
    sys.exit("validate-outputs: the jsonschema module is needed (Debian: python3-jsonschema)")

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "schemas")

# File name suffix -> kind (= schemas/<kind>.schema.json).
KINDS = {
    "_middle.json": "middle",
    "_content_list.json": "content_list",
    "_content_list_v2.json": "content_list_v2",
    "_model.json": "model",
    "_report.json": "report",
}


def load_validators():
    validators = {}
    for kind in sorted(set(KINDS.values())):
        path = os.path.join(SCHEMA_DIR, kind + ".schema.json")
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
        validators[kind] = Draft202012Validator(schema)
    return validators


def kind_of(name):
    for suffix, kind in KINDS.items():
        if name.endswith(suffix) and len(name) > len(suffix):
            return kind
    return None


def json_path(parts):
    out = "$"
    for p in parts:
        out += "[%d]" % p if isinstance(p, int) else "." + str(p)
    return out


def schema_errors(validator, doc):
    """(path, message) for every error; for a failed oneOf/anyOf, the errors of its branches."""
    out = []

    def add(error):
        if error.validator in ("oneOf", "anyOf") and error.context:
            for sub in error.context:
                add(sub)
            return
        message = error.message
        if error.validator == "not":
            message = "must not match %s" % json.dumps(error.validator_value)
        elif len(message) > 240:  # messages that quote a whole block
            message = message[:200] + " ... " + message[-35:]
        out.append((json_path(error.absolute_path), message))

    for error in validator.iter_errors(doc):
        add(error)
    seen = set()
    unique = []
    for e in sorted(out, key=lambda e: (e[0], e[1])):
        if e not in seen:
            seen.add(e)
            unique.append(e)
    return unique


def walk_paths(node, key, parts=()):
    """(json path parts, value) for every string value of `key` anywhere in `node`."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, str):
                yield parts + (k,), v
            else:
                yield from walk_paths(v, key, parts + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_paths(v, key, parts + (i,))


def image_errors(kind, doc, directory):
    """Errors for image paths that name no file under <directory>/images/."""
    if kind == "middle":
        key, prefix = "image_path", ""
    elif kind == "content_list":
        key, prefix = "img_path", "images/"
    elif kind == "content_list_v2":
        key, prefix = "path", "images/"
    else:
        return []
    images = os.path.realpath(os.path.join(directory, "images"))
    out = []
    for parts, value in walk_paths(doc, key):
        if value == "" or (kind == "content_list_v2" and value == prefix):
            continue
        if prefix and not value.startswith(prefix):
            out.append((json_path(parts), "%r is not under %s" % (value, prefix)))
            continue
        target = os.path.realpath(os.path.join(images, value[len(prefix):]))
        if not target.startswith(images + os.sep):
            out.append((json_path(parts), "%r leaves the images/ folder" % value))
        elif not os.path.isfile(target):
            out.append((json_path(parts), "%r: no such file in %s" % (value, images)))
    return out


def check_file(path, kind, validator):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return [("$", "cannot read JSON: %s" % e)]
    return schema_errors(validator, doc) + image_errors(kind, doc, os.path.dirname(path))


def main():
    parser = argparse.ArgumentParser(
        description="Validate mineru-cpp parse outputs against schemas/*.schema.json.")
    parser.add_argument("dirs", nargs="+", metavar="OUTPUT_DIR")
    args = parser.parse_args()
    validators = load_validators()

    failed = empty = False
    files = bad_files = 0
    for top in args.dirs:
        if not os.path.isdir(top):
            print("FAIL %s: not a directory" % top)
            failed = True
            continue
        found = 0
        for root, subdirs, names in os.walk(top):
            subdirs.sort()
            for name in sorted(names):
                kind = kind_of(name)
                if kind is None:
                    continue
                found += 1
                path = os.path.join(root, name)
                errors = check_file(path, kind, validators[kind])
                if errors:
                    failed = True
                    bad_files += 1
                    print("FAIL %s (%s): %d error(s)" % (path, kind, len(errors)))
                    for where, message in errors:
                        print("  %s: %s" % (where, message))
                else:
                    print("ok   %s (%s)" % (path, kind))
        if found == 0:
            print("NONE %s: no *_middle.json, *_content_list.json, *_content_list_v2.json, "
                  "*_model.json or *_report.json files" % top)
            empty = True
        files += found
    print("%d file(s) checked, %d failed" % (files, bad_files))
    if failed:
        return 1
    return 2 if empty else 0


if __name__ == "__main__":
    sys.exit(main())
