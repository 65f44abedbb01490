// SPDX-License-Identifier: Apache-2.0
// Drawing one page of a LayoutPlan with cairo, shared by the two layout PDF writers: the render
// helper (the original PDF page drawn by Poppler underneath) and WriteImageLayoutPdf (the page
// image underneath). Conventions are those of layout_plan.h.
#pragma once

#include <cairo.h>

#include <string>

#include "base/status.h"
#include "image/pdf/layout_plan.h"

namespace mineru::pdf {

// The font of the reading-order numbers: DejaVu Sans as fontconfig resolves it (its nearest
// substitute where DejaVu is not installed), looked up once per process. face() is null when
// fontconfig knows no font file at all; the numbers are then skipped.
class LayoutNumberFont {
 public:
  static const LayoutNumberFont& Get();
  // A font that is never found, so that the skipping path can be exercised.
  static const LayoutNumberFont& None();

  cairo_font_face_t* face() const { return face_; }
  // The font file, or why there is none (for the warning).
  const std::string& description() const { return description_; }

 private:
  LayoutNumberFont() = default;
  cairo_font_face_t* face_ = nullptr;  // kept for the life of the process
  std::string description_;
};

// The warning a writer reports when it had numbers to draw but no font.
std::string LayoutNumbersSkippedWarning(const LayoutNumberFont& font);

// Draws `page`'s boxes, then its numbers (with `font`, unless its face is null), onto `cr` in
// page coordinates: points, origin at the top left, y down (cairo's own orientation, so a PDF
// surface of the page's size needs no transformation). The state of `cr` is restored after.
// Coordinates are clamped to a margin around the page (width_pt x height_pt) so that boxes far
// outside it cannot overflow cairo's fixed-point arithmetic. Sets *numbers_skipped when the
// page had numbers and no font. Errors: cairo's status after drawing (kResourceExhausted for
// no memory, kInternal otherwise).
Status DrawLayoutOverlay(cairo_t* cr, const LayoutPagePlan& page, double width_pt, double height_pt,
                         const LayoutNumberFont& font, bool* numbers_skipped);

// The cairo status of a context or surface as an Error ("<what>: cairo: <text>").
Status CairoStatus(cairo_status_t status, const std::string& what);

}  // namespace mineru::pdf
