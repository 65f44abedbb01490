// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files (format versions 1-3, little-endian, C order): how reference dumps and
// debug outputs travel between this project and Python tools.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"

namespace mineru {

// Largest .npy file read by default (a full-vocabulary logits dump of a few hundred positions).
inline constexpr uint64_t kDefaultNpyMaxBytes = uint64_t{4} << 30;

struct NpyArray {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // raw little-endian elements, C order

  int64_t NumElements() const;
  // Converts float-like arrays (f32, f64, f16) to float32.
  Result<std::vector<float>> ToF32() const;
  // Converts integer and bool arrays to int64.
  Result<std::vector<int64_t>> ToI64() const;
  std::string ShapeString() const;  // "[616, 1176]"
};

Result<NpyArray> ParseNpy(std::span<const uint8_t> file, const std::string& name);
Result<NpyArray> ReadNpy(const std::string& path, uint64_t max_bytes = kDefaultNpyMaxBytes);

// Writes a C-order little-endian array; data holds product(shape) elements of dtype.
Status WriteNpy(const std::string& path, DType dtype, std::span<const int64_t> shape,
                const void* data);

}  // namespace mineru
