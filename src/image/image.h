// SPDX-License-Identifier: Apache-2.0
// The one pixel container of the image layer: 8-bit RGB, row-major, 3 bytes per pixel, no row
// padding (numpy's H x W x 3 uint8 layout, which is what Pillow's convert("RGB") hands to
// Hugging Face's image processor). Every decoder converts to it; resize, crop and preprocess
// read it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace mineru::image {

struct RgbImage {
  int64_t width = 0;
  int64_t height = 0;
  std::vector<uint8_t> pixels;  // width * height * 3 bytes

  size_t row_bytes() const { return static_cast<size_t>(width) * 3; }
  uint8_t* row(int64_t y) { return pixels.data() + static_cast<size_t>(y) * row_bytes(); }
  const uint8_t* row(int64_t y) const {
    return pixels.data() + static_cast<size_t>(y) * row_bytes();
  }
  bool empty() const { return width <= 0 || height <= 0; }
};

// Largest image (either side, and in pixels) the pixel operations in this layer produce when the
// caller asks for a size: resize targets, canvases, crops. Decoding has its own, tunable limits
// (DecodeLimits in decode.h); this bound only keeps arithmetic on sizes far from overflow.
inline constexpr int64_t kMaxImageSide = int64_t{1} << 20;
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 32;

// An image of this size filled with one colour. Fails (kInvalidArgument) for sizes outside
// [1, kMaxImageSide] or more than kMaxImagePixels pixels.
Result<RgbImage> MakeImage(int64_t width, int64_t height, uint8_t r = 0, uint8_t g = 0,
                           uint8_t b = 0);

// Wraps caller pixels (width * height * 3 bytes, checked).
Result<RgbImage> ImageFromPixels(int64_t width, int64_t height, std::span<const uint8_t> rgb);

}  // namespace mineru::image
