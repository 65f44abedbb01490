// SPDX-License-Identifier: Apache-2.0
// A rendered PDF page and what is known about a document's pages before rendering them. The
// pixels are the image layer's one container (image/image.h), so the pipeline takes a page
// without copying or converting it.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "image/image.h"

namespace mineru::pdf {

// One page as it is displayed: Poppler's crop box (clipped to the media box), turned by the
// page's /Rotate. Sizes are rounded to single precision, as PDFium reports them to MinerU
// (FPDF_GetPageWidthF), so that MinerU's pixel sizes come out the same.
struct PageInfo {
  double width_pt = 0;   // after rotation, in points (1/72 inch)
  double height_pt = 0;  // after rotation
  int rotation = 0;      // the page's /Rotate: 0, 90, 180 or 270 degrees clockwise
};

struct DocumentInfo {
  std::vector<PageInfo> pages;  // one entry per page of the document, in order
  int page_count() const { return static_cast<int>(pages.size()); }
};

// The size a page is rendered at.
struct PageGeometry {
  double scale = 0;  // pixels per point; MinerU's `scale` (bbox in points x scale = pixels)
  int width = 0;     // pixels
  int height = 0;
};

// MinerU's rule (mineru/utils/pdf_reader.py page_to_image, then pypdfium2 PdfPage.render):
//   scale = dpi / 72; if the longer side x scale > max_long_side: scale = max_long_side / longer
//   width = ceil(width_pt x scale), height = ceil(height_pt x scale)
// in double precision, so a capped side can come out one pixel over the cap exactly where
// MinerU's does (a 200,000 pt square gives 3501 x 3501). Errors: kCorrupt for a page box that
// is empty or not finite, kResourceExhausted past max_pixels.
Result<PageGeometry> ComputePageGeometry(const PageInfo& page, double dpi, int max_long_side,
                                         int64_t max_pixels);

// A rendered page: image.width x image.height == geometry.width x geometry.height.
struct PageImage {
  int index = 0;  // 0-based page index in the document
  PageInfo info;
  PageGeometry geometry;
  image::RgbImage image;

  int width() const { return geometry.width; }
  int height() const { return geometry.height; }
  double scale() const { return geometry.scale; }
};

}  // namespace mineru::pdf
