// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/layout_plan.h"

#include <cmath>

namespace mineru::pdf {
namespace {

Status CheckRect(const std::array<double, 4>& rect, int page_number, const char* what,
                 size_t item) {
  for (double v : rect) {
    if (!std::isfinite(v) || std::fabs(v) > kMaxLayoutCoordinate) {
      return Fail(ErrorCode::kInvalidArgument,
                  "layout page {}: {} {} has coordinate {} (finite, within +-{} expected)",
                  page_number, what, item + 1, v, kMaxLayoutCoordinate);
    }
  }
  if (rect[0] > rect[2] || rect[1] > rect[3]) {
    return Fail(ErrorCode::kInvalidArgument,
                "layout page {}: {} {} is [{}, {}, {}, {}], not ordered x0 <= x1, y0 <= y1",
                page_number, what, item + 1, rect[0], rect[1], rect[2], rect[3]);
  }
  return OkStatus();
}

}  // namespace

Status ValidateLayoutPage(const LayoutPagePlan& page, int page_count, int number) {
  if (page.page_index < 0 || (page_count >= 0 && page.page_index >= page_count)) {
    return Fail(ErrorCode::kInvalidArgument,
                "layout page {} draws over page index {}, outside [0, {})", number, page.page_index,
                page_count);
  }
  if (page.boxes.size() > kMaxLayoutBoxesPerPage) {
    return Fail(ErrorCode::kResourceExhausted, "layout page {}: {} boxes exceed the bound {}",
                number, page.boxes.size(), kMaxLayoutBoxesPerPage);
  }
  if (page.numbers.size() > kMaxLayoutNumbersPerPage) {
    return Fail(ErrorCode::kResourceExhausted, "layout page {}: {} numbers exceed the bound {}",
                number, page.numbers.size(), kMaxLayoutNumbersPerPage);
  }
  for (size_t i = 0; i < page.boxes.size(); ++i) {
    MINERU_RETURN_IF_ERROR(CheckRect(page.boxes[i].rect, number, "box", i));
    const auto paint = static_cast<uint8_t>(page.boxes[i].paint);
    if (paint > static_cast<uint8_t>(LayoutPaint::kStroke)) {
      return Fail(ErrorCode::kInvalidArgument, "layout page {}: box {} has paint {}", number, i + 1,
                  paint);
    }
  }
  for (size_t i = 0; i < page.numbers.size(); ++i) {
    MINERU_RETURN_IF_ERROR(CheckRect(page.numbers[i].rect, number, "number", i));
  }
  return OkStatus();
}

Status ValidateLayoutPlan(const LayoutPlan& plan, int page_count) {
  if (plan.pages.empty()) return Fail(ErrorCode::kInvalidArgument, "layout plan has no pages");
  for (size_t p = 0; p < plan.pages.size(); ++p) {
    MINERU_RETURN_IF_ERROR(ValidateLayoutPage(plan.pages[p], page_count, static_cast<int>(p) + 1));
  }
  return OkStatus();
}

}  // namespace mineru::pdf
