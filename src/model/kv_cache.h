// SPDX-License-Identifier: Apache-2.0
// Paged key/value storage for the decoder: a pool of fixed-size blocks, each holding
// block_tokens tokens of every layer in the packed layout the attention kernel streams. Keys are
// stored after rotary. The cache's precision is the model's:
//   fp32: float32 keys (transposed) and values (padded), ops/attention.h;
//   bf16: keys and values rounded to bf16, in pairs of dims and of tokens, ops/bf16_attention.h
//         (half the bytes per token, and the decoder's attention runs as bf16 products).
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
#include "model/precision.h"
#include "ops/attention.h"
#include "ops/bf16_attention.h"

namespace mineru::model {

class KvCache {
 public:
  // num_blocks blocks of block_tokens tokens (a multiple of ops::kKvAlign).
  KvCache(const TextConfig& config, int64_t block_tokens, int64_t num_blocks,
          Precision precision = Precision::kFp32);

  // Bytes per block for a config (all layers, keys and values).
  static int64_t BlockBytes(const TextConfig& config, int64_t block_tokens,
                            Precision precision = Precision::kFp32);

  Precision precision() const { return precision_; }
  int64_t block_tokens() const { return block_tokens_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_bytes() const { return num_layers_ * (block_key_words_ + block_value_words_) * 4; }
  const ops::AttentionShape& shape() const { return shape_; }

  // OkStatus when `blocks` is a block table that can hold `tokens` tokens: enough entries, each
  // a block of this cache; kInvalidArgument otherwise.
  Status CheckTable(std::span<const int32_t> blocks, int64_t tokens) const;

  // Writes n tokens' keys and values of `layer` at sequence positions [at, at + n) into the
  // blocks of `table`, which must hold at + n tokens (CheckTable). k, v rows:
  // n_kv_heads * head_dim floats, strides ldk, ldv.
  void Write(ThreadPool& pool, int layer, std::span<const int32_t> table, int64_t at, int64_t n,
             const float* k, int64_t ldk, const float* v, int64_t ldv);

  // The chunks of `layer` covering the first `tokens` tokens of `table`, appended to out: an
  // fp32 cache's (Chunks) or a bf16 cache's (Bf16Chunks); asking the other is a programming error.
  void Chunks(int layer, std::span<const int32_t> table, int64_t tokens,
              std::vector<ops::KvChunk>& out) const;
  void Bf16Chunks(int layer, std::span<const int32_t> table, int64_t tokens,
                  std::vector<ops::Bf16KvChunk>& out) const;

 private:
  // Word offsets of a block's keys and values of a layer.
  int64_t KeyOffset(int layer, int32_t block) const {
    return (int64_t{layer} * num_blocks_ + block) * block_key_words_;
  }
  int64_t ValueOffset(int layer, int32_t block) const {
    return (int64_t{layer} * num_blocks_ + block) * block_value_words_;
  }

  // Appends the chunks of `layer` over `tokens` tokens of `table`, as Word (float or uint32_t).
  template <class Word, class Chunk>
  void AppendChunks(int layer, std::span<const int32_t> table, int64_t tokens,
                    std::vector<Chunk>& out) const;

  ops::AttentionShape shape_;
  Precision precision_ = Precision::kFp32;
  int num_layers_ = 0;
  int64_t block_tokens_ = 0;
  int64_t num_blocks_ = 0;
  // Per layer and block, in 4-byte words: float32 values (fp32) or bf16 pairs (bf16).
  int64_t block_key_words_ = 0;
  int64_t block_value_words_ = 0;
  // [layer][block][words] each, from calloc: the operating system hands out zeroed pages on
  // first touch, so a large cache costs memory only as it fills. The words are float (fp32) or
  // uint32_t (bf16), never both: the buffer is raw storage of 4-byte words.
  struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, FreeDeleter> keys_;
  std::unique_ptr<void, FreeDeleter> values_;
};

}  // namespace mineru::model
