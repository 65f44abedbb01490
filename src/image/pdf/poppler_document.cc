// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/poppler_document.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>

#include <cmath>
#include <utility>

namespace mineru::pdf {
namespace {

// Poppler's messages can be long (a whole damaged object); the last one, cut, is enough to say
// what went wrong.
constexpr size_t kMaxMessageBytes = 512;

std::string& LastMessage() {
  static std::string message;
  return message;
}

void OnPopplerMessage(const std::string& message, void*) {
  LastMessage() = message.substr(0, kMaxMessageBytes);
}

std::string Detail() {
  const std::string& last = LastMessage();
  return last.empty() ? std::string() : " (Poppler: " + last + ")";
}

int RotationDegrees(poppler::page::orientation_enum orientation) {
  switch (orientation) {
    case poppler::page::landscape:
      return 90;
    case poppler::page::upside_down:
      return 180;
    case poppler::page::seascape:
      return 270;
    case poppler::page::portrait:
      break;
  }
  return 0;
}

}  // namespace

void PopplerDocument::CaptureMessages() {
  poppler::set_debug_error_function(&OnPopplerMessage, nullptr);
}

std::string PopplerDocument::LastPopplerMessage() { return LastMessage(); }

void PopplerDocument::ClearLastPopplerMessage() { LastMessage().clear(); }

Result<std::unique_ptr<PopplerDocument>> PopplerDocument::Load(std::span<const uint8_t> bytes,
                                                               const std::string& password,
                                                               int max_pages) {
  LastMessage().clear();
  // The password is tried as the owner's and as the user's: either opens the document.
  poppler::document* raw =
      poppler::document::load_from_raw_data(reinterpret_cast<const char*>(bytes.data()),
                                            static_cast<int>(bytes.size()), password, password);
  if (raw == nullptr) {
    return Fail(ErrorCode::kCorrupt, "damaged PDF: Poppler cannot open it{}", Detail());
  }
  std::unique_ptr<PopplerDocument> doc(new PopplerDocument(raw));
  if (raw->is_locked()) {
    if (password.empty()) {
      return Fail(ErrorCode::kUnsupported, "encrypted PDF: it needs a password (--password)");
    }
    return Fail(ErrorCode::kUnsupported, "encrypted PDF: the password is wrong");
  }
  const int pages = raw->pages();
  if (pages <= 0) return Fail(ErrorCode::kCorrupt, "the PDF has no pages{}", Detail());
  if (pages > max_pages) {
    return Fail(ErrorCode::kResourceExhausted, "{} pages exceed --max-pages {}", pages, max_pages);
  }
  return doc;
}

PopplerDocument::~PopplerDocument() { delete doc_; }

Result<DocumentInfo> PopplerDocument::Info() const {
  DocumentInfo info;
  const int pages = doc_->pages();
  info.pages.reserve(static_cast<size_t>(pages));
  for (int i = 0; i < pages; ++i) {
    std::unique_ptr<poppler::page> page(doc_->create_page(i));
    if (!page) {
      return Fail(ErrorCode::kCorrupt, "page {}: Poppler cannot load it{}", i + 1, Detail());
    }
    // The crop box as stored (Poppler has already clipped it to the media box), then turned by
    // /Rotate; single precision as PDFium keeps it.
    const poppler::rectf box = page->page_rect(poppler::crop_box);
    PageInfo p;
    p.rotation = RotationDegrees(page->orientation());
    double w = std::fabs(box.width()), h = std::fabs(box.height());
    if (p.rotation == 90 || p.rotation == 270) std::swap(w, h);
    p.width_pt = static_cast<float>(w);
    p.height_pt = static_cast<float>(h);
    info.pages.push_back(p);
  }
  return info;
}

Status PopplerDocument::Render(int index, double scale, int width, int height,
                               const std::function<Status(std::span<const uint8_t>)>& row) const {
  std::unique_ptr<poppler::page> page(doc_->create_page(index));
  if (!page) return Fail(ErrorCode::kCorrupt, "Poppler cannot load the page{}", Detail());
  poppler::page_renderer renderer;
  renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
  renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
  renderer.set_render_hint(poppler::page_renderer::text_hinting, false);
  renderer.set_paper_color(0xffffffff);
  // RGB24 is Splash's RGB8 mode, the one pdftoppm renders in: 3 bytes per pixel, rows padded to
  // 4 bytes. The slice 0, 0, width, height fixes the bitmap size to MinerU's (rounded up) size;
  // the page's own /Rotate is applied by Poppler.
  renderer.set_image_format(poppler::image::format_rgb24);
  LastMessage().clear();
  const double dpi = scale * 72;
  const poppler::image image = renderer.render_page(page.get(), dpi, dpi, 0, 0, width, height);
  if (!image.is_valid()) {
    return Fail(ErrorCode::kCorrupt, "Poppler could not render the page{}", Detail());
  }
  if (image.format() != poppler::image::format_rgb24 || image.bytes_per_row() < width * 3) {
    return Fail(ErrorCode::kInternal, "Poppler returned an image in another format");
  }
  if (image.width() != width || image.height() != height) {
    // Splash falls back to a 1 x 1 bitmap when it cannot allocate the page's.
    return Fail(ErrorCode::kResourceExhausted,
                "Poppler drew {} x {} pixels instead of {} x {}: it could not allocate the page",
                image.width(), image.height(), width, height);
  }
  const auto* data = reinterpret_cast<const uint8_t*>(image.const_data());
  const size_t stride = static_cast<size_t>(image.bytes_per_row());
  for (int y = 0; y < height; ++y) {
    MINERU_RETURN_IF_ERROR(row({data + y * stride, static_cast<size_t>(width) * 3}));
  }
  return OkStatus();
}

}  // namespace mineru::pdf
