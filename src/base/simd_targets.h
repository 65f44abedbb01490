// SPDX-License-Identifier: Apache-2.0
// Which SIMD targets the kernels were compiled for (every Highway kernel of the project is built
// for the same set: see mineru_highway_sources), which one dispatch uses on this CPU, and — for
// tests and benchmarks — forcing one of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mineru {

// Targets compiled into the kernels and supported by this CPU, best first.
std::vector<int64_t> SimdTargets();
std::string SimdTargetName(int64_t target);
// The target dispatch uses now ("AVX3", "AVX2", "SCALAR", ...).
std::string CurrentSimdTargetName();
// Makes dispatch use `target` until called again; 0 restores the automatic choice. Tests only:
// not thread-safe with kernels running.
void ForceSimdTarget(int64_t target);

}  // namespace mineru
