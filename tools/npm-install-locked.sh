#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs a pinned npm project (SRC_DIR/package.json and package-lock.json, plus any FILEs of
# SRC_DIR it needs beside them) into OUT_DIR with `npm ci`, only when OUT_DIR is out of date:
# a copied file differs from its source, or node_modules/PACKAGE is missing. Prints "updated"
# when it installed, nothing otherwise. Needs node and npm (scripts/setup-debian.sh) and the npm
# registry.
#   tools/npm-install-locked.sh SRC_DIR OUT_DIR PACKAGE [FILE...]
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 SRC_DIR OUT_DIR PACKAGE [FILE...]" >&2
  exit 2
fi
src="$1" out="$2" package="$3"
shift 3
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$0: $tool is not installed (scripts/setup-debian.sh installs it)" >&2
    exit 1
  fi
done
mkdir -p "$out"
files=(package.json package-lock.json "$@")
stale=0
for f in "${files[@]}"; do cmp -s "$src/$f" "$out/$f" || stale=1; done
[ -d "$out/node_modules/$package" ] || stale=1
if [ "$stale" -eq 1 ]; then
  for f in "${files[@]}"; do cp "$src/$f" "$out/$f"; done
  (cd "$out" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo updated
fi
