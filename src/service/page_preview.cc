// SPDX-License-Identifier: Apache-2.0
#include "service/page_preview.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "image/decode.h"
#include "image/encode.h"
#include "image/pdf/pdf_document.h"
#include "image/resize.h"

namespace mineru::service {
namespace {

// Page counts remembered: each entry costs its key and an int, so this holds thousands.
constexpr uint64_t kPageCountCacheBytes = uint64_t{1} << 20;
constexpr uint64_t kPageCountEntryBytes = 64;

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

tl::unexpected<Error> PastTheEnd(int page, int page_count) {
  return Fail(ErrorCode::kNotFound, "page {} does not exist ({} pages)", page, page_count);
}

// A rendered preview, or (jpeg empty) the page count of a PDF whose page `page` is past its end.
struct Rendered {
  std::string jpeg;
  std::optional<int> pdf_pages;  // set for PDFs
};

Result<Rendered> RenderAndCount(const std::string& input_path, int page,
                                const pdf::RenderOptions& render, int long_side) {
  if (IsPdfFile(input_path)) {
    pdf::RenderOptions options = render;
    options.max_long_side = long_side;  // the renderer scales down to fit, never up
    MINERU_ASSIGN_OR_RETURN(auto document, pdf::PdfDocument::Open(input_path, options));
    Rendered out;
    out.pdf_pages = document->info().page_count();
    if (page >= *out.pdf_pages) return out;
    MINERU_ASSIGN_OR_RETURN(pdf::PageImage rendered, document->RenderPage(page));
    MINERU_ASSIGN_OR_RETURN(out.jpeg, Jpeg(rendered.image));
    return out;
  }
  if (page != 0) return Fail(ErrorCode::kNotFound, "an image has only page 0");
  MINERU_ASSIGN_OR_RETURN(image::DecodedImage decoded, image::DecodeImageFile(input_path));
  const int64_t longest = std::max(decoded.image.width, decoded.image.height);
  Rendered out;
  if (longest <= long_side) {
    MINERU_ASSIGN_OR_RETURN(out.jpeg, Jpeg(decoded.image));
    return out;
  }
  const double scale = static_cast<double>(long_side) / static_cast<double>(longest);
  const int64_t w = std::max<int64_t>(1, std::lround(decoded.image.width * scale));
  const int64_t h = std::max<int64_t>(1, std::lround(decoded.image.height * scale));
  MINERU_ASSIGN_OR_RETURN(image::RgbImage small, image::ResizeBicubic(decoded.image, w, h));
  MINERU_ASSIGN_OR_RETURN(out.jpeg, Jpeg(small));
  return out;
}

}  // namespace

Result<std::string> RenderPreview(const std::string& input_path, int page,
                                  const pdf::RenderOptions& render, int long_side) {
  if (page < 0) return Fail(ErrorCode::kNotFound, "page {} does not exist", page);
  MINERU_ASSIGN_OR_RETURN(Rendered rendered, RenderAndCount(input_path, page, render, long_side));
  if (rendered.jpeg.empty()) return PastTheEnd(page, rendered.pdf_pages.value_or(0));
  return std::move(rendered.jpeg);
}

// One render in progress; requests for the same preview wait for its result.
struct PagePreviews::Flight {
  bool done = false;
  Result<PreviewBytes> result;
};

namespace {
PreviewOptions Checked(PreviewOptions options) {
  options.max_renders = std::clamp(options.max_renders, 1, kMaxPreviewRendersCeiling);
  options.max_waiting = std::clamp(options.max_waiting, 0, kMaxPreviewWaitingCeiling);
  return options;
}
}  // namespace

PagePreviews::PagePreviews(PreviewOptions options)
    : options_(Checked(options)), jpegs_(options.cache_bytes), page_counts_(kPageCountCacheBytes) {}

Result<PreviewBytes> PagePreviews::Get(const std::string& document_key,
                                       const std::string& input_path, int page,
                                       const pdf::RenderOptions& render) {
  if (page < 0) return Fail(ErrorCode::kNotFound, "page {} does not exist", page);
  if (std::optional<int> pages = page_counts_.Get(document_key); pages && page >= *pages) {
    return PastTheEnd(page, *pages);
  }
  const std::string key = fmt::format("{}#{}", document_key, page);
  // Looked up under mutex_: a render puts its JPEG into the cache before it leaves in_flight_,
  // so a preview that is kept is rendered once.
  std::unique_lock lock(mutex_);
  bool waiting = false;  // this request counts in waiting_
  while (true) {
    if (std::optional<PreviewBytes> hit = jpegs_.Get(key)) {
      if (waiting) --waiting_;
      ++hits_;
      return *hit;
    }
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      if (waiting) --waiting_;
      const std::shared_ptr<Flight> flight = it->second;
      flight_done_.wait(lock, [&] { return flight->done; });
      ++hits_;
      return flight->result;
    }
    if (renders_in_flight_ < options_.max_renders) break;
    if (!waiting) {
      if (waiting_ >= options_.max_waiting) {
        ++refused_;
        return Fail(ErrorCode::kUnavailable,
                    "{} page previews are being rendered (the limit, --max-preview-renders) and "
                    "{} are waiting (--max-preview-waiting); retry later",
                    renders_in_flight_, waiting_);
      }
      waiting = true;
      ++waiting_;
      ++waited_;
    }
    // Every render that ends notifies: the slot it freed, or the page it put in the cache.
    flight_done_.wait(lock);
  }
  if (waiting) --waiting_;
  auto flight = std::make_shared<Flight>();
  in_flight_.emplace(key, flight);
  ++renders_in_flight_;
  ++renders_;
  lock.unlock();

  Result<PreviewBytes> result = Render(document_key, key, input_path, page, render);

  lock.lock();
  flight->result = result;
  flight->done = true;
  in_flight_.erase(key);
  --renders_in_flight_;
  lock.unlock();
  flight_done_.notify_all();
  return result;
}

Result<PreviewBytes> PagePreviews::Render(const std::string& document_key, const std::string& key,
                                          const std::string& input_path, int page,
                                          const pdf::RenderOptions& render) {
  MINERU_ASSIGN_OR_RETURN(Rendered rendered,
                          RenderAndCount(input_path, page, render, options_.long_side));
  if (rendered.pdf_pages) {
    page_counts_.Put(document_key, *rendered.pdf_pages, document_key.size() + kPageCountEntryBytes);
  }
  if (rendered.jpeg.empty()) return PastTheEnd(page, rendered.pdf_pages.value_or(0));
  const uint64_t cost = rendered.jpeg.size();
  auto bytes = std::make_shared<const std::string>(std::move(rendered.jpeg));
  jpegs_.Put(key, bytes, cost);
  return bytes;
}

PreviewStats PagePreviews::Stats() const {
  PreviewStats stats;
  {
    std::lock_guard lock(mutex_);
    stats.renders = renders_;
    stats.hits = hits_;
    stats.refused = refused_;
    stats.waited = waited_;
    stats.in_flight = renders_in_flight_;
  }
  stats.cache = jpegs_.Stats();
  return stats;
}

}  // namespace mineru::service
