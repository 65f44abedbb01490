// SPDX-License-Identifier: Apache-2.0
// The cache of single model answers (pipeline::RequestCache): a page's layout or a block's
// recognition, keyed by the request's content (pipeline/request_cache.h) and the model's
// fingerprint. In process: least recently used dropped first within a byte bound. With Redis
// (the --cache URL) a second tier shared by every node: keys `mineru:block:<fingerprint>|<key>`,
// SETEX with the cache TTL. Repeated headers, footers, logos and stamps across pages,
// documents and machines are then recognised once. Redis trouble is a miss, never an error.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/byte_lru.h"
#include "cache/redis_client.h"
#include "pipeline/request_cache.h"

namespace mineru::jobs {

inline constexpr uint64_t kDefaultBlockCacheBytes = 64ull << 20;
// Largest answer kept in Redis (a block's text; a degenerate answer is not worth sharing).
inline constexpr size_t kMaxSharedAnswerBytes = 1 << 20;

class BlockCache final : public pipeline::RequestCache {
 public:
  // capacity_bytes 0: no in-process tier; redis null: no shared tier.
  BlockCache(uint64_t capacity_bytes, std::string model_fingerprint,
             std::unique_ptr<RedisClient> redis = nullptr,
             std::chrono::seconds ttl = std::chrono::hours(2))
      : lru_(capacity_bytes),
        fingerprint_(std::move(model_fingerprint)),
        redis_(std::move(redis)),
        ttl_(ttl) {}

  bool enabled() const { return lru_.Stats().capacity_bytes > 0 || redis_ != nullptr; }

  std::optional<std::string> Get(const std::string& key) override {
    std::string full = FullKey(key);
    if (std::optional<std::string> hit = lru_.Get(full)) return hit;
    if (!redis_) return std::nullopt;
    auto reply = redis_->Command({"GET", "mineru:block:" + full});
    if (!reply || reply->type != RedisReply::Type::kString) return std::nullopt;
    const uint64_t cost = full.size() + reply->str.size();
    lru_.Put(std::move(full), reply->str, cost);
    ++shared_hits_;
    return std::move(reply->str);
  }
  // An entry costs its key and its answer.
  void Put(const std::string& key, const std::string& answer) override {
    std::string full = FullKey(key);
    if (redis_ && answer.size() <= kMaxSharedAnswerBytes) {
      redis_->Command({"SETEX", "mineru:block:" + full, std::to_string(ttl_.count()), answer});
    }
    const uint64_t cost = full.size() + answer.size();
    lru_.Put(std::move(full), answer, cost);
  }
  // The in-process tier's statistics.
  CacheStats Stats() const { return lru_.Stats(); }
  // Answers found in Redis (after an in-process miss).
  int64_t shared_hits() const { return shared_hits_.load(); }

 private:
  std::string FullKey(const std::string& key) const { return fingerprint_ + "|" + key; }

  ByteLru<std::string> lru_;
  const std::string fingerprint_;
  const std::unique_ptr<RedisClient> redis_;
  const std::chrono::seconds ttl_;
  std::atomic<int64_t> shared_hits_{0};
};

// A block cache of `capacity_bytes` in process and, when `redis_url` is set, the Redis there as
// its shared tier (on a connection of its own: blocks are many and small), entries kept `ttl`.
// Built once per process and shared by every user of the model (the task manager's pages, the
// chat API). kInvalidArgument for a malformed URL; an unreachable Redis only costs hits.
Result<std::unique_ptr<BlockCache>> MakeBlockCache(uint64_t capacity_bytes,
                                                   std::string model_fingerprint,
                                                   std::string_view redis_url,
                                                   std::chrono::seconds ttl);

}  // namespace mineru::jobs
