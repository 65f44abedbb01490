// SPDX-License-Identifier: Apache-2.0
#include "service/page_preview.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "image/decode.h"
#include "image/encode.h"
#include "image/pdf/pdf_document.h"
#include "image/resize.h"

namespace mineru::service {
namespace {

bool IsPdfFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::string head(1024, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(file.gcount()));
  return head.find("%PDF-") != std::string::npos;
}

Result<std::string> Jpeg(const image::RgbImage& rgb) {
  MINERU_ASSIGN_OR_RETURN(std::vector<uint8_t> jpeg, image::EncodeJpeg(rgb));
  return std::string(jpeg.begin(), jpeg.end());
}

}  // namespace

Result<std::string> RenderPreview(const std::string& input_path, int page,
                                  const pdf::RenderOptions& render, int long_side) {
  if (page < 0) return Fail(ErrorCode::kNotFound, "page {} does not exist", page);
  if (IsPdfFile(input_path)) {
    pdf::RenderOptions options = render;
    options.max_long_side = long_side;  // the renderer scales down to fit, never up
    MINERU_ASSIGN_OR_RETURN(auto document, pdf::PdfDocument::Open(input_path, options));
    if (page >= document->info().page_count()) {
      return Fail(ErrorCode::kNotFound, "page {} does not exist ({} pages)", page,
                  document->info().page_count());
    }
    MINERU_ASSIGN_OR_RETURN(pdf::PageImage rendered, document->RenderPage(page));
    image::RgbImage rgb;
    rgb.width = rendered.width();
    rgb.height = rendered.height();
    rgb.pixels = std::move(rendered.rgb);
    return Jpeg(rgb);
  }
  if (page != 0) return Fail(ErrorCode::kNotFound, "an image has only page 0");
  MINERU_ASSIGN_OR_RETURN(image::DecodedImage decoded, image::DecodeImageFile(input_path));
  const int64_t longest = std::max(decoded.image.width, decoded.image.height);
  if (longest <= long_side) return Jpeg(decoded.image);
  const double scale = static_cast<double>(long_side) / static_cast<double>(longest);
  const int64_t w = std::max<int64_t>(1, std::lround(decoded.image.width * scale));
  const int64_t h = std::max<int64_t>(1, std::lround(decoded.image.height * scale));
  MINERU_ASSIGN_OR_RETURN(image::RgbImage small, image::ResizeBicubic(decoded.image, w, h));
  return Jpeg(small);
}

}  // namespace mineru::service
