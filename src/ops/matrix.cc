// SPDX-License-Identifier: Apache-2.0
#include "ops/matrix.h"

#include <algorithm>
#include <cstring>

namespace mineru::ops {

StackedRows::StackedRows(std::span<const MatrixView> parts, std::string_view who)
    : parts_(parts), starts_{0} {
  MINERU_CHECK(!parts.empty(), "{}: no parts", who);
  MINERU_CHECK(IsKernelDType(dtype()), "{}: dtype {}", who, DTypeName(dtype()));
  for (const MatrixView& part : parts) {
    MINERU_CHECK(part.dtype == dtype(), "{}: parts mix {} and {}", who, DTypeName(dtype()),
                 DTypeName(part.dtype));
    MINERU_CHECK(part.cols == cols(), "{}: parts have {} and {} columns", who, cols(), part.cols);
    MINERU_CHECK(part.rows >= 0 && part.cols >= 0, "{}: negative shape", who);
    starts_.push_back(starts_.back() + part.rows);
  }
}

const uint8_t* StackedRows::Row(int64_t j) const {
  const size_t i = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), j) -
                                       starts_.begin() - 1);
  return parts_[i].Row(j - starts_[i]);
}

float StackedRows::Load(int64_t j, int64_t k) const {
  const uint8_t* row = Row(j);
  uint16_t half;
  switch (dtype()) {
    case DType::kBF16:
      std::memcpy(&half, row + 2 * k, 2);
      return Bf16ToF32(half);
    case DType::kF16:
      std::memcpy(&half, row + 2 * k, 2);
      return F16ToF32(half);
    default: {
      float value;
      std::memcpy(&value, row + 4 * k, 4);
      return value;
    }
  }
}

}  // namespace mineru::ops
