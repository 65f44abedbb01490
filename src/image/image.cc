// SPDX-License-Identifier: Apache-2.0
#include "image/image.h"

#include <algorithm>
#include <cstring>

namespace mineru::image {
namespace {

Status CheckSize(int64_t width, int64_t height) {
  if (width < 1 || height < 1 || width > kMaxImageSide || height > kMaxImageSide) {
    return Fail(ErrorCode::kInvalidArgument, "image size {}x{} outside [1, {}] per side", width,
                height, kMaxImageSide);
  }
  if (width * height > kMaxImagePixels) {
    return Fail(ErrorCode::kInvalidArgument, "image size {}x{} is more than {} pixels", width,
                height, kMaxImagePixels);
  }
  return OkStatus();
}

}  // namespace

Result<RgbImage> MakeImage(int64_t width, int64_t height, uint8_t r, uint8_t g, uint8_t b) {
  MINERU_RETURN_IF_ERROR(CheckSize(width, height));
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<size_t>(width * height) * 3);
  if (r == g && g == b) {
    std::memset(image.pixels.data(), r, image.pixels.size());
  } else {
    for (size_t i = 0; i < image.pixels.size(); i += 3) {
      image.pixels[i] = r;
      image.pixels[i + 1] = g;
      image.pixels[i + 2] = b;
    }
  }
  return image;
}

Result<RgbImage> ImageFromPixels(int64_t width, int64_t height, std::span<const uint8_t> rgb) {
  MINERU_RETURN_IF_ERROR(CheckSize(width, height));
  const uint64_t expected = static_cast<uint64_t>(width * height) * 3;
  if (rgb.size() != expected) {
    return Fail(ErrorCode::kInvalidArgument, "{}x{} RGB image needs {} bytes, got {}", width,
                height, expected, rgb.size());
  }
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.assign(rgb.begin(), rgb.end());
  return image;
}

}  // namespace mineru::image
