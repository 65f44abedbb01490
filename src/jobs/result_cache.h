// SPDX-License-Identifier: Apache-2.0
// The in-process cache of parsed documents: least recently used entries are dropped first, and
// the entries' bytes stay within a named bound. Keys are exact (docs/DESIGN.md): the SHA-256 of
// the document's bytes, the model's fingerprint and every option that changes the output, so a
// hit returns byte-identical outputs and nothing else ever does.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "jobs/document_outputs.h"
#include "jobs/task.h"

namespace mineru::jobs {

inline constexpr uint64_t kDefaultCacheBytes = 256ull << 20;

// "<sha256 of bytes>|<model fingerprint>|<options.Key()>".
std::string DocumentCacheKey(std::string_view document_bytes, std::string_view model_fingerprint,
                             const ParseOptions& options);

struct CacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t capacity_bytes = 0;
};

class ResultCache {
 public:
  // capacity_bytes 0 disables the cache (every lookup misses, nothing is kept).
  explicit ResultCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The entry, now the most recently used; nullptr on a miss. Counts the hit or miss.
  std::shared_ptr<const DocumentOutputs> Get(const std::string& key);
  // Inserts or replaces; an entry larger than the whole capacity is not kept. Evicts least
  // recently used entries until the total fits.
  void Put(const std::string& key, std::shared_ptr<const DocumentOutputs> outputs);
  CacheStats Stats() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const DocumentOutputs> outputs;
    uint64_t bytes = 0;
  };
  const uint64_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  uint64_t bytes_ = 0;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace mineru::jobs
