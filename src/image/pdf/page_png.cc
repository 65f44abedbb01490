// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/page_png.h"

#include <cmath>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "image/encode.h"

namespace mineru::pdf {
namespace {

Status CheckPage(const PageImage& page) {
  const size_t expected = static_cast<size_t>(page.width()) * page.height() * 3;
  if (page.width() < 1 || page.height() < 1 || page.image.width != page.width() ||
      page.image.height != page.height() || page.image.pixels.size() != expected) {
    return Fail(ErrorCode::kInvalidArgument, "page image {} x {} has {} bytes, expected {}",
                page.width(), page.height(), page.image.pixels.size(), expected);
  }
  return OkStatus();
}

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

Status WritePagePng(const PageImage& page, const std::string& path) {
  MINERU_RETURN_IF_ERROR(CheckPage(page));
  // Pixels per metre at the page's resolution (scale pixels per point, 72 points per inch).
  const auto ppm = static_cast<uint32_t>(std::lround(page.scale() * 72 / 0.0254));
  auto png = image::EncodePng(page.image, {.compression_level = 1, .pixels_per_metre = ppm});
  if (!png) return Fail(ErrorCode::kInternal, "{}: PNG encoding failed", path);
  return WriteFileAtomically(path, *png);
}

Status WritePagePpm(const PageImage& page, const std::string& path) {
  MINERU_RETURN_IF_ERROR(CheckPage(page));
  std::string bytes =
      "P6\n" + std::to_string(page.width()) + " " + std::to_string(page.height()) + "\n255\n";
  bytes.append(reinterpret_cast<const char*>(page.image.pixels.data()), page.image.pixels.size());
  return WriteFileAtomically(path, AsBytes(bytes));
}

}  // namespace mineru::pdf
