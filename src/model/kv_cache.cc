// SPDX-License-Identifier: Apache-2.0
#include "model/kv_cache.h"

#include <algorithm>
#include <cmath>

namespace mineru::model {

namespace {
ops::AttentionShape ShapeOf(const TextConfig& config) {
  return ops::AttentionShape{config.num_heads, config.num_kv_heads, config.head_dim(),
                             1.0f / std::sqrt(static_cast<float>(config.head_dim())),
                             /*causal=*/true};
}
}  // namespace

KvCache::KvCache(const TextConfig& config, int64_t block_tokens, int64_t num_blocks)
    : shape_(ShapeOf(config)),
      num_layers_(config.num_layers),
      block_tokens_(block_tokens),
      num_blocks_(num_blocks) {
  MINERU_CHECK(block_tokens > 0 && block_tokens % ops::kKvAlign == 0, "block of {} tokens",
               block_tokens);
  block_floats_ = ops::KvChunkFloats(shape_, block_tokens);
  const auto total = static_cast<size_t>(num_layers_ * num_blocks_ * block_floats_);
  keys_.reset(static_cast<float*>(std::calloc(total, sizeof(float))));
  values_.reset(static_cast<float*>(std::calloc(total, sizeof(float))));
  MINERU_CHECK(keys_ != nullptr && values_ != nullptr, "KV cache of {} bytes: out of memory",
               2 * total * sizeof(float));
}

int64_t KvCache::BlockBytes(const TextConfig& config, int64_t block_tokens) {
  return 2 * config.num_layers * ops::KvChunkFloats(ShapeOf(config), block_tokens) *
         static_cast<int64_t>(sizeof(float));
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

ops::MutableKvChunk KvCache::Block(int layer, int32_t block) {
  const int64_t offset = (int64_t{layer} * num_blocks_ + block) * block_floats_;
  return {keys_.get() + offset, values_.get() + offset, block_tokens_};
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
    ops::PackKv(pool, shape_, k + done * ldk, ldk, v + done * ldv, ldv, count,
                Block(layer, table[static_cast<size_t>(pos / block_tokens_)]), in_block);
    done += count;
  }
}

void KvCache::Chunks(int layer, std::span<const int32_t> table, int64_t tokens,
                     std::vector<ops::KvChunk>& out) const {
  for (int64_t start = 0; start < tokens; start += block_tokens_) {
    const int32_t block = table[static_cast<size_t>(start / block_tokens_)];
    const int64_t offset = (int64_t{layer} * num_blocks_ + block) * block_floats_;
    out.push_back({keys_.get() + offset, values_.get() + offset,
                   std::min(block_tokens_, tokens - start), block_tokens_});
  }
}

}  // namespace mineru::model
