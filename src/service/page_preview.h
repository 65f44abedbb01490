// SPDX-License-Identifier: Apache-2.0
// A page of a task's input as a small JPEG, for the web UI's page view (its layout boxes are
// drawn from model.json, whose boxes are fractions of the page, so any scale will do).
//
// A preview costs what its page costs: a PDF is opened by the render helper (which may inflate
// a small file up to the helper's memory limit) and an image is decoded whole. PagePreviews
// therefore
//   - keeps the JPEGs it made in an LRU bounded in bytes (PreviewOptions::cache_bytes), and the
//     page count of every PDF it opened, so that a page past the end costs nothing the second
//     time;
//   - renders one page once however many requests ask for it together (the later ones wait for
//     the first render, without a render slot of their own);
//   - renders at most PreviewOptions::max_renders pages at once; up to
//     PreviewOptions::max_waiting more wait for a render slot (a browser loading a document's
//     page images at once, which cannot retry an <img> on 503, gets them all), and one more is
//     refused with kUnavailable (HTTP 503 with Retry-After: the condition passes when a render
//     ends). A waiter holds a server thread, so the wait is bounded in count, not in time; a
//     render is bounded by the render helper's limits.
//
//   PagePreviews previews({.cache_bytes = 64 << 20, .max_renders = 2, .max_waiting = 32});
//   Result<PreviewBytes> jpeg = previews.Get("<task>/<doc>", input_path, page, render);
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "cache/byte_lru.h"
#include "image/pdf/render_options.h"

namespace mineru::service {

// Long side of a preview, in pixels.
inline constexpr int kPreviewLongSide = 1024;
// JPEG bytes of previews kept (`serve --preview-cache-bytes`): a 1024-pixel preview is 50-200 KB,
// so several hundred pages.
inline constexpr uint64_t kDefaultPreviewCacheBytes = uint64_t{64} << 20;
// Previews rendered at once (`serve --max-preview-renders`): each may hold a render helper at its
// memory limit (pdf::RenderLimits::helper_memory_bytes, 2 GiB by default).
inline constexpr int kDefaultMaxPreviewRenders = 2;
inline constexpr int kMaxPreviewRendersCeiling = 256;
// Previews waiting for a render slot (`serve --max-preview-waiting`): a document's pages shown at
// once by the web UI (which loads them lazily, a screenful at a time), a few users together;
// each waiter holds one of the server's handler threads (128 by default).
inline constexpr int kDefaultMaxPreviewWaiting = 32;
inline constexpr int kMaxPreviewWaitingCeiling = 1024;

struct PreviewOptions {
  // JPEG bytes kept, least recently used evicted first (a preview larger than this is not kept;
  // 0 keeps none). Every entry also holds its key (under 100 bytes), not counted.
  uint64_t cache_bytes = kDefaultPreviewCacheBytes;
  // Renders in flight at most (1 to kMaxPreviewRendersCeiling).
  int max_renders = kDefaultMaxPreviewRenders;
  // Requests waiting for a render slot at most (0 to kMaxPreviewWaitingCeiling); one more: 503.
  int max_waiting = kDefaultMaxPreviewWaiting;
  int long_side = kPreviewLongSide;
};

// Page `page` (0-based) of a PDF, or the image itself (page 0), scaled so that its long side is
// at most long_side (never upscaled), as JPEG bytes. kNotFound for a page past the end.
// `render` supplies the helper path and the render limits. Uncached and uncapped: PagePreviews
// is what a server calls.
Result<std::string> RenderPreview(const std::string& input_path, int page,
                                  const pdf::RenderOptions& render,
                                  int long_side = kPreviewLongSide);

using PreviewBytes = std::shared_ptr<const std::string>;

struct PreviewStats {
  int64_t renders = 0;    // renders started (a render of a page past the end included)
  int64_t hits = 0;       // answered from the cache (or by another request's render)
  int64_t refused = 0;    // refused because max_renders were in flight and max_waiting waited
  int64_t waited = 0;     // waited for a render slot
  int64_t in_flight = 0;  // renders running now
  jobs::CacheStats cache;
};

// Thread-safe.
class PagePreviews {
 public:
  explicit PagePreviews(PreviewOptions options = {});

  // The preview of page `page` of the file at `input_path`. `document_key` names that file in
  // the cache and must name the same bytes for as long as the cache lives (the server uses
  // "<task id>/<document>", and task ids are never reused). Errors: kNotFound (a page past the
  // end, a negative page), kUnavailable (max_renders in flight and max_waiting waiting; the
  // message names both limits),
  // and the renderer's (kCorrupt, kUnavailable, ...), which are not cached.
  Result<PreviewBytes> Get(const std::string& document_key, const std::string& input_path, int page,
                           const pdf::RenderOptions& render);

  PreviewStats Stats() const;
  const PreviewOptions& options() const { return options_; }

 private:
  struct Flight;
  Result<PreviewBytes> Render(const std::string& document_key, const std::string& key,
                              const std::string& input_path, int page,
                              const pdf::RenderOptions& render);

  const PreviewOptions options_;
  jobs::ByteLru<PreviewBytes> jpegs_;
  jobs::ByteLru<int> page_counts_;  // PDFs opened: pages in each, by document key

  mutable std::mutex mutex_;
  std::condition_variable flight_done_;
  std::unordered_map<std::string, std::shared_ptr<Flight>> in_flight_;  // by preview key
  int renders_in_flight_ = 0;
  int waiting_ = 0;  // requests waiting for a render slot
  int64_t renders_ = 0, hits_ = 0, refused_ = 0, waited_ = 0;
};

}  // namespace mineru::service
