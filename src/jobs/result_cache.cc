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

std::shared_ptr<const DocumentOutputs> ResultCache::Get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->outputs;
}

void ResultCache::Put(const std::string& key, std::shared_ptr<const DocumentOutputs> outputs) {
  const uint64_t bytes = outputs->ByteSize() + key.size();
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  if (bytes > capacity_) return;
  while (bytes_ + bytes > capacity_ && !lru_.empty()) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front({key, std::move(outputs), bytes});
  index_[key] = lru_.begin();
  bytes_ += bytes;
}

CacheStats ResultCache::Stats() const {
  std::lock_guard lock(mutex_);
  return {hits_, misses_, static_cast<int64_t>(lru_.size()), bytes_, capacity_};
}

}  // namespace mineru::jobs
