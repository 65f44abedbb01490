// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/page_image.h"

#include <algorithm>
#include <cmath>

namespace mineru::pdf {

Result<PageGeometry> ComputePageGeometry(const PageInfo& page, double dpi, int max_long_side,
                                         int64_t max_pixels) {
  // Poppler parses an over-long number in a page box as infinity; a box can also be empty.
  if (!std::isfinite(page.width_pt) || !std::isfinite(page.height_pt) || page.width_pt <= 0 ||
      page.height_pt <= 0) {
    return Fail(ErrorCode::kCorrupt, "page box {} x {} pt is empty or not finite", page.width_pt,
                page.height_pt);
  }
  const double long_side = std::max(page.width_pt, page.height_pt);
  double scale = dpi / 72;
  if (long_side * scale > max_long_side) scale = max_long_side / long_side;
  const double width = std::ceil(page.width_pt * scale);
  const double height = std::ceil(page.height_pt * scale);
  // Only a pathological box gets here (a huge long side makes the scale underflow to 0).
  if (!(scale > 0) || !(width >= 1) || !(height >= 1) || width > max_long_side + 1.0 ||
      height > max_long_side + 1.0) {
    return Fail(ErrorCode::kCorrupt, "page box {} x {} pt gives no usable image size",
                page.width_pt, page.height_pt);
  }
  PageGeometry geometry{scale, static_cast<int>(width), static_cast<int>(height)};
  const int64_t pixels = int64_t{geometry.width} * geometry.height;
  if (pixels > max_pixels) {
    return Fail(ErrorCode::kResourceExhausted,
                "{} x {} pixels ({} x {} pt at scale {:.6g}) exceed --max-page-pixels {}",
                geometry.width, geometry.height, page.width_pt, page.height_pt, scale, max_pixels);
  }
  return geometry;
}

}  // namespace mineru::pdf
