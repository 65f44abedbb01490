// SPDX-License-Identifier: Apache-2.0
// Chat completions kept by content: a deterministic request (greedy, or sampled with a seed)
// that was answered once is answered again from the cache, byte-identical, without the model.
// MinerU's own client sends every block of every page as such a request, so repeated headers,
// footers, logos and stamps across its documents cost the model once (docs/SCALE_OUT.md).
//
// The key is exact: the SHA-256 of every message (role, text parts, image parts as their
// decoded pixels and size, in order), every sampling parameter, the token cap, the stop strings
// and skip_special_tokens, under a prefix of its own ("chat1|"); the cache adds the model's
// fingerprint (cache/block_cache.h, which also holds the pipeline's single answers). A value is
// the answer's text, finish reason and token counts, so a hit reports the same usage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"

namespace mineru::service {

// nullopt when the request must not be cached: sampled without a seed, or an image that is not
// decoded pixels.
std::optional<std::string> ChatCacheKey(const engine::Request& request, bool skip_special,
                                        const std::vector<std::string>& stop);

struct CachedChat {
  std::string text;
  std::string finish_reason;  // "stop" or "length"
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

std::string EncodeCachedChat(const CachedChat& chat);
// nullopt for a value that is not an encoding (treated as a miss: the cache's bytes may come
// from Redis, written by anyone).
std::optional<CachedChat> DecodeCachedChat(std::string_view value);

}  // namespace mineru::service
