// SPDX-License-Identifier: Apache-2.0
// The document cache as the task manager sees it: the in-process ResultCache (tier "memory")
// in front of the shared RedisCache (tier "redis"). A lookup asks memory first, then Redis,
// and keeps a Redis hit in memory; a store goes to both. Either tier may be off. Every lookup
// of a tier that is on is reported as a hit or a miss, except a Redis lookup that failed, which
// is reported as an error instead (and served as a miss); a failed Redis store is reported as an
// error too. A document too large for Redis is simply not stored there.
//
// Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/document_outputs.h"
#include "cache/redis_cache.h"
#include "cache/result_cache.h"

namespace mineru::jobs {

inline constexpr std::string_view kMemoryCacheTier = "memory";
inline constexpr std::string_view kRedisCacheTier = "redis";

struct CacheObservers {
  std::function<void(std::string_view tier, bool hit)> on_lookup;
  std::function<void(std::string_view tier, const Error& error)> on_error;
};

class TieredCache {
 public:
  // memory_bytes 0: no in-process tier; redis null: no shared tier.
  TieredCache(uint64_t memory_bytes, std::unique_ptr<RedisCache> redis, CacheObservers observers);

  // Whether any tier is on (lookups and stores do nothing otherwise).
  bool enabled() const { return memory_on_ || redis_ != nullptr; }

  // The cached outputs; nullptr on a miss in every tier.
  std::shared_ptr<const DocumentOutputs> Get(const std::string& key);
  void Put(const std::string& key, std::shared_ptr<const DocumentOutputs> outputs);

  // The in-process tier's statistics.
  CacheStats MemoryStats() const { return memory_.Stats(); }

 private:
  const bool memory_on_;
  ResultCache memory_;
  const std::unique_ptr<RedisCache> redis_;
  const CacheObservers observers_;
};

}  // namespace mineru::jobs
