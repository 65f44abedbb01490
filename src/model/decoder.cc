// SPDX-License-Identifier: Apache-2.0
#include "model/decoder.h"

#include <string>

#include "model/positions.h"
#include "ops/attention.h"
#include "ops/bf16_attention.h"
#include "ops/elementwise.h"
#include "ops/packed_matrix.h"

namespace mineru::model {

Status Decoder::Embed(ThreadPool& pool, std::span<const int32_t> ids, float* x) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= config_.vocab_size) {
      return Fail(ErrorCode::kInvalidArgument, "token id {} at position {} is outside [0, {})",
                  ids[i], i, config_.vocab_size);
    }
  }
  ops::GatherRows(pool, weights_.embed_tokens, ids.data(), static_cast<int64_t>(ids.size()), x,
                  config_.hidden_size);
  return OkStatus();
}

Status Decoder::Forward(ThreadPool& pool, KvCache& cache, std::span<const DecoderStep> steps,
                        float* x, std::span<const std::array<int32_t, 3>> positions,
                        std::span<const int64_t> logit_rows, float* logits,
                        const TraceFn* trace) const {
  if (packed_ == nullptr) {
    return Fail(ErrorCode::kInternal, "the decoder weights are not packed (inspection load)");
  }
  const TextConfig& c = config_;
  const int64_t d = c.hidden_size, hd = c.head_dim();
  const int64_t q_width = int64_t{c.num_heads} * hd, kv_width = int64_t{c.num_kv_heads} * hd;
  const int64_t inter = c.intermediate_size;
  int64_t rows = 0;
  for (const DecoderStep& step : steps) rows += step.num_tokens;
  if (static_cast<int64_t>(positions.size()) != rows) {
    return Fail(ErrorCode::kInternal, "{} positions for {} tokens", positions.size(), rows);
  }
  for (int64_t r : logit_rows) {
    if (r < 0 || r >= rows) return Fail(ErrorCode::kInternal, "logit row {} of {}", r, rows);
  }
  if (cache.precision() != precision_) {
    return Fail(ErrorCode::kInternal, "the KV cache stores {} keys but the decoder computes in {}",
                PrecisionName(cache.precision()), PrecisionName(precision_));
  }
  // Every table is checked first: a bad one changes nothing.
  for (size_t s = 0; s < steps.size(); ++s) {
    if (Status status = cache.CheckTable(steps[s].blocks, steps[s].start + steps[s].num_tokens);
        !status) {
      return tl::unexpected(WithContext(status.error(), fmt::format("step {}", s)));
    }
  }

  std::vector<float> cos, sin;
  CosSin(MropeAngles(positions, c), cos, sin);
  // qkv rows: q (q_width), k (kv_width), v (kv_width); gate_up rows: gate, up (inter each).
  const int64_t qkv_width = q_width + 2 * kv_width;
  std::vector<float> normed(static_cast<size_t>(rows * d)),
      attn(static_cast<size_t>(rows * q_width));
  std::vector<float> qkv(static_cast<size_t>(rows * qkv_width));
  std::vector<float> gate_up(static_cast<size_t>(rows * 2 * inter));
  float* q = qkv.data();
  float* k = q + q_width;
  float* v = k + kv_width;
  const bool bf16 = precision_ == Precision::kBf16;
  std::vector<std::vector<ops::KvChunk>> chunks(bf16 ? 0 : steps.size());
  std::vector<ops::AttentionProblem> problems(chunks.size());
  std::vector<std::vector<ops::Bf16KvChunk>> chunks16(bf16 ? steps.size() : 0);
  std::vector<ops::Bf16AttentionProblem> problems16(chunks16.size());

  for (int layer = 0; layer < c.num_layers; ++layer) {
    const DecoderLayerWeights& w = weights_.layers[static_cast<size_t>(layer)];
    const PackedDecoderLayer& p = packed_->layers[static_cast<size_t>(layer)];
    ops::RmsNorm(pool, x, rows, d, d, w.input_norm.data(), c.rms_norm_eps, normed.data(), d);
    ops::MatMul(pool, normed.data(), rows, d, p.qkv, p.qkv_bias.data(), qkv.data(), qkv_width,
                false);
    ops::RopeRotateHalf(pool, q, rows, qkv_width, c.num_heads, static_cast<int>(hd), cos.data(),
                        sin.data());
    ops::RopeRotateHalf(pool, k, rows, qkv_width, c.num_kv_heads, static_cast<int>(hd), cos.data(),
                        sin.data());
    int64_t row = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      const DecoderStep& step = steps[s];
      const int64_t n = step.num_tokens;
      cache.Write(pool, layer, step.blocks, step.start, n, k + row * qkv_width, qkv_width,
                  v + row * qkv_width, qkv_width);
      if (bf16) {
        chunks16[s].clear();
        cache.Bf16Chunks(layer, step.blocks, step.start + n, chunks16[s]);
        problems16[s] = {q + row * qkv_width,         qkv_width, n, step.start, chunks16[s],
                         attn.data() + row * q_width, q_width};
      } else {
        chunks[s].clear();
        cache.Chunks(layer, step.blocks, step.start + n, chunks[s]);
        problems[s] = {q + row * qkv_width,         qkv_width, n, step.start, chunks[s],
                       attn.data() + row * q_width, q_width};
      }
      row += n;
    }
    if (bf16) {
      ops::AttentionBf16(pool, cache.shape(), problems16);
    } else {
      ops::Attention(pool, cache.shape(), problems);
    }
    ops::MatMul(pool, attn.data(), rows, q_width, p.o, nullptr, x, d, true);
    ops::RmsNorm(pool, x, rows, d, d, w.post_attention_norm.data(), c.rms_norm_eps, normed.data(),
                 d);
    ops::MatMul(pool, normed.data(), rows, d, p.gate_up, nullptr, gate_up.data(), 2 * inter, false);
    ops::SiluMulRows(pool, gate_up.data(), rows, inter, 2 * inter);
    ops::MatMul(pool, gate_up.data(), rows, 2 * inter, p.down, nullptr, x, d, true);
    Trace(trace, "decoder.layer." + std::to_string(layer), x, rows, d);
  }

  if (trace != nullptr && *trace) {
    ops::RmsNorm(pool, x, rows, d, d, weights_.final_norm.data(), c.rms_norm_eps, normed.data(), d);
    Trace(trace, "decoder.final_norm", normed.data(), rows, d);
  }
  if (logit_rows.empty()) return OkStatus();
  const auto n_logits = static_cast<int64_t>(logit_rows.size());
  std::vector<float> selected(static_cast<size_t>(n_logits * d));
  for (int64_t i = 0; i < n_logits; ++i) {
    std::copy_n(x + logit_rows[static_cast<size_t>(i)] * d, d, selected.data() + i * d);
  }
  ops::RmsNorm(pool, selected.data(), n_logits, d, d, weights_.final_norm.data(), c.rms_norm_eps,
               selected.data(), d);
  ops::MatMul(pool, selected.data(), n_logits, d, packed_->lm_head, nullptr, logits, c.vocab_size,
              false);
  return OkStatus();
}

}  // namespace mineru::model
