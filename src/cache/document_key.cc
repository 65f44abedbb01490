// SPDX-License-Identifier: Apache-2.0
#include "cache/document_key.h"

#include <fmt/format.h>

#include "base/sha256.h"

namespace mineru::jobs {

std::string ParseOptions::Key() const {
  std::string key = fmt::format("formula={};table={};start={};end={}", formula ? 1 : 0,
                                table ? 1 : 0, start_page ? std::to_string(*start_page) : "-",
                                end_page ? std::to_string(*end_page) : "-");
  // Only when set, so the keys of requests without it stay what they were.
  if (image_analysis) key += fmt::format(";image_analysis={}", *image_analysis ? 1 : 0);
  return key;
}

std::string DocumentCacheKey(std::string_view document_bytes, std::string_view model_fingerprint,
                             const ParseOptions& options) {
  return fmt::format("{}|{}|{}", HexString(Sha256Of(document_bytes)), model_fingerprint,
                     options.Key());
}

}  // namespace mineru::jobs
