#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the pinned playwright-core (package-lock.json) into OUT_DIR for the browser test
# e2e.mjs, and checks that a Chromium to drive is installed. Needs node and npm and the npm
# registry (scripts/setup-debian.sh installs node, npm and chromium); does nothing when OUT_DIR
# is already up to date.
#   tests/webui/setup.sh build/webui-e2e
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out="$1"
chromium="${MINERU_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "setup.sh: no Chromium at $chromium (scripts/setup-debian.sh installs Debian's;" \
    "MINERU_CHROMIUM names another)" >&2
  exit 1
fi
"$here/../../tools/npm-install-locked.sh" "$here" "$out" playwright-core >/dev/null
echo "$out/node_modules"
