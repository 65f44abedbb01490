// SPDX-License-Identifier: Apache-2.0
#include "cache/block_cache.h"

namespace mineru::jobs {

Result<std::unique_ptr<BlockCache>> MakeBlockCache(uint64_t capacity_bytes,
                                                   std::string model_fingerprint,
                                                   std::string_view redis_url,
                                                   std::chrono::seconds ttl) {
  std::unique_ptr<RedisClient> redis;
  if (!redis_url.empty()) {
    MINERU_ASSIGN_OR_RETURN(RedisOptions server, ParseRedisUrl(redis_url));
    redis = std::make_unique<RedisClient>(std::move(server));
  }
  return std::make_unique<BlockCache>(capacity_bytes, std::move(model_fingerprint),
                                      std::move(redis), ttl);
}

}  // namespace mineru::jobs
