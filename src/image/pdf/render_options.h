// SPDX-License-Identifier: Apache-2.0
// What a caller may ask of the PDF renderer, and the limits that bound what a hostile PDF can
// cost. Every limit has a named default, a flag of `mineru-cpp render` and a row in
// docs/LIMITS.md; the helper enforces the ones that need the kernel (memory, CPU), the client
// the ones it can check without trusting the helper (pages, pixels, bytes, wall-clock time).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace mineru::pdf {

// MinerU renders at DEFAULT_PDF_IMAGE_DPI = 200 and caps the longer side of the page image at
// 3500 pixels (mineru/utils/pdf_reader.py, page_to_image).
inline constexpr double kMineruDpi = 200;
inline constexpr int kDefaultMaxLongSide = 3500;

// Sanity bounds on the requested resolution (not limits on input: the long-side cap and the
// pixel limit bound the output whatever the DPI).
inline constexpr double kMinDpi = 1;
inline constexpr double kMaxDpi = 10000;
inline constexpr int kMaxLongSideCeiling = 1 << 20;

// Pixels of one page image. The default admits MinerU's 3500-pixel cap on any page shape (a
// square page can round to 3501 x 3501, as MinerU's does) and stops larger caps from asking
// for gigapixel bitmaps.
inline constexpr int64_t kDefaultMaxPagePixels = 4096LL * 4096;
// Highest value the pixel limit may be set to: poppler-cpp counts an image's bytes in an int.
inline constexpr int64_t kMaxPagePixelsCeiling = 500'000'000;
// Pages in one document: the number MinerU's reliability checklist attacks with.
inline constexpr int kDefaultMaxPages = 10000;
inline constexpr int kMaxPagesCeiling = 1 << 30;
// Bytes of one PDF. Poppler takes the length as an int, so the limit may not exceed 2 GiB - 1.
inline constexpr int64_t kDefaultMaxDocumentBytes = 1LL << 30;
inline constexpr int64_t kMaxDocumentBytesCeiling = (1LL << 31) - 1;
// Wall-clock time for opening the document, and again for each page; on expiry the helper is
// killed and the document fails.
inline constexpr double kDefaultPageTimeoutSeconds = 60;
// CPU seconds the helper may spend opening the document, and again on each page
// (RLIMIT_CPU, raised before each page).
inline constexpr int kDefaultPageCpuSeconds = 60;
// Address space of the helper (RLIMIT_AS). 0 turns the limit off (AddressSanitizer builds
// reserve terabytes of address space and cannot run under any such limit).
inline constexpr int64_t kDefaultHelperMemoryBytes = 2LL << 30;
// Longest password accepted (also a protocol bound).
inline constexpr size_t kMaxPasswordBytes = 1024;

// The environment variable that names the helper executable when no path is given.
inline constexpr char kHelperEnvVar[] = "MINERU_PDF_RENDER_HELPER";
// The helper's file name, looked for next to the running executable.
inline constexpr char kHelperName[] = "mineru-pdf-render";

struct RenderLimits {
  int64_t max_page_pixels = kDefaultMaxPagePixels;
  int max_pages = kDefaultMaxPages;
  int64_t max_document_bytes = kDefaultMaxDocumentBytes;
  double page_timeout_seconds = kDefaultPageTimeoutSeconds;
  int page_cpu_seconds = kDefaultPageCpuSeconds;
  int64_t helper_memory_bytes = kDefaultHelperMemoryBytes;
};

struct RenderOptions {
  double dpi = kMineruDpi;
  int max_long_side = kDefaultMaxLongSide;
  // Opens encrypted PDFs that need a user password; sent over the pipe, never on the helper's
  // command line (which every local user can read in /proc).
  std::string password;
  RenderLimits limits;
  // The helper executable; empty: $MINERU_PDF_RENDER_HELPER, else mineru-pdf-render in the
  // directory of the running executable.
  std::string helper_path;
};

// kInvalidArgument naming the first option out of range.
Status ValidateRenderOptions(const RenderOptions& options);

// The helper executable these options select (see RenderOptions::helper_path); kNotFound when
// there is none or it is not executable.
Result<std::string> ResolveHelperPath(const RenderOptions& options);

}  // namespace mineru::pdf
