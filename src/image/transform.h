// SPDX-License-Identifier: Apache-2.0
// Exact pixel moves with Pillow's semantics: transposes (EXIF orientation, rotation by quarter
// turns), crops that may reach outside the image, and pasting onto a canvas.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "image/image.h"

namespace mineru::image {

// Pillow's Image.Transpose members.
enum class Transpose {
  kFlipLeftRight,  // out(x, y) = in(w - 1 - x, y)
  kFlipTopBottom,  // out(x, y) = in(x, h - 1 - y)
  kRotate90,       // counter-clockwise; out is h x w: out(x, y) = in(w - 1 - y, x)
  kRotate180,      // out(x, y) = in(w - 1 - x, h - 1 - y)
  kRotate270,      // counter-clockwise (90 clockwise): out(x, y) = in(y, h - 1 - x)
  kTranspose,      // main diagonal: out(x, y) = in(y, x)
  kTransverse,     // anti-diagonal: out(x, y) = in(w - 1 - y, h - 1 - x)
};

RgbImage TransposeImage(const RgbImage& in, Transpose op);

// ImageOps.exif_transpose for orientation 1-8 (2: flip left-right, 3: rotate 180, 4: flip
// top-bottom, 5: transpose, 6: rotate 270, 7: transverse, 8: rotate 90); anything else leaves
// the image unchanged.
RgbImage ApplyExifOrientation(RgbImage image, int orientation);

// Image.rotate(angle, expand=True) for angle a multiple of 90 (any sign): the exact transposes
// Pillow takes for those angles. Other angles: kInvalidArgument.
Result<RgbImage> RotateQuarterTurns(const RgbImage& in, int degrees_counter_clockwise);

// Image.crop((x0, y0, x1, y1)) with integer edges: pixels outside the source are black.
// kInvalidArgument when x1 < x0 or y1 < y0 or the result is larger than kMaxImageSide; an empty
// crop (x0 == x1 or y0 == y1) returns an image of width or height 0.
Result<RgbImage> Crop(const RgbImage& in, int64_t x0, int64_t y0, int64_t x1, int64_t y1);

// Image.crop with float edges: each edge rounded as Python's round() does (half to even).
// Non-finite edges: kInvalidArgument.
Result<RgbImage> CropRounded(const RgbImage& in, double x0, double y0, double x1, double y1);

// Image.paste(src, (x, y)): copies src with its top-left corner at (x, y), clipped to dst.
void Paste(RgbImage& dst, const RgbImage& src, int64_t x, int64_t y);

}  // namespace mineru::image
