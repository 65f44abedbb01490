// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the image tests: the Pillow reference (written by pillow_reference.py, run
// by CTest as a fixture before these tests, or here on first use when a test binary is started
// by hand), file helpers, and a runner over every compiled SIMD target.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "../support/for_each_target.h"
#include "base/json.h"
#include "base/mapped_file.h"
#include "image/image.h"

namespace mineru::image::testing {

inline const std::string kData = MINERU_TEST_DATA_DIR;
inline const std::string kGoldenImages = kData + "/qwen2vl-tiny/images";
inline const std::string kModelDir = kData + "/qwen2vl-tiny/model";

// One manifest written by pillow_reference.py and the blob its (offset, size) pairs point into.
class Reference {
 public:
  const Json& cases() const { return manifest_["cases"]; }
  // The bytes of an [offset, size] pair.
  std::span<const uint8_t> Bytes(const Json& pair) const;
  std::vector<uint8_t> Copy(const Json& pair) const {
    const auto b = Bytes(pair);
    return {b.begin(), b.end()};
  }

  static const Reference& Get(const std::string& name);  // "decode", "resize", "encode", "crops"

 private:
  Json manifest_;
  MappedFile blob_;
};

// Where the reference lives (generated on first use if missing).
const std::string& ReferenceDir();

std::vector<uint8_t> ReadBytes(const std::string& path);
void WriteBytes(const std::string& path, std::span<const uint8_t> bytes);

RgbImage NoiseImage(int64_t width, int64_t height, uint32_t seed);

// The first index where two images differ, as text, or "" when they are equal.
std::string FirstDifference(const RgbImage& a, const RgbImage& b);

using testing_support::ForEachTarget;

}  // namespace mineru::image::testing
