// SPDX-License-Identifier: Apache-2.0
// <stem>_layout.pdf for an image input. MinerU wraps an image in a one-page PDF whose page is
// the image's size in points and draws its boxes over that page; here the page image is drawn
// straight onto a cairo PDF surface of that size, in this process (no PDF is parsed, so the
// render helper is not needed), and the plan's boxes and numbers on top.
#pragma once

#include <string>

#include "base/status.h"
#include "image/image.h"
#include "image/pdf/layout_plan.h"

namespace mineru::pdf {

class LayoutNumberFont;

// Writes a one-page PDF of width_pt x height_pt points to `path` (atomically: a reader sees no
// file or the whole file): `page` scaled to fill the page, then plan.pages[0] over it. The plan
// must have exactly one page, with page_index 0. Errors: kInvalidArgument for a bad plan, an
// empty image or a page size that is not finite and positive; kResourceExhausted for an image
// side over cairo's 32767 pixels; kIo when the file cannot be written. A missing font is not an
// error: the numbers are skipped and the report says so.
Result<LayoutPdfReport> WriteImageLayoutPdf(const image::RgbImage& page, double width_pt,
                                            double height_pt, const LayoutPlan& plan,
                                            const std::string& path);
// The same with the numbers' font chosen by the caller (layout_draw.h).
Result<LayoutPdfReport> WriteImageLayoutPdf(const image::RgbImage& page, double width_pt,
                                            double height_pt, const LayoutPlan& plan,
                                            const std::string& path, const LayoutNumberFont& font);

}  // namespace mineru::pdf
