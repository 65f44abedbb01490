// SPDX-License-Identifier: Apache-2.0
#include "engine/kv_blocks.h"

namespace mineru::engine {

KvBlockAllocator::KvBlockAllocator(int64_t block_tokens, int64_t num_blocks)
    : block_tokens_(block_tokens), num_blocks_(num_blocks) {
  MINERU_CHECK(block_tokens > 0 && num_blocks >= 0, "{} blocks of {} tokens", num_blocks,
               block_tokens);
  free_.reserve(static_cast<size_t>(num_blocks));
  // Hand out low block ids first (pop from the back).
  for (int64_t b = num_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
}

Status KvBlockAllocator::Reserve(KvBlockTable& table, int64_t tokens) {
  const int64_t missing = BlocksFor(tokens) - static_cast<int64_t>(table.blocks.size());
  if (missing <= 0) return OkStatus();
  if (missing > free_blocks()) {
    return Fail(ErrorCode::kResourceExhausted,
                "KV cache full: {} more blocks of {} tokens needed, {} of {} free", missing,
                block_tokens_, free_blocks(), num_blocks_);
  }
  for (int64_t i = 0; i < missing; ++i) {
    table.blocks.push_back(free_.back());
    free_.pop_back();
  }
  return OkStatus();
}

void KvBlockAllocator::Release(KvBlockTable& table) {
  for (int32_t b : table.blocks) free_.push_back(b);
  table.blocks.clear();
  table.length = 0;
}

}  // namespace mineru::engine
