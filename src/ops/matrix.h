// SPDX-License-Identifier: Apache-2.0
// A read-only view of a row-major matrix whose elements are float32, float16 or bfloat16:
// how kernels see weights without copying them out of the checkpoint mapping.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "base/status.h"

namespace mineru::ops {

struct MatrixView {
  const void* data = nullptr;
  DType dtype = DType::kF32;  // kF32, kF16 or kBF16
  int64_t rows = 0;
  int64_t cols = 0;  // rows are contiguous: row r starts at element r * cols

  const uint8_t* Row(int64_t r) const {
    return static_cast<const uint8_t*>(data) + r * cols * static_cast<int64_t>(DTypeSize(dtype));
  }
};

inline bool IsKernelDType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

}  // namespace mineru::ops
