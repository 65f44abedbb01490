// SPDX-License-Identifier: Apache-2.0
// The in-process cache of parsed documents: least recently used entries are dropped first, and
// the entries' bytes stay within a named bound. Keys are exact (docs/DESIGN.md): the SHA-256 of
// the document's bytes, the model's fingerprint and every option that changes the output, so a
// hit returns byte-identical outputs and nothing else ever does.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cache/byte_lru.h"
#include "cache/document_key.h"  // the keys its users build
#include "cache/document_outputs.h"

namespace mineru::jobs {

inline constexpr uint64_t kDefaultCacheBytes = 256ull << 20;

class ResultCache {
 public:
  // capacity_bytes 0 disables the cache (every lookup misses, nothing is kept).
  explicit ResultCache(uint64_t capacity_bytes) : lru_(capacity_bytes) {}

  // The entry, now the most recently used; nullptr on a miss. Counts the hit or miss.
  std::shared_ptr<const DocumentOutputs> Get(const std::string& key) {
    return lru_.Get(key).value_or(nullptr);
  }
  // Inserts or replaces; an entry larger than the whole capacity is not kept. Evicts least
  // recently used entries until the total fits. An entry costs its outputs' bytes plus its key.
  void Put(const std::string& key, std::shared_ptr<const DocumentOutputs> outputs) {
    const uint64_t cost = outputs->ByteSize() + key.size();
    lru_.Put(key, std::move(outputs), cost);
  }
  CacheStats Stats() const { return lru_.Stats(); }

 private:
  ByteLru<std::shared_ptr<const DocumentOutputs>> lru_;
};

}  // namespace mineru::jobs
