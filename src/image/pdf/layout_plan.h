// SPDX-License-Identifier: Apache-2.0
// What <stem>_layout.pdf draws over each page: plain rectangles in the page's own points and
// the reading-order numbers, with no knowledge of middle.json (the pipeline builds the plan,
// pipeline/layout_pdf.h) and no knowledge of how it is drawn (the render helper for PDF inputs,
// PdfDocument::WriteLayoutPdf; image_layout_pdf.h for image inputs).
//
// Coordinates are those of middle.json: PDF points of the page as displayed (after its /Rotate,
// relative to the top left of its crop box), y growing downwards. The drawing conventions are
// MinerU's (mineru/utils/draw_bbox.py, draw_bbox_without_number / draw_bbox_with_number):
//   fill    the rectangle filled with its colour at opacity kLayoutFillAlpha, no outline;
//   stroke  the outline only, opaque, kLayoutStrokeWidth points wide;
//   number  the decimal number, opaque kLayoutNumberRgb, kLayoutNumberFontSize points, its
//           baseline starting kLayoutNumberDx to the right of the box's right edge and
//           kLayoutNumberDy below its top edge, upright as the page is displayed.
// Boxes are drawn in list order, then every number: later boxes cover earlier ones.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace mineru::pdf {

inline constexpr double kLayoutFillAlpha = 0.3;
inline constexpr double kLayoutStrokeWidth = 1.0;  // reportlab's default line width
inline constexpr double kLayoutNumberFontSize = 10;
inline constexpr double kLayoutNumberDx = 2;
inline constexpr double kLayoutNumberDy = 10;

struct LayoutRgb {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  bool operator==(const LayoutRgb&) const = default;
};

inline constexpr LayoutRgb kLayoutNumberRgb{255, 0, 0};

enum class LayoutPaint : uint8_t { kFill = 0, kStroke = 1 };

struct LayoutBox {
  // x0, y0, x1, y1 in points, x0 <= x1 and y0 <= y1 (the plan builder orders them).
  std::array<double, 4> rect = {0, 0, 0, 0};
  LayoutRgb rgb;
  LayoutPaint paint = LayoutPaint::kFill;
  bool operator==(const LayoutBox&) const = default;
};

struct LayoutNumber {
  std::array<double, 4> rect = {0, 0, 0, 0};  // the numbered box, as in LayoutBox
  uint32_t number = 0;                        // 1-based reading order on its page
  bool operator==(const LayoutNumber&) const = default;
};

struct LayoutPagePlan {
  // 0-based page of the input drawn underneath (for image inputs: 0, the image itself).
  int page_index = 0;
  std::vector<LayoutBox> boxes;  // in drawing order
  std::vector<LayoutNumber> numbers;
  bool operator==(const LayoutPagePlan&) const = default;
};

// One entry per page of the output, in output order.
struct LayoutPlan {
  std::vector<LayoutPagePlan> pages;
  bool operator==(const LayoutPlan&) const = default;
};

// Bounds that keep one page's request to the render helper small (a real page has a few
// hundred blocks) and the arithmetic on coordinates far from the drawing libraries' limits.
inline constexpr size_t kMaxLayoutBoxesPerPage = 1 << 16;
inline constexpr size_t kMaxLayoutNumbersPerPage = 1 << 16;
inline constexpr double kMaxLayoutCoordinate = 1e7;

// kInvalidArgument for a plan with no pages, a page index outside [0, page_count), a
// coordinate that is not finite or beyond +-kMaxLayoutCoordinate, or a rectangle with x0 > x1
// or y0 > y1; kResourceExhausted for a page over the box or number bound. page_count < 0 skips
// the page-index check.
Status ValidateLayoutPlan(const LayoutPlan& plan, int page_count);
// The same checks for one page, named "layout page <number>" in messages.
Status ValidateLayoutPage(const LayoutPagePlan& page, int page_count, int number);

// What writing a layout PDF produced.
struct LayoutPdfReport {
  int pages = 0;
  // Things the reader should know, e.g. that no font was found so the numbers are missing.
  std::vector<std::string> warnings;
};

}  // namespace mineru::pdf
