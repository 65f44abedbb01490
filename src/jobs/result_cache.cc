// SPDX-License-Identifier: Apache-2.0
#include "jobs/result_cache.h"

#include <fmt/format.h>

#include "base/sha256.h"

namespace mineru::jobs {

std::string DocumentCacheKey(std::string_view document_bytes, std::string_view model_fingerprint,
                             const ParseOptions& options) {
  return fmt::format("{}|{}|{}", HexString(Sha256Of(document_bytes)), model_fingerprint,
                     options.Key());
}

}  // namespace mineru::jobs
