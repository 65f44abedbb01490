// SPDX-License-Identifier: Apache-2.0
// A map that drops its least recently used entries to keep their total cost (bytes, as the
// caller counts them) within a bound; counts hits and misses. The one eviction policy of the
// result and block caches. Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace mineru::jobs {

struct CacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t capacity_bytes = 0;
};

template <class Value>
class ByteLru {
 public:
  // capacity_bytes 0: nothing is kept (every lookup misses).
  explicit ByteLru(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The value, now the most recently used; nullopt on a miss. Counts the hit or miss.
  std::optional<Value> Get(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return std::nullopt;
    }
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->value;
  }

  // Inserts or replaces. `cost` is the entry's size (the caller includes the key); an entry
  // larger than the whole capacity is not kept. Least recently used entries are evicted until
  // the total fits: the total never exceeds the capacity, and exactly reaching it is allowed.
  void Put(std::string key, Value value, uint64_t cost) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      bytes_ -= it->second->cost;
      lru_.erase(it->second);
      index_.erase(it);
    }
    if (cost > capacity_) return;
    while (bytes_ + cost > capacity_ && !lru_.empty()) {
      bytes_ -= lru_.back().cost;
      index_.erase(lru_.back().key);
      lru_.pop_back();
    }
    lru_.push_front({std::move(key), std::move(value), cost});
    index_[lru_.front().key] = lru_.begin();
    bytes_ += cost;
  }

  CacheStats Stats() const {
    std::lock_guard lock(mutex_);
    return {hits_, misses_, static_cast<int64_t>(lru_.size()), bytes_, capacity_};
  }

 private:
  struct Entry {
    std::string key;
    Value value;
    uint64_t cost = 0;
  };
  const uint64_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
  uint64_t bytes_ = 0;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace mineru::jobs
