// SPDX-License-Identifier: Apache-2.0
// Writes a rendered page as a PNG file (the image layer's encoder, image/encode.h) for
// `mineru-cpp render`: a tool's output for people to look at, not a step of the pipeline (which
// keeps pixels in memory).
#pragma once

#include <string>

#include "base/status.h"
#include "image/pdf/page_image.h"

namespace mineru::pdf {

// 8-bit RGB PNG, no interlacing, zlib level 1 (large pages compress fast; the files are for
// looking at, not archiving), pHYs set to the page's resolution. Written atomically.
Status WritePagePng(const PageImage& page, const std::string& path);

// Binary PPM (P6): what pdftoppm writes by default; trivially readable by tests and tools.
Status WritePagePpm(const PageImage& page, const std::string& path);

}  // namespace mineru::pdf
