// SPDX-License-Identifier: Apache-2.0
// KV block accounting: the one owner of which KV cache block belongs to which sequence. The
// pool is num_blocks blocks of block_tokens tokens (model::KvCache holds their memory and
// nothing else); each sequence has a block table, the blocks holding its tokens in order.
//
// Invariants: a block is either free or in exactly one table; free_blocks() + the sum of all
// tables' sizes = num_blocks(); a table's blocks hold at least its `length` tokens.
//
// Thread safety: none; the engine thread owns it.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"

namespace mineru::engine {

// One sequence's blocks: token i's keys and values live in blocks[i / block_tokens].
struct KvBlockTable {
  std::vector<int32_t> blocks;
  int64_t length = 0;  // tokens stored (written by a decoder pass that completed)
};

class KvBlockAllocator {
 public:
  KvBlockAllocator(int64_t block_tokens, int64_t num_blocks);

  int64_t block_tokens() const { return block_tokens_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }
  int64_t used_blocks() const { return num_blocks_ - free_blocks(); }
  // Blocks that hold `tokens` tokens.
  int64_t BlocksFor(int64_t tokens) const { return (tokens + block_tokens_ - 1) / block_tokens_; }

  // Grows `table` to hold `tokens` tokens in total (low free block ids first);
  // kResourceExhausted, and no change, when the pool cannot.
  Status Reserve(KvBlockTable& table, int64_t tokens);
  // Gives the table's blocks back to the pool and empties it (length 0).
  void Release(KvBlockTable& table);

 private:
  int64_t block_tokens_ = 0;
  int64_t num_blocks_ = 0;
  std::vector<int32_t> free_;  // handed out from the back
};

}  // namespace mineru::engine
