#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Starts a server, runs the browser test e2e.mjs against it, and stops the server (SIGTERM, as
# an operator would). The server command comes after "--"; it must listen on a free port and
# print "listening on http://HOST:PORT" once it accepts connections (as `mineru-cpp serve
# --port 0` does). Exit status: e2e.mjs's, or 1 when the server did not come up.
#   tests/webui/run-e2e.sh NODE_MODULES PDF SCREENSHOT [E2E_OPTION...] -- SERVER_COMMAND...
# e.g.
#   tests/webui/run-e2e.sh build/webui-e2e/node_modules tests/data/corpus/mineru_demo1.pdf \
#     build/test-artifacts/webui.png -- build/src/apps/mineru-cpp serve --port 0 --model DIR
# The server's log is kept next to the screenshot (<screenshot minus .png>-server.log).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage="usage: $0 NODE_MODULES PDF SCREENSHOT [E2E_OPTION...] -- SERVER_COMMAND..."
if [ $# -lt 5 ]; then
  echo "$usage" >&2
  exit 2
fi
node_modules="$1" pdf="$2" screenshot="$3"
shift 3
e2e_options=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  e2e_options+=("$1")
  shift
done
if [ $# -lt 2 ]; then
  echo "$usage" >&2
  exit 2
fi
shift  # the "--"
log="${screenshot%.png}-server.log"
mkdir -p "$(dirname "$screenshot")"

# Created here, not by the background job's redirection: the loop below may read it before the
# job has run at all (with pipefail, a missing file would end this script).
: >"$log"
"$@" >>"$log" 2>&1 &
server=$!
stop_server() {
  if kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server"
    wait "$server" || true
  fi
}
trap stop_server EXIT

# The server prints "listening on http://HOST:PORT" once it accepts connections (after the
# model is loaded).
base=""
for _ in $(seq 1 600); do
  base="$(sed -n 's|^listening on \(http://[^ ]*\)$|\1|p' "$log" | head -n 1)"
  [ -n "$base" ] && break
  if ! kill -0 "$server" 2>/dev/null; then
    echo "run-e2e.sh: the server exited before listening; its log ($log):" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.5
done
if [ -z "$base" ]; then
  echo "run-e2e.sh: the server did not listen within 300 s; its log ($log):" >&2
  cat "$log" >&2
  exit 1
fi
echo "server at $base (log: $log)"
NODE_PATH="$node_modules" node "$here/e2e.mjs" "$base" "$pdf" "$screenshot" "${e2e_options[@]}"
