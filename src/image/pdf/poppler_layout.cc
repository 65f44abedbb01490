// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/poppler_layout.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <poppler.h>

#include <cmath>
#include <utility>

#include "image/pdf/layout_draw.h"

namespace mineru::pdf {

struct PopplerLayoutWriter::Impl {
  ::PopplerDocument* doc = nullptr;
  cairo_surface_t* surface = nullptr;  // the PDF in progress, or null
  Sink sink;
  // Set while a surface is destroyed unfinished: cairo then writes the rest of the PDF, which
  // nobody wants.
  bool discard = false;

  ~Impl() {
    DropSurface();
    if (doc != nullptr) g_object_unref(doc);
  }

  void DropSurface() {
    if (surface == nullptr) return;
    discard = true;
    cairo_surface_destroy(surface);
    surface = nullptr;
    discard = false;
  }

  static cairo_status_t Write(void* closure, const unsigned char* data, unsigned int length) {
    auto* impl = static_cast<Impl*>(closure);
    if (!impl->discard && impl->sink) {
      impl->sink(std::string_view(reinterpret_cast<const char*>(data), length));
    }
    return CAIRO_STATUS_SUCCESS;
  }
};

namespace {

struct PageRef {
  explicit PageRef(PopplerPage* p) : page(p) {}
  ~PageRef() {
    if (page != nullptr) g_object_unref(page);
  }
  PageRef(const PageRef&) = delete;
  PageRef& operator=(const PageRef&) = delete;
  PopplerPage* page;
};

}  // namespace

PopplerLayoutWriter::PopplerLayoutWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PopplerLayoutWriter::~PopplerLayoutWriter() = default;

Result<std::unique_ptr<PopplerLayoutWriter>> PopplerLayoutWriter::Load(
    std::span<const uint8_t> bytes, const std::string& password) {
  // The mapping outlives the writer, so GBytes may point at it without a copy.
  GBytes* data = g_bytes_new_static(bytes.data(), bytes.size());
  GError* error = nullptr;
  ::PopplerDocument* doc =
      poppler_document_new_from_bytes(data, password.empty() ? nullptr : password.c_str(), &error);
  g_bytes_unref(data);  // the document holds its own reference
  if (doc == nullptr) {
    const bool locked = error != nullptr && error->domain == POPPLER_ERROR &&
                        error->code == POPPLER_ERROR_ENCRYPTED;
    const std::string why = error != nullptr ? error->message : "unknown error";
    if (error != nullptr) g_error_free(error);
    if (locked) return Fail(ErrorCode::kUnsupported, "encrypted PDF: the password is wrong");
    return Fail(ErrorCode::kCorrupt, "damaged PDF: poppler-glib cannot open it ({})", why);
  }
  auto impl = std::make_unique<Impl>();
  impl->doc = doc;
  return std::unique_ptr<PopplerLayoutWriter>(new PopplerLayoutWriter(std::move(impl)));
}

bool PopplerLayoutWriter::started() const { return impl_->surface != nullptr; }

void PopplerLayoutWriter::Begin(Sink sink) {
  impl_->DropSurface();
  impl_->sink = std::move(sink);
}

void PopplerLayoutWriter::Abandon() { impl_->DropSurface(); }

Status PopplerLayoutWriter::AddPage(const LayoutPagePlan& plan, bool* numbers_skipped) {
  Status drawn = [&]() -> Status {
    if (plan.page_index < 0 || plan.page_index >= poppler_document_get_n_pages(impl_->doc)) {
      return Fail(ErrorCode::kInvalidArgument, "no page index {} in the document", plan.page_index);
    }
    PageRef page(poppler_document_get_page(impl_->doc, plan.page_index));
    if (page.page == nullptr) return Fail(ErrorCode::kCorrupt, "poppler-glib cannot load the page");
    // The crop box turned by /Rotate: the page as displayed, the space middle.json's boxes are
    // in. Poppler draws the page turned the same way, its crop box's top left at the origin.
    double width = 0, height = 0;
    poppler_page_get_size(page.page, &width, &height);
    if (!std::isfinite(width) || !std::isfinite(height) || width <= 0 || height <= 0 ||
        width > kMaxLayoutCoordinate || height > kMaxLayoutCoordinate) {
      return Fail(ErrorCode::kCorrupt, "page box {} x {} pt is empty or not finite", width, height);
    }
    if (impl_->surface == nullptr) {
      impl_->surface =
          cairo_pdf_surface_create_for_stream(&Impl::Write, impl_.get(), width, height);
      MINERU_RETURN_IF_ERROR(CairoStatus(cairo_surface_status(impl_->surface), "layout PDF"));
      cairo_pdf_surface_set_metadata(impl_->surface, CAIRO_PDF_METADATA_CREATOR, "mineru.cpp");
    } else {
      cairo_pdf_surface_set_size(impl_->surface, width, height);
    }
    cairo_t* cr = cairo_create(impl_->surface);
    cairo_save(cr);
    // As pdftocairo -pdf does: printing mode keeps text as text and vector graphics as vectors.
    poppler_page_render_for_printing(page.page, cr);
    cairo_restore(cr);
    Status status = CairoStatus(cairo_status(cr), "drawing the page");
    if (status) {
      status = DrawLayoutOverlay(cr, plan, width, height, LayoutNumberFont::Get(), numbers_skipped);
    }
    if (status) {
      cairo_show_page(cr);
      status = CairoStatus(cairo_status(cr), "ending the page");
    }
    cairo_destroy(cr);
    return status;
  }();
  if (!drawn) impl_->DropSurface();
  return drawn;
}

Status PopplerLayoutWriter::Finish() {
  if (impl_->surface == nullptr) {
    return Fail(ErrorCode::kInvalidArgument, "no layout PDF in progress");
  }
  cairo_surface_finish(impl_->surface);
  Status status = CairoStatus(cairo_surface_status(impl_->surface), "finishing the layout PDF");
  cairo_surface_destroy(impl_->surface);
  impl_->surface = nullptr;
  return status;
}

}  // namespace mineru::pdf
