// SPDX-License-Identifier: Apache-2.0
// PNG and JPEG encoding of RGB images: crops sent to a model server as data URLs (MinerU's HTTP
// client PNG-encodes every image), the JPEG files MinerU writes for image blocks, and the pages
// `mineru-cpp render` writes (image/pdf/page_png.h).
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "image/image.h"

namespace mineru::image {

struct PngEncodeOptions {
  int compression_level = 6;  // zlib level 0-9; 6 is Pillow's and zlib's default
  // Row filters: libpng's adaptive choice among all five per row (the default; what Pillow
  // does too), or none. On document pages (flat paper, thin text) no filter is about three
  // times faster to encode and a few percent smaller at level 1: a 1036 x 1036 page 11 ms and
  // 301 KB instead of 32 ms and 314 KB.
  bool filter_rows = true;
  // > 0: a pHYs chunk saying this many pixels per metre in both directions (a rendered page's
  // resolution); 0: none.
  uint32_t pixels_per_metre = 0;
};

// Lossless 8-bit RGB PNG, no interlacing, no ancillary chunks but the pHYs one asked for.
Result<std::vector<uint8_t>> EncodePng(const RgbImage& image, const PngEncodeOptions& options = {});

enum class ChromaSubsampling {
  k444,  // no subsampling
  k422,  // half horizontal chroma resolution
  k420,  // half in both directions: Pillow's default for RGB
};

struct JpegEncodeOptions {
  int quality = 75;  // 1-100, the libjpeg quality scale; 75 is Pillow's default
  ChromaSubsampling subsampling = ChromaSubsampling::k420;
  bool progressive = false;
  bool optimize_coding = false;  // optimal Huffman tables (slower, smaller)
};

// Baseline (or progressive) JFIF JPEG through libjpeg-turbo.
Result<std::vector<uint8_t>> EncodeJpeg(const RgbImage& image,
                                        const JpegEncodeOptions& options = {});

}  // namespace mineru::image
