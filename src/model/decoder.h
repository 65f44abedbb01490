// SPDX-License-Identifier: Apache-2.0
// The Qwen2 decoder with M-RoPE: token embedding, `num_layers` pre-norm layers (RMSNorm,
// grouped-query attention with q/k/v bias, SwiGLU), final RMSNorm and the (tied) head.
//
// One Forward call advances any mix of sequences: each contributes its next n tokens (a whole
// prompt, a piece of one, or a single decode token). Each step names its sequence's KV blocks
// (a block table) and how many tokens they already hold; the new tokens' keys and values are
// written after those, into the named blocks only, and every new token attends to all earlier
// tokens of its own sequence. Forward allocates nothing in the cache and keeps no count of what
// it holds: the caller's tables and lengths are the whole truth (engine/kv_blocks.h for the
// engine's).
//
// Every row's result depends on that row (and its own sequence's keys) alone, never on the
// other rows of the call: the products run over batch-invariant packed weights.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/config.h"
#include "model/kv_cache.h"
#include "model/packed_decoder.h"
#include "model/precision.h"
#include "model/trace.h"
#include "model/weights.h"

namespace mineru::model {

struct DecoderStep {
  // The sequence's block table (KvCache block ids in token order); it must hold
  // start + num_tokens tokens.
  std::span<const int32_t> blocks;
  int64_t start = 0;       // tokens of the sequence already in its blocks
  int64_t num_tokens = 0;  // new tokens; their rows follow the previous step's in x
};

class Decoder {
 public:
  // `packed` holds the matrices Forward multiplies by; null for a model loaded only for
  // inspection (Forward then fails). `precision` is the attention's: Forward's cache must store
  // keys in it (fp32: ops/attention.h over float32 keys; bf16: ops/bf16_attention.h).
  Decoder(const ModelConfig& config, const DecoderWeights& weights,
          const PackedDecoderWeights* packed, Precision precision = Precision::kFp32)
      : config_(config.text), weights_(weights), packed_(packed), precision_(precision) {}

  Precision precision() const { return precision_; }

  // x[i] = embedding of ids[i]. Ids outside the vocabulary are an error.
  Status Embed(ThreadPool& pool, std::span<const int32_t> ids, float* x) const;

  // x: [T, hidden] input embeddings, T = sum of num_tokens; overwritten (the residual stream).
  // positions: (t, h, w) per row. Writes each step's keys and values at [start, start + n) of
  // its block table (kInvalidArgument, before anything is written, when a table cannot hold
  // them; kInternal when the cache's precision is not the decoder's). Writes the logits of
  // `logit_rows` (indices into x) to logits [logit_rows.size(), vocab]. Traces "decoder.layer.<i>"
  // and "decoder.final_norm" (all rows).
  Status Forward(ThreadPool& pool, KvCache& cache, std::span<const DecoderStep> steps, float* x,
                 std::span<const std::array<int32_t, 3>> positions,
                 std::span<const int64_t> logit_rows, float* logits,
                 const TraceFn* trace = nullptr) const;

 private:
  const TextConfig& config_;
  const DecoderWeights& weights_;
  const PackedDecoderWeights* packed_;
  Precision precision_;
};

}  // namespace mineru::model
