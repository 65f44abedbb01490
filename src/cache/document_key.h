// SPDX-License-Identifier: Apache-2.0
// What names a parsed document in the result caches (cache/result_cache.h, cache/redis_cache.h):
// the options that change a parse's output, and the key built from them, the document's bytes
// and the model. Here, below the task layer, so that the caches need nothing from tasks/ (a
// task carries its ParseOptions; tasks/task.h includes this header).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mineru::jobs {

// What changes a parse's output (and therefore its cache key), besides the document and model.
struct ParseOptions {
  bool formula = true;
  bool table = true;
  std::optional<int> start_page;  // 0-based, inclusive; unset: the first page
  std::optional<int> end_page;    // unset: the last page
  // MinerU 3.4's image_analysis form field (image and chart analysis of the Pro client); unset:
  // not asked, the profile's default.
  std::optional<bool> image_analysis;

  // A canonical text of every field: part of the cache key.
  std::string Key() const;
};

// "<sha256 of bytes>|<model fingerprint>|<options.Key()>". Exact (docs/DESIGN.md): a hit
// returns byte-identical outputs and nothing else ever does.
std::string DocumentCacheKey(std::string_view document_bytes, std::string_view model_fingerprint,
                             const ParseOptions& options);

}  // namespace mineru::jobs
