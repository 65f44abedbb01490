// SPDX-License-Identifier: Apache-2.0
#include "image/mineru_crops.h"

#include <algorithm>
#include <cmath>

#include "image/resize.h"
#include "image/transform.h"

namespace mineru::image {

Result<RgbImage> PrepareLayoutImage(const RgbImage& page, ThreadPool* pool, int64_t size) {
  return ResizeBicubic(page, size, size, pool);
}

Result<RgbImage> ResizeByNeed(const RgbImage& image, const CropRules& rules, ThreadPool* pool) {
  if (image.empty()) return Fail(ErrorCode::kInvalidArgument, "resize_by_need: empty image");
  if (!(rules.max_image_edge_ratio >= 1) || rules.min_image_edge < 1) {
    return Fail(ErrorCode::kInvalidArgument, "resize_by_need: ratio {} or edge {} out of range",
                rules.max_image_edge_ratio, rules.min_image_edge);
  }
  RgbImage out = image;
  const auto w = static_cast<double>(out.width), h = static_cast<double>(out.height);
  // Python: max(size) / min(size), true division in double.
  if (std::max(w, h) / std::min(w, h) > rules.max_image_edge_ratio) {
    int64_t new_w = out.width, new_h = out.height;
    if (out.width > out.height) {
      new_h = static_cast<int64_t>(std::ceil(w / rules.max_image_edge_ratio));
    } else {
      new_w = static_cast<int64_t>(std::ceil(h / rules.max_image_edge_ratio));
    }
    MINERU_ASSIGN_OR_RETURN(RgbImage canvas, MakeImage(new_w, new_h, 255, 255, 255));
    // int((new - old) / 2): the difference is never negative, so this is a floor.
    Paste(canvas, out, (new_w - out.width) / 2, (new_h - out.height) / 2);
    out = std::move(canvas);
  }
  const int64_t short_side = std::min(out.width, out.height);
  if (short_side < rules.min_image_edge) {
    const double scale =
        static_cast<double>(rules.min_image_edge) / static_cast<double>(short_side);
    auto side = [&](int64_t v) {
      const double scaled = static_cast<double>(v) * scale;
      return static_cast<int64_t>(
          rules.rounding == UpscaleRounding::kCeil ? std::ceil(scaled) : std::nearbyint(scaled));
    };
    MINERU_ASSIGN_OR_RETURN(out, ResizeBicubic(out, side(out.width), side(out.height), pool));
  }
  return out;
}

Result<std::optional<RgbImage>> PrepareBlockImage(const RgbImage& page,
                                                  const std::array<double, 4>& bbox, int angle,
                                                  const CropRules& rules, ThreadPool* pool) {
  const auto w = static_cast<double>(page.width), h = static_cast<double>(page.height);
  MINERU_ASSIGN_OR_RETURN(RgbImage crop,
                          CropRounded(page, bbox[0] * w, bbox[1] * h, bbox[2] * w, bbox[3] * h));
  if (crop.width < 1 || crop.height < 1) return std::optional<RgbImage>();
  if (angle == 90 || angle == 180 || angle == 270) {
    MINERU_ASSIGN_OR_RETURN(crop, RotateQuarterTurns(crop, angle));
  }
  MINERU_ASSIGN_OR_RETURN(RgbImage out, ResizeByNeed(crop, rules, pool));
  return std::optional<RgbImage>(std::move(out));
}

}  // namespace mineru::image
