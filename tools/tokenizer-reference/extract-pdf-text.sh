#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Extracts the text layer of each PDF given, twice: in reading order and with -layout (which
# keeps the page's columns as runs of spaces), into OUT_DIR/<name>.txt and <name>.layout.txt.
#   tools/tokenizer-reference/extract-pdf-text.sh OUT_DIR FILE.pdf...
set -euo pipefail
out="$1"
shift
mkdir -p "$out"
for pdf in "$@"; do
  name="$(basename "$pdf" .pdf)"
  pdftotext -enc UTF-8 "$pdf" "$out/$name.txt"
  pdftotext -enc UTF-8 -layout "$pdf" "$out/$name.layout.txt"
done
