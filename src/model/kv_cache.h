// SPDX-License-Identifier: Apache-2.0
// Paged key/value storage for the decoder. The cache is a pool of fixed-size blocks; a
// sequence owns a list of blocks (its block table) and its length. Each block holds
// block_tokens tokens of every layer in the packed layout the attention kernel streams
// (keys transposed, values padded: see ops/attention.h). Keys are stored after rotary.
//
// Thread safety: none; the engine thread owns the cache.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "base/status.h"
#include "model/config.h"
#include "ops/attention.h"

namespace mineru::model {

class KvCache {
 public:
  struct Sequence {
    std::vector<int32_t> blocks;
    int64_t length = 0;  // tokens stored
  };

  // num_blocks blocks of block_tokens tokens (a multiple of ops::kKvAlign).
  KvCache(const TextConfig& config, int64_t block_tokens, int64_t num_blocks);

  // Bytes per block for a config (all layers, keys and values).
  static int64_t BlockBytes(const TextConfig& config, int64_t block_tokens);

  int64_t block_tokens() const { return block_tokens_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }
  int64_t used_blocks() const { return num_blocks_ - free_blocks(); }
  int64_t block_bytes() const { return 2 * num_layers_ * block_floats_ * int64_t{sizeof(float)}; }
  const ops::AttentionShape& shape() const { return shape_; }

  // Gives `seq` enough blocks for `tokens` tokens in total; kResourceExhausted (and no change)
  // when the pool cannot.
  Status Reserve(Sequence& seq, int64_t tokens);
  // Returns the sequence's blocks to the pool and empties it.
  void Release(Sequence& seq);

  // Writes n tokens' keys and values of `layer` at sequence positions [at, at + n); the blocks
  // must be reserved. k, v rows: n_kv_heads * head_dim floats, strides ldk, ldv.
  void Write(ThreadPool& pool, int layer, const Sequence& seq, int64_t at, int64_t n,
             const float* k, int64_t ldk, const float* v, int64_t ldv);

  // The chunks of `layer` covering the first `tokens` tokens of seq, appended to out.
  void Chunks(int layer, const Sequence& seq, int64_t tokens, std::vector<ops::KvChunk>& out) const;

 private:
  ops::MutableKvChunk Block(int layer, int32_t block);

  ops::AttentionShape shape_;
  int num_layers_ = 0;
  int64_t block_tokens_ = 0;
  int64_t num_blocks_ = 0;
  int64_t block_floats_ = 0;  // per layer, keys (values the same)
  // [layer][block][block_floats_] each, from calloc: the operating system hands out zeroed
  // pages on first touch, so a large cache costs memory only as it fills.
  struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], FreeDeleter> keys_;
  std::unique_ptr<float[], FreeDeleter> values_;
  std::vector<int32_t> free_;
};

}  // namespace mineru::model
