// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/render_options.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace mineru::pdf {

Status ValidateRenderOptions(const RenderOptions& options) {
  if (!std::isfinite(options.dpi) || options.dpi < kMinDpi || options.dpi > kMaxDpi) {
    return Fail(ErrorCode::kInvalidArgument, "--dpi {} is outside [{}, {}]", options.dpi, kMinDpi,
                kMaxDpi);
  }
  if (options.max_long_side < 1 || options.max_long_side > kMaxLongSideCeiling) {
    return Fail(ErrorCode::kInvalidArgument, "--max-long-side {} is outside [1, {}]",
                options.max_long_side, kMaxLongSideCeiling);
  }
  if (options.password.size() > kMaxPasswordBytes) {
    return Fail(ErrorCode::kInvalidArgument, "--password is longer than {} bytes",
                kMaxPasswordBytes);
  }
  const RenderLimits& l = options.limits;
  if (l.max_page_pixels < 1 || l.max_page_pixels > kMaxPagePixelsCeiling) {
    return Fail(ErrorCode::kInvalidArgument, "--max-page-pixels {} is outside [1, {}]",
                l.max_page_pixels, kMaxPagePixelsCeiling);
  }
  if (l.max_pages < 1 || l.max_pages > kMaxPagesCeiling) {
    return Fail(ErrorCode::kInvalidArgument, "--max-pages {} is outside [1, {}]", l.max_pages,
                kMaxPagesCeiling);
  }
  if (l.max_document_bytes < 1 || l.max_document_bytes > kMaxDocumentBytesCeiling) {
    return Fail(ErrorCode::kInvalidArgument, "--max-document-bytes {} is outside [1, {}]",
                l.max_document_bytes, kMaxDocumentBytesCeiling);
  }
  // poll() takes milliseconds as an int: a day is far more than any page needs.
  if (!std::isfinite(l.page_timeout_seconds) || l.page_timeout_seconds <= 0 ||
      l.page_timeout_seconds > 86400) {
    return Fail(ErrorCode::kInvalidArgument, "--page-timeout {} is outside (0, 86400] seconds",
                l.page_timeout_seconds);
  }
  if (l.page_cpu_seconds < 1) {
    return Fail(ErrorCode::kInvalidArgument, "--page-cpu-seconds {} must be at least 1",
                l.page_cpu_seconds);
  }
  if (l.helper_memory_bytes < 0) {
    return Fail(ErrorCode::kInvalidArgument, "--helper-memory {} must be 0 (off) or positive",
                l.helper_memory_bytes);
  }
  return OkStatus();
}

Result<std::string> ResolveHelperPath(const RenderOptions& options) {
  std::string path = options.helper_path;
  std::string how = "--helper";
  if (path.empty()) {
    if (const char* env = std::getenv(kHelperEnvVar); env != nullptr && *env != '\0') {
      path = env;
      how = std::string("$") + kHelperEnvVar;
    }
  }
  if (path.empty()) {
    // The helper is installed next to the program that uses it.
    std::string self(4096, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size());
    if (n <= 0 || static_cast<size_t>(n) >= self.size()) {
      return Fail(ErrorCode::kNotFound,
                  "cannot find the render helper: /proc/self/exe is unreadable (set {})",
                  kHelperEnvVar);
    }
    self.resize(static_cast<size_t>(n));
    const size_t slash = self.rfind('/');
    path =
        (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + kHelperName;
    how = "the directory of " + self;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    return Fail(ErrorCode::kNotFound, "render helper {} (from {}) is not executable: {} (set {})",
                path, how, std::strerror(errno), kHelperEnvVar);
  }
  return path;
}

}  // namespace mineru::pdf
