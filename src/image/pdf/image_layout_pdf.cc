// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/image_layout_pdf.h"

#include <cairo-pdf.h>
#include <cairo.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "base/mapped_file.h"
#include "image/pdf/layout_draw.h"

namespace mineru::pdf {
namespace {

// cairo image surfaces are limited to 32767 pixels a side.
constexpr int64_t kMaxCairoImageSide = 32767;

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* cr) const { cairo_destroy(cr); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;

// Where cairo's PDF bytes go: the temporary file, keeping the first write error.
struct FileSink {
  AtomicFileWriter* writer = nullptr;
  Status status = OkStatus();
};

cairo_status_t WriteToFile(void* closure, const unsigned char* data, unsigned int length) {
  auto* sink = static_cast<FileSink*>(closure);
  if (!sink->status) return CAIRO_STATUS_WRITE_ERROR;
  sink->status = sink->writer->Write({data, length});
  return sink->status ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

// The RGB rows as cairo's RGB24 (one native-endian 32-bit word per pixel, 0x00RRGGBB).
Result<SurfacePtr> ImageSurface(const image::RgbImage& page) {
  SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(page.width),
                                                static_cast<int>(page.height)));
  MINERU_RETURN_IF_ERROR(CairoStatus(cairo_surface_status(surface.get()), "page image"));
  cairo_surface_flush(surface.get());
  unsigned char* data = cairo_image_surface_get_data(surface.get());
  const int stride = cairo_image_surface_get_stride(surface.get());
  for (int64_t y = 0; y < page.height; ++y) {
    const uint8_t* src = page.row(y);
    auto* dst = reinterpret_cast<uint32_t*>(data + y * stride);
    for (int64_t x = 0; x < page.width; ++x) {
      dst[x] = (uint32_t{src[0]} << 16) | (uint32_t{src[1]} << 8) | src[2];
      src += 3;
    }
  }
  cairo_surface_mark_dirty(surface.get());
  return surface;
}

}  // namespace

Result<LayoutPdfReport> WriteImageLayoutPdf(const image::RgbImage& page, double width_pt,
                                            double height_pt, const LayoutPlan& plan,
                                            const std::string& path) {
  return WriteImageLayoutPdf(page, width_pt, height_pt, plan, path, LayoutNumberFont::Get());
}

Result<LayoutPdfReport> WriteImageLayoutPdf(const image::RgbImage& page, double width_pt,
                                            double height_pt, const LayoutPlan& plan,
                                            const std::string& path, const LayoutNumberFont& font) {
  MINERU_RETURN_IF_ERROR(ValidateLayoutPlan(plan, 1));
  if (plan.pages.size() != 1) {
    return Fail(ErrorCode::kInvalidArgument, "{}: an image's layout plan has {} pages, not 1", path,
                plan.pages.size());
  }
  if (page.empty() || page.pixels.size() != static_cast<size_t>(page.width) * page.height * 3) {
    return Fail(ErrorCode::kInvalidArgument,
                "{}: the page image is empty or its {} bytes are "
                "not {} x {} x 3",
                path, page.pixels.size(), page.width, page.height);
  }
  if (page.width > kMaxCairoImageSide || page.height > kMaxCairoImageSide) {
    return Fail(ErrorCode::kResourceExhausted,
                "{}: a {} x {} image is over the {} pixels a side the PDF writer (cairo) takes",
                path, page.width, page.height, kMaxCairoImageSide);
  }
  if (!std::isfinite(width_pt) || !std::isfinite(height_pt) || width_pt <= 0 || height_pt <= 0 ||
      width_pt > kMaxLayoutCoordinate || height_pt > kMaxLayoutCoordinate) {
    return Fail(ErrorCode::kInvalidArgument, "{}: page size {} x {} pt is not positive and finite",
                path, width_pt, height_pt);
  }
  MINERU_ASSIGN_OR_RETURN(SurfacePtr image, ImageSurface(page));
  MINERU_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  FileSink sink{&writer};
  SurfacePtr pdf(cairo_pdf_surface_create_for_stream(&WriteToFile, &sink, width_pt, height_pt));
  MINERU_RETURN_IF_ERROR(CairoStatus(cairo_surface_status(pdf.get()), path));
  cairo_pdf_surface_set_metadata(pdf.get(), CAIRO_PDF_METADATA_CREATOR, "mineru.cpp");
  bool numbers_skipped = false;
  {
    ContextPtr cr(cairo_create(pdf.get()));
    cairo_save(cr.get());
    cairo_scale(cr.get(), width_pt / static_cast<double>(page.width),
                height_pt / static_cast<double>(page.height));
    cairo_set_source_surface(cr.get(), image.get(), 0, 0);
    cairo_paint(cr.get());
    cairo_restore(cr.get());
    MINERU_RETURN_IF_ERROR(
        DrawLayoutOverlay(cr.get(), plan.pages[0], width_pt, height_pt, font, &numbers_skipped));
    cairo_show_page(cr.get());
    MINERU_RETURN_IF_ERROR(CairoStatus(cairo_status(cr.get()), path));
  }
  cairo_surface_finish(pdf.get());
  MINERU_RETURN_IF_ERROR(sink.status);
  MINERU_RETURN_IF_ERROR(CairoStatus(cairo_surface_status(pdf.get()), path));
  pdf.reset();
  MINERU_RETURN_IF_ERROR(writer.Commit());
  LayoutPdfReport report;
  report.pages = 1;
  if (numbers_skipped) report.warnings.push_back(LayoutNumbersSkippedWarning(font));
  return report;
}

}  // namespace mineru::pdf
