// SPDX-License-Identifier: Apache-2.0
// Which SIMD targets the image kernels (resize) were compiled for, and forcing one of them in
// tests. The image layer sits below ops/, so it keeps its own copy of these few controls; both
// drive the same Highway dispatch state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mineru::image {

// Targets compiled into the image kernels and supported by this CPU, best first.
std::vector<int64_t> SimdTargets();
std::string SimdTargetName(int64_t target);
// The target dispatch picks now ("AVX3", "AVX2", "EMU128", ...).
std::string CurrentSimdTargetName();
// Makes dispatch use `target` until called again; 0 restores the automatic choice. Tests only:
// not thread-safe with kernels running.
void ForceSimdTarget(int64_t target);

}  // namespace mineru::image
