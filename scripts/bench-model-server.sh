#!/usr/bin/env bash
# The pipeline in front of a model server against the pipeline in process: for each tiny
# random-weight checkpoint (2509 and pro), `parse` of the corpus PDFs in process, then
# `parse --model-server` against a local `mineru-cpp serve` of the same checkpoint, and prints
# pages/s of both, the client's time per request (the parse's "model server:" line: encode,
# HTTP, answer), the server's own time per request from its /metrics (engine: submission to
# finish; HTTP handler of /v1/chat/completions: first byte to response written) and from them
# the overhead of one request in front of a model server:
#
#   overhead = encode + (client HTTP - server engine time) + answer
#
# and the CPU seconds per page of each way (the parse with its render helper; serve while it
# answered). Then checks that both runs wrote the same bytes (every output file; the layout PDF
# up to its /CreationDate) and prints "outputs identical" or the files that differ (exit 1).
# docs/PERFORMANCE.md "In front of a model server".
#
#   scripts/bench-model-server.sh                  # both profiles, every corpus PDF
#   scripts/bench-model-server.sh --configs tiny --end 3 --max-tokens 16
#
# Options: --build DIR (build/), --work DIR (a new temporary directory, removed at the end),
# --port P (serve's; 0, the default: any free port), --threads N (2; each process),
# --max-tokens N (24: random weights stay short), --end N (last page, 0-based, of every PDF;
# default: all pages), --configs "tiny pro-tiny". Needs curl, and
# build/tokenizer-reference/tokenizer.json (made by `ctest --test-dir build -R
# text_qwen_tokenizer` or tools/tokenizer-reference/fetch.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
work=""
port=0
threads=2
max_tokens=24
end_page=""
configs="tiny pro-tiny"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --max-tokens) max_tokens="$2"; shift 2 ;;
    --end) end_page="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

bin="$build/src/apps/mineru-cpp"
tokenizer="$build/tokenizer-reference/tokenizer.json"
for need in "$bin" "$tokenizer"; do
  if [ ! -f "$need" ]; then
    echo "missing $need (see the header of $0)" >&2
    exit 2
  fi
done
command -v curl >/dev/null || { echo "curl is needed" >&2; exit 2; }

remove_work=0
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/bench-model-server.XXXXXX)
  remove_work=1
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)

server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
cleanup() {
  stop_server
  if [ "$remove_work" = 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pdfs=(tests/data/corpus/*.pdf)
range=()
if [ -n "$end_page" ]; then range=(-e "$end_page"); fi

# Figures of the parse's summary line.
pages_per_second() { sed -n 's/^parsed .*(\([0-9.]*\) pages\/s.*/\1/p' "$1"; }
pages_parsed() { sed -n 's/^parsed [0-9]* document(s), \([0-9]*\) page(s).*/\1/p' "$1"; }

# CPU seconds (user + system) a running process has used so far.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}

# One sample of a /metrics text: the value of the line whose name and labels start with `$2`.
metric() { awk -v key="$2" 'index($0, key) == 1 { print $NF; exit }' "$1"; }

# Byte-identical trees, the layout PDF compared without its /CreationDate (the time it was
# written). Prints every file that differs or exists on one side only.
compare_outputs() {
  local a="$1" b="$2" differ=0 rel
  while IFS= read -r rel; do
    if [ ! -f "$a/$rel" ] || [ ! -f "$b/$rel" ]; then
      echo "  only in one run: $rel"
      differ=1
    elif [[ "$rel" == *_layout.pdf ]]; then
      if ! cmp -s <(LC_ALL=C sed 's#/CreationDate *([^)]*)##g' "$a/$rel") \
                  <(LC_ALL=C sed 's#/CreationDate *([^)]*)##g' "$b/$rel"); then
        echo "  differs: $rel"
        differ=1
      fi
    elif ! cmp -s "$a/$rel" "$b/$rel"; then
      echo "  differs: $rel"
      differ=1
    fi
  done < <( (cd "$a" && find . -type f; cd "$b" && find . -type f) | sort -u)
  return "$differ"
}

status=0
for config in $configs; do
  model="$work/model-$config"
  out_local="$work/out-local-$config"
  out_remote="$work/out-remote-$config"
  rm -rf "$out_local" "$out_remote"
  echo "== $config"
  if [ ! -f "$model/config.json" ]; then
    "$bin" make-model --config "$config" --seed 7 -o "$model" \
      --tokenizer-source "$tokenizer" >/dev/null
  fi

  # In process. No --profile: the checkpoint's files say which. `time` reports the CPU seconds
  # of the parse and its render helper.
  TIMEFORMAT='%U %S'
  { time "$bin" --threads "$threads" parse "${pdfs[@]}" "${range[@]}" -o "$out_local" \
      --model "$model" --max-tokens "$max_tokens" 2>"$work/local-$config.log"; } \
    2>"$work/local-$config.cpu" || {
    echo "in-process parse failed:" >&2
    tail -5 "$work/local-$config.log" >&2
    exit 1
  }

  # The same checkpoint behind `serve`; no answer caches, so every request reaches its engine.
  # Its own port (any free one unless --port): what it prints, so no other server is measured.
  "$bin" --threads "$threads" serve --model "$model" --port "$port" --block-cache-bytes 0 \
    --cache-bytes 0 2>"$work/serve-$config.log" &
  server_pid=$!
  url=""
  for _ in $(seq 1 1200); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$work/serve-$config.log")
    if [ -n "$url" ] && curl -sf "$url/health/ready" >/dev/null 2>&1; then break; fi
    url=""
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "serve did not start:" >&2
    tail -5 "$work/serve-$config.log" >&2
    exit 1
  fi

  # In front of it. No --profile: the server's /v1/models says which.
  server_cpu_before=$(cpu_seconds "$server_pid")
  { time "$bin" --threads "$threads" parse "${pdfs[@]}" "${range[@]}" -o "$out_remote" \
      --model-server "$url" --max-tokens "$max_tokens" \
      2>"$work/remote-$config.log"; } 2>"$work/remote-$config.cpu" || {
    echo "parse --model-server failed:" >&2
    tail -5 "$work/remote-$config.log" >&2
    exit 1
  }
  server_cpu=$(awk -v a="$server_cpu_before" -v b="$(cpu_seconds "$server_pid")" \
    'BEGIN { print b - a }')
  curl -sf "$url/metrics" >"$work/metrics-$config.txt"
  stop_server

  m="$work/metrics-$config.txt"
  engine_sum=$(metric "$m" "mineru_e2e_request_latency_seconds_sum")
  engine_count=$(metric "$m" "mineru_e2e_request_latency_seconds_count")
  route='{method="POST",route="/v1/chat/completions"}'
  handler_sum=$(metric "$m" "mineru_http_request_duration_seconds_sum$route")
  handler_count=$(metric "$m" "mineru_http_request_duration_seconds_count$route")
  client_line=$(grep '^model server: [0-9]' "$work/remote-$config.log")
  encode=$(sed -n 's/.*encode \([0-9.]*\) ms.*/\1/p' <<<"$client_line")
  http=$(sed -n 's/.*HTTP \([0-9.]*\) ms.*/\1/p' <<<"$client_line")
  answer=$(sed -n 's/.*answer \([0-9.]*\) ms.*/\1/p' <<<"$client_line")

  grep '^profile:' "$work/local-$config.log" | sed 's/^/in process:   /'
  grep '^profile:' "$work/remote-$config.log" | sed 's/^/model server: /'
  echo "in process:      $(pages_parsed "$work/local-$config.log") pages," \
    "$(pages_per_second "$work/local-$config.log") pages/s"
  echo "--model-server:  $(pages_parsed "$work/remote-$config.log") pages," \
    "$(pages_per_second "$work/remote-$config.log") pages/s"
  awk -v l="$(cat "$work/local-$config.cpu")" -v r="$(cat "$work/remote-$config.cpu")" \
    -v s="$server_cpu" -v n="$(pages_parsed "$work/local-$config.log")" 'BEGIN {
      split(l, a, " "); split(r, b, " ")
      lc = a[1] + a[2]; rc = b[1] + b[2]
      printf "CPU per page: in process %.0f ms (loading the checkpoint included);", 1e3 * lc / n
      printf " with the model server %.0f ms (parse %.0f + serve %.0f)\n", 1e3 * (rc + s) / n,
        1e3 * rc / n, 1e3 * s / n
    }'
  echo "client: $client_line"
  awk -v es="$engine_sum" -v ec="$engine_count" -v hs="$handler_sum" -v hc="$handler_count" \
    -v enc="$encode" -v http="$http" -v ans="$answer" 'BEGIN {
      engine = ec > 0 ? 1e3 * es / ec : 0
      handler = hc > 0 ? 1e3 * hs / hc : 0
      printf "server: %d engine request(s), %.2f ms each;", ec, engine
      printf " %d POST /v1/chat/completions, %.2f ms each (HTTP handler)\n", hc, handler
      printf "overhead per request: encode %.2f + (HTTP %.2f - engine %.2f) + answer %.3f", enc,
        http, engine, ans
      printf " = %.2f ms (of which the server outside its engine %.2f ms,",
        enc + http - engine + ans, handler - engine
      printf " loopback and client %.2f ms)\n", http - handler
    }'
  if compare_outputs "$out_local" "$out_remote"; then
    echo "outputs identical ($(cd "$out_local" && find . -type f | wc -l) files)"
  else
    status=1
  fi
done
exit "$status"
