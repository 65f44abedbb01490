// SPDX-License-Identifier: Apache-2.0
// Answers of the pipeline's model requests kept by content, so that what repeats across pages
// and documents (running headers and footers, logos, stamps, a cover page) is recognised once.
// The key is exact (docs/DESIGN.md): the SHA-256 of the request image's pixels and size, the
// prompt, every sampling parameter and the token cap; the cache itself adds the model's
// fingerprint. Only deterministic requests are cached (greedy, or sampled with a seed).
//
// Implementations (cache/block_cache.h) are thread-safe: pages on several threads share one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/sampling.h"
#include "image/image.h"

namespace mineru::pipeline {

class RequestCache {
 public:
  virtual ~RequestCache() = default;
  virtual std::optional<std::string> Get(const std::string& key) = 0;
  virtual void Put(const std::string& key, const std::string& answer) = 0;
};

// The key of a request on one image; nullopt when the request is not deterministic (sampled
// without a seed), so it must not be cached.
std::optional<std::string> RequestCacheKey(const image::RgbImage& image, std::string_view prompt,
                                           const engine::SamplingParams& sampling,
                                           std::optional<int64_t> max_new_tokens);

}  // namespace mineru::pipeline
