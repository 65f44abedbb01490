// SPDX-License-Identifier: Apache-2.0
// Paged key/value storage for the decoder: a pool of fixed-size blocks, each holding
// block_tokens tokens of every layer in the packed layout the attention kernel streams (keys
// transposed, values padded: see ops/attention.h). Keys are stored after rotary.
//
// Storage only: the cache decides nothing about which block belongs to whom. A caller names a
// sequence's blocks as a block table (block ids in token order: token i lives in block
// table[i / block_tokens] at slot i % block_tokens) and the cache reads and writes exactly
// those. Who owns which block is the engine's business (engine/kv_blocks.h); a caller that runs
// sequences alone (model/greedy.h, the bench) lays its tables out itself.
//
// Thread safety: none; one thread drives a cache (the engine thread for the engine's).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "model/config.h"
#include "ops/attention.h"

namespace mineru::model {

class KvCache {
 public:
  // num_blocks blocks of block_tokens tokens (a multiple of ops::kKvAlign).
  KvCache(const TextConfig& config, int64_t block_tokens, int64_t num_blocks);

  // Bytes per block for a config (all layers, keys and values).
  static int64_t BlockBytes(const TextConfig& config, int64_t block_tokens);

  int64_t block_tokens() const { return block_tokens_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_bytes() const { return 2 * num_layers_ * block_floats_ * int64_t{sizeof(float)}; }
  const ops::AttentionShape& shape() const { return shape_; }

  // OkStatus when `blocks` is a block table that can hold `tokens` tokens: enough entries, each
  // a block of this cache; kInvalidArgument otherwise.
  Status CheckTable(std::span<const int32_t> blocks, int64_t tokens) const;

  // Writes n tokens' keys and values of `layer` at sequence positions [at, at + n) into the
  // blocks of `table`, which must hold at + n tokens (CheckTable). k, v rows:
  // n_kv_heads * head_dim floats, strides ldk, ldv.
  void Write(ThreadPool& pool, int layer, std::span<const int32_t> table, int64_t at, int64_t n,
             const float* k, int64_t ldk, const float* v, int64_t ldv);

  // The chunks of `layer` covering the first `tokens` tokens of `table`, appended to out.
  void Chunks(int layer, std::span<const int32_t> table, int64_t tokens,
              std::vector<ops::KvChunk>& out) const;

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
};

}  // namespace mineru::model
