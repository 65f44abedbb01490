#!/usr/bin/env bash
# Sets up a Debian 12 machine, checks the formatting, builds everything and runs the whole test
# suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
scripts/check-format.sh  # seconds: every tracked C++ file as clang-format writes it
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
