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

// A file of the decode reference's inputs (reference/decode/<name>).
inline std::vector<uint8_t> DecodeReferenceFile(const std::string& name) {
  return ReadBytes(ReferenceDir() + "/decode/" + name);
}

// PNG built by hand, for headers that lie. The CRC-32 of PNG chunks (ISO 3309, reflected
// polynomial 0xedb88320), bit by bit: test inputs are small.
inline uint32_t PngCrc(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
  }
  return c ^ 0xffffffffu;
}

// Appends one chunk: big-endian length, type, data, CRC over type and data.
inline void AppendPngChunk(std::vector<uint8_t>& png, const char* type,
                           const std::vector<uint8_t>& data) {
  auto be32 = [&](uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(v >> s));
  };
  be32(static_cast<uint32_t>(data.size()));
  const size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  be32(PngCrc(png.data() + start, png.size() - start));
}

// The 13 data bytes of an IHDR chunk (compression and filter methods 0).
inline std::vector<uint8_t> PngIhdr(uint32_t w, uint32_t h, uint8_t depth = 8, uint8_t color = 2,
                                    uint8_t interlace = 0) {
  return {static_cast<uint8_t>(w >> 24),
          static_cast<uint8_t>(w >> 16),
          static_cast<uint8_t>(w >> 8),
          static_cast<uint8_t>(w),
          static_cast<uint8_t>(h >> 24),
          static_cast<uint8_t>(h >> 16),
          static_cast<uint8_t>(h >> 8),
          static_cast<uint8_t>(h),
          depth,
          color,
          0,
          0,
          interlace};
}

using testing_support::ForEachTarget;

}  // namespace mineru::image::testing
