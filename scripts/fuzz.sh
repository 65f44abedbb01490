#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan+UBSan, in build-fuzz/) and runs each for a
# bounded time on its committed corpus (fuzz/corpus/<target>/). docs/TESTING.md "Fuzzing".
#
#   scripts/fuzz.sh                       # every target for 20 s, as many at once as CPUs
#   scripts/fuzz.sh --seconds 3600 --merge  # a campaign: an hour each, new inputs merged into
#                                           # fuzz/corpus/ (minimised) when it ends
#   scripts/fuzz.sh --seconds 60 http_request multipart
#
# Every committed input is run first (each crash ever found stays in the corpus, so a
# regression fails at once). Inputs the fuzzer finds go to build-fuzz/corpus/<target>/, crashes
# to build-fuzz/artifacts/<target>/, logs to build-fuzz/logs/<target>.log; the repository is
# only written with --merge. Exit status 1 when any target crashed, leaked, timed out or ran out
# of memory; reproduce with build-fuzz/fuzz/fuzz_<target> <artifact>.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
jobs=$(nproc)
merge=0
build_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --merge) merge=1; shift ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

build=${MINERU_FUZZ_BUILD_DIR:-build-fuzz}
compiler=""
for candidate in clang++-14 clang++; do
  if command -v "$candidate" >/dev/null 2>&1; then compiler=$(command -v "$candidate"); break; fi
done
if [ -z "$compiler" ]; then
  echo "fuzz.sh: no clang++ (scripts/setup-debian.sh installs clang-14 and libclang-rt-14-dev)" >&2
  exit 2
fi
# Symbolized reports: the sanitizers look for llvm-symbolizer on the PATH only.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && ! command -v llvm-symbolizer >/dev/null 2>&1 &&
  [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# -O1 without NDEBUG: fast enough to fuzz, every assertion armed; line tables for the reports.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DMINERU_FUZZ=ON -DMINERU_BUILD_TESTS=OFF -DMINERU_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" --target mineru_fuzzers
[ "$build_only" = 1 ] && exit 0

if [ ${#targets[@]} -eq 0 ]; then
  for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

# The dictionary of a target's input language (libFuzzer -dict), when it has one.
dictionary() {
  case "$1" in
    http_request | http_head) echo fuzz/dict/http.dict ;;
    multipart) echo fuzz/dict/multipart.dict ;;
    chat_request | celery_message | shared_task | tokenizer_load | safetensors | weights_file)
      echo fuzz/dict/json.dict ;;
  esac
}

run_one() {
  local target="$1"
  local binary="$build/fuzz/fuzz_$target"
  local work="$build/corpus/$target" artifacts="$build/artifacts/$target/"
  local log="$build/logs/$target.log"
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  local options=(-max_total_time="$seconds" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1
    -artifact_prefix="$artifacts")
  local dict
  dict=$(dictionary "$target")
  if [ -n "$dict" ]; then options+=(-dict="$dict"); fi
  local status=0
  UBSAN_OPTIONS=print_stacktrace=1 "$binary" "${options[@]}" "$work" "fuzz/corpus/$target" \
    >"$log" 2>&1 || status=$?
  local runs cpu
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cpu=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    printf '%-18s ok      %10s runs in %4s s\n' "$target" "${runs:-?}" "${cpu:-$seconds}"
  else
    printf '%-18s FAILED  (exit %s) log %s\n' "$target" "$status" "$log"
    grep -E "^==[0-9]+==ERROR|^SUMMARY|runtime error|Check failed|ERROR: libFuzzer|Test unit written" \
      "$log" | head -8 | sed 's/^/    /'
    return 1
  fi
}

failed=0
running=0
for target in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/fuzz_$target" ]; then
    echo "no fuzz target $target" >&2
    exit 2
  fi
  run_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done

if [ "$merge" = 1 ]; then
  for target in "${targets[@]}"; do
    # Keeps the committed inputs and adds the new ones that bring coverage they lack.
    "$build/fuzz/fuzz_$target" -merge=1 -rss_limit_mb=2560 -timeout=25 "fuzz/corpus/$target" \
      "$build/corpus/$target" >"$build/logs/$target.merge.log" 2>&1 || failed=1
  done
fi

if [ "$failed" -ne 0 ]; then
  echo "fuzz.sh: a target failed; its input is in $build/artifacts/<target>/ (add it to" \
    "fuzz/corpus/<target>/ with the fix)" >&2
  exit 1
fi
