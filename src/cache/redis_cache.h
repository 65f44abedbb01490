// SPDX-License-Identifier: Apache-2.0
// The shared cache of parsed documents in Redis (the second level behind the in-process
// ResultCache; cache/tiered_cache.h puts them together): any node that parsed a document lets
// every node serve it again. Keys are "mineru:doc:" + DocumentCacheKey (exact: a hit is
// byte-identical outputs); values are document_codec.h's encoding, written with SETEX so they
// expire after the TTL.
//
// The cache fails open: callers treat every error as a miss (and count it), so a Redis that is
// down, slow or refusing writes (OOM, MISCONF, READONLY) costs only the cache, never a task.
// Values read back are checked like any outside bytes (kCorrupt).
//
// Thread-safe (one RedisClient connection, one round trip at a time).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/document_outputs.h"
#include "cache/redis_client.h"

namespace mineru::jobs {

// The seed's cache lifetime.
inline constexpr std::chrono::seconds kDefaultRedisTtl{2 * 3600};
// One encoded document at most, either way: larger ones are not stored, and a larger value
// read back is refused before it is parsed. Redis' own cap on a string is 512 MB.
inline constexpr uint64_t kDefaultMaxRedisValueBytes = 64ull << 20;
inline constexpr std::string_view kRedisDocumentKeyPrefix = "mineru:doc:";

struct RedisCacheOptions {
  RedisOptions redis;
  std::chrono::seconds ttl = kDefaultRedisTtl;
  uint64_t max_value_bytes = kDefaultMaxRedisValueBytes;
};

class RedisCache {
 public:
  // kInvalidArgument for a TTL under 1 s or a zero value cap. Does not connect yet.
  static Result<std::unique_ptr<RedisCache>> Create(RedisCacheOptions options);

  // The document stored under `key`; nullopt when there is none. Errors: kUnavailable and
  // kInternal (RedisClient), kResourceExhausted (the value exceeds max_value_bytes), kCorrupt
  // (the value is not a document encoding).
  Result<std::optional<DocumentOutputs>> Get(const std::string& key);

  // Stores `outputs` under `key` for `ttl` (at least 1 s). kResourceExhausted (nothing stored)
  // when the encoding exceeds max_value_bytes; RedisClient's errors otherwise.
  Status Put(const std::string& key, const DocumentOutputs& outputs, std::chrono::seconds ttl);
  Status Put(const std::string& key, const DocumentOutputs& outputs) {
    return Put(key, outputs, options_.ttl);
  }

  // The Redis key of a cache key.
  static std::string RedisKey(std::string_view key);

  const RedisCacheOptions& options() const { return options_; }

 private:
  explicit RedisCache(RedisCacheOptions options)
      : options_(std::move(options)), client_(options_.redis) {}

  const RedisCacheOptions options_;
  RedisClient client_;
};

}  // namespace mineru::jobs
