// SPDX-License-Identifier: Apache-2.0
// Observation of intermediate tensors by name ("vision.block.3", "decoder.layer.0"), for
// debug-forward dumps and layer-by-layer parity tests. A null tracer costs nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace mineru::model {

// rows x cols float32 values, row-major; valid only during the call.
using TraceFn =
    std::function<void(std::string_view name, const float* data, int64_t rows, int64_t cols)>;

inline void Trace(const TraceFn* trace, std::string_view name, const float* data, int64_t rows,
                  int64_t cols) {
  if (trace != nullptr && *trace) (*trace)(name, data, rows, cols);
}

}  // namespace mineru::model
