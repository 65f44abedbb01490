// SPDX-License-Identifier: Apache-2.0
#include "image/transform.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mineru::image {
namespace {

inline void CopyPixel(const uint8_t* from, uint8_t* to) {
  to[0] = from[0];
  to[1] = from[1];
  to[2] = from[2];
}

}  // namespace

RgbImage TransposeImage(const RgbImage& in, Transpose op) {
  const int64_t w = in.width, h = in.height;
  const bool swap = op == Transpose::kRotate90 || op == Transpose::kRotate270 ||
                    op == Transpose::kTranspose || op == Transpose::kTransverse;
  RgbImage out;
  out.width = swap ? h : w;
  out.height = swap ? w : h;
  out.pixels.resize(in.pixels.size());
  for (int64_t y = 0; y < out.height; ++y) {
    uint8_t* dst = out.row(y);
    for (int64_t x = 0; x < out.width; ++x, dst += 3) {
      int64_t sx = x, sy = y;
      switch (op) {
        case Transpose::kFlipLeftRight:
          sx = w - 1 - x;
          break;
        case Transpose::kFlipTopBottom:
          sy = h - 1 - y;
          break;
        case Transpose::kRotate90:
          sx = w - 1 - y;
          sy = x;
          break;
        case Transpose::kRotate180:
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;
        case Transpose::kRotate270:
          sx = y;
          sy = h - 1 - x;
          break;
        case Transpose::kTranspose:
          sx = y;
          sy = x;
          break;
        case Transpose::kTransverse:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;
      }
      CopyPixel(in.row(sy) + sx * 3, dst);
    }
  }
  return out;
}

RgbImage ApplyExifOrientation(RgbImage image, int orientation) {
  switch (orientation) {
    case 2:
      return TransposeImage(image, Transpose::kFlipLeftRight);
    case 3:
      return TransposeImage(image, Transpose::kRotate180);
    case 4:
      return TransposeImage(image, Transpose::kFlipTopBottom);
    case 5:
      return TransposeImage(image, Transpose::kTranspose);
    case 6:
      return TransposeImage(image, Transpose::kRotate270);
    case 7:
      return TransposeImage(image, Transpose::kTransverse);
    case 8:
      return TransposeImage(image, Transpose::kRotate90);
    default:
      return image;
  }
}

Result<RgbImage> RotateQuarterTurns(const RgbImage& in, int degrees_counter_clockwise) {
  if (degrees_counter_clockwise % 90 != 0) {
    return Fail(ErrorCode::kInvalidArgument, "rotation by {} degrees is not a quarter turn",
                degrees_counter_clockwise);
  }
  switch (((degrees_counter_clockwise % 360) + 360) % 360) {
    case 90:
      return TransposeImage(in, Transpose::kRotate90);
    case 180:
      return TransposeImage(in, Transpose::kRotate180);
    case 270:
      return TransposeImage(in, Transpose::kRotate270);
    default:
      return in;
  }
}

Result<RgbImage> Crop(const RgbImage& in, int64_t x0, int64_t y0, int64_t x1, int64_t y1) {
  if (x1 < x0 || y1 < y0) {
    return Fail(ErrorCode::kInvalidArgument,
                "crop box ({}, {}, {}, {}) has right < left or "
                "bottom < top",
                x0, y0, x1, y1);
  }
  const int64_t w = x1 - x0, h = y1 - y0;
  if (w > kMaxImageSide || h > kMaxImageSide || w * h > kMaxImagePixels) {
    return Fail(ErrorCode::kInvalidArgument, "crop of {}x{} pixels is too large", w, h);
  }
  RgbImage out;
  out.width = w;
  out.height = h;
  out.pixels.assign(static_cast<size_t>(w * h) * 3, 0);
  // The part of the box inside the source.
  const int64_t sx0 = std::clamp<int64_t>(x0, 0, in.width);
  const int64_t sx1 = std::clamp<int64_t>(x1, 0, in.width);
  const int64_t sy0 = std::clamp<int64_t>(y0, 0, in.height);
  const int64_t sy1 = std::clamp<int64_t>(y1, 0, in.height);
  if (sx1 <= sx0 || sy1 <= sy0) return out;
  for (int64_t y = sy0; y < sy1; ++y) {
    std::memcpy(out.row(y - y0) + (sx0 - x0) * 3, in.row(y) + sx0 * 3,
                static_cast<size_t>(sx1 - sx0) * 3);
  }
  return out;
}

Result<RgbImage> CropRounded(const RgbImage& in, double x0, double y0, double x1, double y1) {
  for (double v : {x0, y0, x1, y1}) {
    // Beyond 2^52 every double is an integer already; far beyond any image side in any case.
    if (!std::isfinite(v) || std::fabs(v) > 4e15) {
      return Fail(ErrorCode::kInvalidArgument, "crop edge {} is not a usable coordinate", v);
    }
  }
  // Python's round(): nearest integer, ties to even; nearbyint does that in the default
  // rounding mode.
  auto round = [](double v) { return static_cast<int64_t>(std::nearbyint(v)); };
  return Crop(in, round(x0), round(y0), round(x1), round(y1));
}

void Paste(RgbImage& dst, const RgbImage& src, int64_t x, int64_t y) {
  const int64_t dx0 = std::max<int64_t>(x, 0), dy0 = std::max<int64_t>(y, 0);
  const int64_t dx1 = std::min(dst.width, x + src.width);
  const int64_t dy1 = std::min(dst.height, y + src.height);
  if (dx1 <= dx0 || dy1 <= dy0) return;
  for (int64_t dy = dy0; dy < dy1; ++dy) {
    std::memcpy(dst.row(dy) + dx0 * 3, src.row(dy - y) + (dx0 - x) * 3,
                static_cast<size_t>(dx1 - dx0) * 3);
  }
}

}  // namespace mineru::image
