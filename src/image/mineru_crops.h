// SPDX-License-Identifier: Apache-2.0
// The image rules of MinerU's VLM client (mineru-vl-utils, MinerUClientHelper), exactly:
//   layout:  the page image resized to 1036 x 1036 with Pillow's bicubic, aspect ignored;
//   blocks:  the normalised box times the page size, cropped as Pillow's crop() rounds it,
//            rotated counter-clockwise by the block's angle with canvas expansion, then
//            resize_by_need: a crop longer than 50:1 is centred on a white canvas of exactly
//            50:1 (short side ceil(long / 50)); then a short side under 28 pixels is scaled up
//            uniformly (bicubic) so that it becomes 28, both sides ceil(side * 28 / short).
// Older releases of the client rounded the upscaled sides with Python's round() instead of
// ceil; UpscaleRounding selects either.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "base/status.h"
#include "base/thread_pool.h"
#include "image/image.h"

namespace mineru::image {

inline constexpr int64_t kLayoutImageSize = 1036;  // 37 x 28: smart_resize leaves it alone
inline constexpr int64_t kMinImageEdge = 28;
inline constexpr double kMaxImageEdgeRatio = 50.0;

enum class UpscaleRounding {
  kCeil,   // math.ceil(side * scale): current mineru-vl-utils
  kRound,  // round(side * scale), half to even: early releases
};

struct CropRules {
  int64_t min_image_edge = kMinImageEdge;
  double max_image_edge_ratio = kMaxImageEdgeRatio;
  UpscaleRounding rounding = UpscaleRounding::kCeil;
};

// prepare_for_layout: `size` x `size` (1036 by default).
Result<RgbImage> PrepareLayoutImage(const RgbImage& page, ThreadPool* pool = nullptr,
                                    int64_t size = kLayoutImageSize);

// resize_by_need on one crop.
Result<RgbImage> ResizeByNeed(const RgbImage& image, const CropRules& rules = {},
                              ThreadPool* pool = nullptr);

// prepare_for_extract for one block: `bbox` is (x1, y1, x2, y2) in [0, 1] of the page, `angle`
// 0, 90, 180 or 270 (degrees counter-clockwise; other values: no rotation, as MinerU). nullopt
// when the rounded crop is empty (MinerU skips the block).
Result<std::optional<RgbImage>> PrepareBlockImage(const RgbImage& page,
                                                  const std::array<double, 4>& bbox, int angle,
                                                  const CropRules& rules = {},
                                                  ThreadPool* pool = nullptr);

}  // namespace mineru::image
