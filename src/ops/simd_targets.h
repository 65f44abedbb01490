// SPDX-License-Identifier: Apache-2.0
// Which SIMD targets the kernels were compiled for, and (for tests) forcing one of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mineru::ops {

// Targets that are both compiled into the kernels and supported by this CPU, best first.
std::vector<int64_t> KernelTargets();
std::string KernelTargetName(int64_t target);
// Name of the target dispatch uses on this CPU ("AVX3", "AVX2", ...).
std::string SimdTargetName();
// Makes dispatch use `target` until called again; 0 restores the automatic choice. Tests only:
// not thread-safe with kernels running.
void ForceKernelTarget(int64_t target);

}  // namespace mineru::ops
