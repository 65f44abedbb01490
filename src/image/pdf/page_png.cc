// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/page_png.h"

#include <png.h>

#include <cmath>
#include <csetjmp>
#include <string>
#include <vector>

#include "base/mapped_file.h"

namespace mineru::pdf {
namespace {

struct PngSink {
  std::string bytes;
};

void Append(png_structp png, png_bytep data, png_size_t length) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  sink->bytes.append(reinterpret_cast<const char*>(data), length);
}

void NoFlush(png_structp) {}

Status CheckPage(const PageImage& page) {
  const size_t expected = static_cast<size_t>(page.width()) * page.height() * 3;
  if (page.width() < 1 || page.height() < 1 || page.rgb.size() != expected) {
    return Fail(ErrorCode::kInvalidArgument, "page image {} x {} has {} bytes, expected {}",
                page.width(), page.height(), page.rgb.size(), expected);
  }
  return OkStatus();
}

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// libpng reports errors by longjmp; kept in a function with no C++ objects that need unwinding.
bool EncodePng(const PageImage& page, PngSink* sink) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, &Append, &NoFlush);
  png_set_compression_level(png, 1);
  png_set_IHDR(png, info, static_cast<png_uint_32>(page.width()),
               static_cast<png_uint_32>(page.height()), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  // Pixels per metre at the page's resolution (scale pixels per point, 72 points per inch).
  const auto ppm = static_cast<png_uint_32>(std::lround(page.scale() * 72 / 0.0254));
  png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
  png_write_info(png, info);
  const size_t stride = static_cast<size_t>(page.width()) * 3;
  for (int y = 0; y < page.height(); ++y) {
    png_write_row(png, const_cast<png_bytep>(page.rgb.data() + y * stride));
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

Status WritePagePng(const PageImage& page, const std::string& path) {
  MINERU_RETURN_IF_ERROR(CheckPage(page));
  PngSink sink;
  if (!EncodePng(page, &sink)) return Fail(ErrorCode::kInternal, "{}: PNG encoding failed", path);
  return WriteFileAtomically(path, AsBytes(sink.bytes));
}

Status WritePagePpm(const PageImage& page, const std::string& path) {
  MINERU_RETURN_IF_ERROR(CheckPage(page));
  std::string bytes =
      "P6\n" + std::to_string(page.width()) + " " + std::to_string(page.height()) + "\n255\n";
  bytes.append(reinterpret_cast<const char*>(page.rgb.data()), page.rgb.size());
  return WriteFileAtomically(path, AsBytes(bytes));
}

}  // namespace mineru::pdf
