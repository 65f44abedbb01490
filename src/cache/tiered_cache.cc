// SPDX-License-Identifier: Apache-2.0
#include "cache/tiered_cache.h"

namespace mineru::jobs {

TieredCache::TieredCache(uint64_t memory_bytes, std::unique_ptr<RedisCache> redis,
                         CacheObservers observers)
    : memory_on_(memory_bytes > 0),
      memory_(memory_bytes),
      redis_(std::move(redis)),
      observers_(std::move(observers)) {}

std::shared_ptr<const DocumentOutputs> TieredCache::Get(const std::string& key) {
  if (memory_on_) {
    std::shared_ptr<const DocumentOutputs> hit = memory_.Get(key);
    if (observers_.on_lookup) observers_.on_lookup(kMemoryCacheTier, hit != nullptr);
    if (hit) return hit;
  }
  if (!redis_) return nullptr;
  Result<std::optional<DocumentOutputs>> found = redis_->Get(key);
  if (!found) {
    if (observers_.on_error) observers_.on_error(kRedisCacheTier, found.error());
    return nullptr;
  }
  if (observers_.on_lookup) observers_.on_lookup(kRedisCacheTier, found->has_value());
  if (!found->has_value()) return nullptr;
  auto outputs = std::make_shared<const DocumentOutputs>(std::move(**found));
  if (memory_on_) memory_.Put(key, outputs);
  return outputs;
}

void TieredCache::Put(const std::string& key, std::shared_ptr<const DocumentOutputs> outputs) {
  if (redis_) {
    Status stored = redis_->Put(key, *outputs);
    if (!stored && stored.error().code != ErrorCode::kResourceExhausted && observers_.on_error) {
      observers_.on_error(kRedisCacheTier, stored.error());
    }
  }
  if (memory_on_) memory_.Put(key, std::move(outputs));
}

}  // namespace mineru::jobs
