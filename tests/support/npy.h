// SPDX-License-Identifier: Apache-2.0
// Reading .npy files (base/npy.h) in tests, golden vectors above all: a file that cannot be read
// or converted fails the calling test (EXPECT, with the reason) and gives an empty result, so a
// test goes on to report its other failures instead of crashing on a missing file.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/npy.h"

namespace mineru::testing_support {

// The array; on failure one with shape {0} and no data.
inline NpyArray ReadArray(const std::string& path) {
  auto array = ReadNpy(path);
  EXPECT_TRUE(array) << path << ": " << array.error().ToString();
  if (!array) {
    NpyArray empty;
    empty.shape = {0};
    return empty;
  }
  return std::move(*array);
}

inline std::vector<float> F32(const NpyArray& array) {
  auto values = array.ToF32();
  EXPECT_TRUE(values) << values.error().ToString();
  return values ? std::move(*values) : std::vector<float>{};
}
inline std::vector<float> F32(const std::string& path) { return F32(ReadArray(path)); }

inline std::vector<int64_t> I64(const NpyArray& array) {
  auto values = array.ToI64();
  EXPECT_TRUE(values) << values.error().ToString();
  return values ? std::move(*values) : std::vector<int64_t>{};
}
inline std::vector<int64_t> I64(const std::string& path) { return I64(ReadArray(path)); }

}  // namespace mineru::testing_support
