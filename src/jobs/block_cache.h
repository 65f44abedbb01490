// SPDX-License-Identifier: Apache-2.0
// The in-process cache of single model answers (pipeline::RequestCache): a page's layout or a
// block's recognition, keyed by the request's content (pipeline/request_cache.h) and the model's
// fingerprint, least recently used dropped first within a byte bound. Repeated headers,
// footers, logos and stamps across pages and documents are then recognised once.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "jobs/byte_lru.h"
#include "pipeline/request_cache.h"

namespace mineru::jobs {

inline constexpr uint64_t kDefaultBlockCacheBytes = 64ull << 20;

class BlockCache final : public pipeline::RequestCache {
 public:
  // capacity_bytes 0: nothing is kept.
  BlockCache(uint64_t capacity_bytes, std::string model_fingerprint)
      : lru_(capacity_bytes), fingerprint_(std::move(model_fingerprint)) {}

  std::optional<std::string> Get(const std::string& key) override { return lru_.Get(FullKey(key)); }
  // An entry costs its key and its answer.
  void Put(const std::string& key, const std::string& answer) override {
    std::string full = FullKey(key);
    const uint64_t cost = full.size() + answer.size();
    lru_.Put(std::move(full), answer, cost);
  }
  CacheStats Stats() const { return lru_.Stats(); }

 private:
  std::string FullKey(const std::string& key) const { return fingerprint_ + "|" + key; }

  ByteLru<std::string> lru_;
  const std::string fingerprint_;
};

}  // namespace mineru::jobs
