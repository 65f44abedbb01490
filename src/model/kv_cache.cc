// SPDX-License-Identifier: Apache-2.0
#include "model/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace mineru::model {

namespace {
ops::AttentionShape ShapeOf(const TextConfig& config) {
  return ops::AttentionShape{config.num_heads, config.num_kv_heads, config.head_dim(),
                             1.0f / std::sqrt(static_cast<float>(config.head_dim())),
                             /*causal=*/true};
}

// 4-byte words per layer and block: {keys, values}.
std::pair<int64_t, int64_t> BlockWords(const ops::AttentionShape& shape, int64_t block_tokens,
                                       Precision precision) {
  if (precision == Precision::kBf16) {
    return {ops::Bf16KeyWords(shape, block_tokens), ops::Bf16ValueWords(shape, block_tokens)};
  }
  return {ops::KvChunkFloats(shape, block_tokens), ops::KvChunkFloats(shape, block_tokens)};
}
}  // namespace

KvCache::KvCache(const TextConfig& config, int64_t block_tokens, int64_t num_blocks,
                 Precision precision)
    : shape_(ShapeOf(config)),
      precision_(precision),
      num_layers_(config.num_layers),
      block_tokens_(block_tokens),
      num_blocks_(num_blocks) {
  MINERU_CHECK(block_tokens > 0 && block_tokens % ops::kKvAlign == 0, "block of {} tokens",
               block_tokens);
  std::tie(block_key_words_, block_value_words_) = BlockWords(shape_, block_tokens, precision);
  const auto blocks = static_cast<size_t>(num_layers_ * num_blocks_);
  keys_.reset(std::calloc(blocks * static_cast<size_t>(block_key_words_), 4));
  values_.reset(std::calloc(blocks * static_cast<size_t>(block_value_words_), 4));
  MINERU_CHECK(keys_ != nullptr && values_ != nullptr, "KV cache of {} bytes: out of memory",
               static_cast<int64_t>(blocks) * (block_key_words_ + block_value_words_) * 4);
}

int64_t KvCache::BlockBytes(const TextConfig& config, int64_t block_tokens, Precision precision) {
  const auto [keys, values] = BlockWords(ShapeOf(config), block_tokens, precision);
  return config.num_layers * (keys + values) * 4;
}

Status KvCache::CheckTable(std::span<const int32_t> blocks, int64_t tokens) const {
  if (tokens > static_cast<int64_t>(blocks.size()) * block_tokens_) {
    return Fail(ErrorCode::kInvalidArgument,
                "a block table of {} blocks of {} tokens cannot hold {} tokens", blocks.size(),
                block_tokens_, tokens);
  }
  for (int32_t b : blocks) {
    if (b < 0 || b >= num_blocks_) {
      return Fail(ErrorCode::kInvalidArgument, "block {} is not one of the cache's {}", b,
                  num_blocks_);
    }
  }
  return OkStatus();
}

void KvCache::Write(ThreadPool& pool, int layer, std::span<const int32_t> table, int64_t at,
                    int64_t n, const float* k, int64_t ldk, const float* v, int64_t ldv) {
  MINERU_CHECK(at + n <= static_cast<int64_t>(table.size()) * block_tokens_,
               "write past the block table");
  int64_t done = 0;
  while (done < n) {
    const int64_t pos = at + done;
    const int64_t in_block = pos % block_tokens_;
    const int64_t count = std::min(n - done, block_tokens_ - in_block);
    const int32_t block = table[static_cast<size_t>(pos / block_tokens_)];
    if (precision_ == Precision::kBf16) {
      ops::WriteKvBf16(
          pool, shape_, k + done * ldk, ldk, v + done * ldv, ldv, count,
          {static_cast<uint32_t*>(keys_.get()) + KeyOffset(layer, block),
           static_cast<uint32_t*>(values_.get()) + ValueOffset(layer, block), block_tokens_},
          in_block);
    } else {
      ops::PackKv(pool, shape_, k + done * ldk, ldk, v + done * ldv, ldv, count,
                  {static_cast<float*>(keys_.get()) + KeyOffset(layer, block),
                   static_cast<float*>(values_.get()) + ValueOffset(layer, block), block_tokens_},
                  in_block);
    }
    done += count;
  }
}

template <class Word, class Chunk>
void KvCache::AppendChunks(int layer, std::span<const int32_t> table, int64_t tokens,
                           std::vector<Chunk>& out) const {
  for (int64_t start = 0; start < tokens; start += block_tokens_) {
    const int32_t block = table[static_cast<size_t>(start / block_tokens_)];
    out.push_back({static_cast<const Word*>(keys_.get()) + KeyOffset(layer, block),
                   static_cast<const Word*>(values_.get()) + ValueOffset(layer, block),
                   std::min(block_tokens_, tokens - start), block_tokens_});
  }
}

void KvCache::Chunks(int layer, std::span<const int32_t> table, int64_t tokens,
                     std::vector<ops::KvChunk>& out) const {
  MINERU_CHECK(precision_ == Precision::kFp32, "float32 chunks of a bf16 KV cache");
  AppendChunks<float>(layer, table, tokens, out);
}

void KvCache::Bf16Chunks(int layer, std::span<const int32_t> table, int64_t tokens,
                         std::vector<ops::Bf16KvChunk>& out) const {
  MINERU_CHECK(precision_ == Precision::kBf16, "bf16 chunks of a float32 KV cache");
  AppendChunks<uint32_t>(layer, table, tokens, out);
}

}  // namespace mineru::model
