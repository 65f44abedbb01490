// SPDX-License-Identifier: Apache-2.0
// A read-only view of a row-major matrix whose elements are float32, float16 or bfloat16:
// how kernels see weights without copying them out of the checkpoint mapping.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

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

// The row-concatenation of views that share dtype and width (q, k and v as one matrix): row j
// is row j - begin(i) of the part i holding it. What every weight layout is built from
// (PackedMatrix::Pack and Bf16Rows, Q8Matrix::Quantize).
class StackedRows {
 public:
  // Violations are programming errors (weights are validated when loaded) and abort through
  // MINERU_CHECK with `who`: no parts, a dtype kernels do not read, parts mixing dtypes or
  // widths, a negative shape.
  StackedRows(std::span<const MatrixView> parts, std::string_view who);

  int64_t rows() const { return starts_.back(); }
  int64_t cols() const { return parts_[0].cols; }
  DType dtype() const { return parts_[0].dtype; }
  std::span<const MatrixView> parts() const { return parts_; }
  int64_t begin(size_t part) const { return starts_[part]; }

  const uint8_t* Row(int64_t j) const;
  // Element (j, k) widened exactly to float32.
  float Load(int64_t j, int64_t k) const;

 private:
  std::span<const MatrixView> parts_;
  std::vector<int64_t> starts_;  // starts_[i]: first row of part i; starts_.back() = total
};

}  // namespace mineru::ops
