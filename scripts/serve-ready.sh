#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Seconds from starting `mineru-cpp serve` to its first `GET /health/ready` 200 (polled every
# 5 ms), then a clean SIGTERM. With --cold, the page cache is dropped first (needs root).
#   scripts/serve-ready.sh [--cold] MODEL_DIR [serve flags...]
set -euo pipefail
cold=0
if [ "${1:-}" = "--cold" ]; then
  cold=1
  shift
fi
if [ $# -lt 1 ]; then
  echo "usage: $0 [--cold] MODEL_DIR [serve flags...]" >&2
  exit 2
fi
model="$1"
shift
bin="${MINERU_BIN:-build/src/apps/mineru-cpp}"
port="${PORT:-18431}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if [ "$cold" = 1 ]; then
  sync
  echo 3 > /proc/sys/vm/drop_caches
fi
start=$(date +%s.%N)
"$bin" serve --model "$model" --port "$port" "$@" > "$log" 2>&1 &
pid=$!
until curl -sf -o /dev/null "http://127.0.0.1:$port/health/ready"; do
  if ! kill -0 "$pid" 2> /dev/null; then
    cat "$log" >&2
    exit 1
  fi
  sleep 0.005
done
end=$(date +%s.%N)
rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
kill -TERM "$pid"
wait "$pid" || true
awk -v s="$start" -v e="$end" -v r="$rss_kb" \
  'BEGIN { printf "ready in %.3f s, resident %.0f MB\n", e - s, r / 1024 }'
