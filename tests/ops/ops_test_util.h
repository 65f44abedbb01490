// SPDX-License-Identifier: Apache-2.0
// Shared helpers for kernel tests: random data, weights in each dtype, and a fixture that runs
// a test body once per compiled SIMD target.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../support/for_each_target.h"
#include "base/dtype.h"
#include "ops/matrix.h"

namespace mineru::ops::testing {

// float32 unit roundoff (2^-24).
inline constexpr double kUnitRoundoff = 5.9604644775390625e-8;

inline std::vector<float> RandomVector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Weights stored in `dtype`, plus their exact float32 values.
struct TestWeights {
  std::vector<uint8_t> storage;
  std::vector<float> values;
  MatrixView view;
};

inline TestWeights MakeWeights(DType dtype, int64_t rows, int64_t cols, uint32_t seed) {
  TestWeights w;
  std::vector<float> raw = RandomVector(static_cast<size_t>(rows * cols), seed, 0.5f);
  w.values.resize(raw.size());
  w.storage.resize(raw.size() * DTypeSize(dtype));
  for (size_t i = 0; i < raw.size(); ++i) {
    if (dtype == DType::kBF16) {
      const uint16_t bits = F32ToBf16(raw[i]);
      std::memcpy(&w.storage[2 * i], &bits, 2);
      w.values[i] = Bf16ToF32(bits);
    } else if (dtype == DType::kF16) {
      const uint16_t bits = F32ToF16(raw[i]);
      std::memcpy(&w.storage[2 * i], &bits, 2);
      w.values[i] = F16ToF32(bits);
    } else {
      std::memcpy(&w.storage[4 * i], &raw[i], 4);
      w.values[i] = raw[i];
    }
  }
  w.view = MatrixView{w.storage.data(), dtype, rows, cols};
  return w;
}

using testing_support::ForEachTarget;

}  // namespace mineru::ops::testing
