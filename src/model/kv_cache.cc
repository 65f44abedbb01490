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
  free_.reserve(static_cast<size_t>(num_blocks));
  // Hand out low block ids first (pop from the back).
  for (int64_t b = num_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
}

int64_t KvCache::BlockBytes(const TextConfig& config, int64_t block_tokens) {
  return 2 * config.num_layers * ops::KvChunkFloats(ShapeOf(config), block_tokens) *
         static_cast<int64_t>(sizeof(float));
}

Status KvCache::Reserve(Sequence& seq, int64_t tokens) {
  const int64_t needed = (tokens + block_tokens_ - 1) / block_tokens_;
  const int64_t missing = needed - static_cast<int64_t>(seq.blocks.size());
  if (missing <= 0) return OkStatus();
  if (missing > free_blocks()) {
    return Fail(ErrorCode::kResourceExhausted,
                "KV cache full: {} more blocks of {} tokens needed, {} of {} free", missing,
                block_tokens_, free_blocks(), num_blocks_);
  }
  for (int64_t i = 0; i < missing; ++i) {
    seq.blocks.push_back(free_.back());
    free_.pop_back();
  }
  return OkStatus();
}

void KvCache::Release(Sequence& seq) {
  for (int32_t b : seq.blocks) free_.push_back(b);
  seq.blocks.clear();
  seq.length = 0;
}

ops::MutableKvChunk KvCache::Block(int layer, int32_t block) {
  const int64_t offset = (int64_t{layer} * num_blocks_ + block) * block_floats_;
  return {keys_.get() + offset, values_.get() + offset, block_tokens_};
}

void KvCache::Write(ThreadPool& pool, int layer, const Sequence& seq, int64_t at, int64_t n,
                    const float* k, int64_t ldk, const float* v, int64_t ldv) {
  MINERU_CHECK(at + n <= static_cast<int64_t>(seq.blocks.size()) * block_tokens_,
               "write past reserved blocks");
  int64_t done = 0;
  while (done < n) {
    const int64_t pos = at + done;
    const int64_t in_block = pos % block_tokens_;
    const int64_t count = std::min(n - done, block_tokens_ - in_block);
    ops::PackKv(pool, shape_, k + done * ldk, ldk, v + done * ldv, ldv, count,
                Block(layer, seq.blocks[static_cast<size_t>(pos / block_tokens_)]), in_block);
    done += count;
  }
}

void KvCache::Chunks(int layer, const Sequence& seq, int64_t tokens,
                     std::vector<ops::KvChunk>& out) const {
  for (int64_t start = 0; start < tokens; start += block_tokens_) {
    const int32_t block = seq.blocks[static_cast<size_t>(start / block_tokens_)];
    const int64_t offset = (int64_t{layer} * num_blocks_ + block) * block_floats_;
    out.push_back({keys_.get() + offset, values_.get() + offset,
                   std::min(block_tokens_, tokens - start), block_tokens_});
  }
}

}  // namespace mineru::model
