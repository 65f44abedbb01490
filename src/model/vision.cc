// SPDX-License-Identifier: Apache-2.0
#include "model/vision.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

#include "ops/attention.h"
#include "ops/bf16_attention.h"
#include "ops/elementwise.h"
#include "ops/packed_matrix.h"

namespace mineru::model {

Result<std::vector<float>> VisionEncoder::Encode(ThreadPool& pool,
                                                 std::span<const float> pixel_values,
                                                 std::span<const ImageGrid> grids,
                                                 const TraceFn* trace,
                                                 const VisionEncodeTuning& tuning) const {
  return EncodeImpl(pool, pixel_values, grids, trace, tuning, nullptr);
}

Result<std::vector<float>> VisionEncoder::Encode(ThreadPool& pool,
                                                 std::vector<float>&& pixel_values,
                                                 std::span<const ImageGrid> grids,
                                                 const TraceFn* trace,
                                                 const VisionEncodeTuning& tuning) const {
  std::vector<float> owned = std::move(pixel_values);
  return EncodeImpl(pool, owned, grids, trace, tuning, &owned);
}

Result<std::vector<float>> VisionEncoder::EncodeImpl(
    ThreadPool& pool, std::span<const float> pixel_values, std::span<const ImageGrid> grids,
    const TraceFn* trace, const VisionEncodeTuning& tuning, std::vector<float>* release) const {
  if (packed_ == nullptr) {
    return Fail(ErrorCode::kInternal, "the vision weights are not packed (inspection load)");
  }
  const VisionConfig& c = config_;
  const int64_t m = c.spatial_merge_size;
  int64_t patches = 0;
  for (size_t i = 0; i < grids.size(); ++i) {
    const ImageGrid& g = grids[i];
    if (g.t <= 0 || g.h <= 0 || g.w <= 0 || g.h % m != 0 || g.w % m != 0 || g.h > (1 << 20) ||
        g.w > (1 << 20) || g.t > 1024) {
      return Fail(ErrorCode::kInvalidArgument,
                  "image {}: grid ({}, {}, {}) must be positive with h and w multiples of {}", i,
                  g.t, g.h, g.w, m);
    }
    patches += g.patches();
  }
  const int64_t patch_dim = c.patch_dim();
  if (patches == 0 || static_cast<int64_t>(pixel_values.size()) != patches * patch_dim) {
    return Fail(ErrorCode::kInvalidArgument,
                "pixel values hold {} rows of {} values ({} floats); the image grids need {} "
                "patches",
                pixel_values.size() / static_cast<size_t>(patch_dim), patch_dim,
                pixel_values.size(), patches);
  }

  const int64_t e = c.embed_dim, mlp = c.mlp_hidden;
  const int heads = c.num_heads, dv = c.head_dim();
  const ops::AttentionShape shape{heads, heads, dv, 1.0f / std::sqrt(static_cast<float>(dv)),
                                  /*causal=*/false};
  std::vector<float> x(static_cast<size_t>(patches * e));
  ops::MatMul(pool, pixel_values.data(), patches, patch_dim, packed_->patch_embed, nullptr,
              x.data(), e, false);
  Trace(trace, "vision.patch_embed", x.data(), patches, e);
  if (release != nullptr) std::vector<float>().swap(*release);  // pixel_values dangles now

  // Row chunks (kVisionChunkBytes) of every product over all patches but the patch embedding.
  // One scratch buffer serves them in turn: a chunk's keys and values, then a chunk's q and its
  // attention output, then a chunk's MLP hidden rows.
  auto rows_for = [&](int64_t width) {
    const int64_t rows =
        tuning.chunk_rows > 0
            ? tuning.chunk_rows
            : std::max(kVisionMinChunkRows,
                       kVisionChunkBytes / (width * static_cast<int64_t>(sizeof(float))));
    return std::min(patches, rows);
  };
  const int64_t qkv_rows = rows_for(3 * e), mlp_rows = rows_for(mlp);
  // Whether every block's q rows and k/v rows of the fused matrix can be multiplied alone (the
  // blocks share one layout, so this is all or none in practice).
  bool split_qkv = !tuning.whole_qkv;
  for (const PackedVisionBlock& block : packed_->blocks) {
    split_qkv = split_qkv && block.qkv.RowsView(0, e) && block.qkv.RowsView(e, 2 * e);
  }
  // The q pass holds a chunk's q (E or 3E wide) and its attention output (E wide).
  const int64_t ld_q = split_qkv ? e : 3 * e, ld_kv = split_qkv ? 2 * e : 3 * e;
  std::vector<float> normed(x.size());
  std::vector<float> scratch(
      static_cast<size_t>(std::max({qkv_rows * (ld_q + e), qkv_rows * ld_kv, mlp_rows * mlp})));

  std::vector<float> cos, sin;
  CosSin(VisionRotaryAngles(grids, c), cos, sin);

  // Attention segments (one per image and temporal group) and their packed key/value chunks.
  struct Segment {
    int64_t start, length, capacity, offset;
  };
  std::vector<Segment> segments;
  int64_t kv_floats = 0;
  int64_t start = 0;
  for (const ImageGrid& g : grids) {
    for (int64_t t = 0; t < g.t; ++t) {
      const int64_t length = g.h * g.w;
      const int64_t capacity = ops::RoundUpKv(length);
      segments.push_back({start, length, capacity, kv_floats});
      kv_floats += ops::KvChunkFloats(shape, capacity);
      start += length;
    }
  }
  // bf16 precision: keys and values as bf16 pairs (ops/bf16_attention.h), same segments (key
  // and value words differ in number when the head width is padded, so each is sized).
  const bool bf16 = packed_->precision == Precision::kBf16;
  std::vector<float> keys(bf16 ? 0 : static_cast<size_t>(kv_floats)), values(keys.size());
  std::vector<ops::KvChunk> chunks(segments.size());
  std::vector<ops::AttentionProblem> problems(segments.size());
  std::vector<uint32_t> keys16, values16;
  std::vector<int64_t> key_offsets, value_offsets;
  std::vector<ops::Bf16KvChunk> chunks16(bf16 ? segments.size() : 0);
  std::vector<ops::Bf16AttentionProblem> problems16(chunks16.size());
  if (bf16) {
    int64_t key_words = 0, value_words = 0;
    for (const Segment& seg : segments) {
      key_offsets.push_back(key_words);
      value_offsets.push_back(value_words);
      key_words += ops::Bf16KeyWords(shape, seg.capacity);
      value_words += ops::Bf16ValueWords(shape, seg.capacity);
    }
    keys16.resize(static_cast<size_t>(key_words));
    values16.resize(static_cast<size_t>(value_words));
  }
  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& seg = segments[s];
    if (bf16) {
      chunks16[s] = {keys16.data() + key_offsets[s], values16.data() + value_offsets[s], seg.length,
                     seg.capacity};
    } else {
      chunks[s] = {keys.data() + seg.offset, values.data() + seg.offset, seg.length, seg.capacity};
    }
  }

  // Calls fn(s, lo, hi) for each segment s holding rows [lo, hi) of the chunk [r0, r0 + rows).
  auto for_each_segment_in = [&](int64_t r0, int64_t rows, const auto& fn) {
    for (size_t s = 0; s < segments.size(); ++s) {
      const int64_t lo = std::max(r0, segments[s].start);
      const int64_t hi = std::min(r0 + rows, segments[s].start + segments[s].length);
      if (lo < hi) fn(s, lo, hi);
    }
  };
  for (int b = 0; b < c.depth; ++b) {
    const VisionBlockWeights& w = weights_.blocks[static_cast<size_t>(b)];
    const PackedVisionBlock& p = packed_->blocks[static_cast<size_t>(b)];
    ops::LayerNorm(pool, x.data(), patches, e, e, w.norm1_weight.data(), w.norm1_bias.data(),
                   c.layer_norm_eps, normed.data(), e);
    // Attention in two passes over row chunks, so that q never exists for all patches at once:
    // first every row's keys and values into the segments' packed chunks (each query needs all
    // of its image's keys), then per chunk of rows its q, its attention and the projection into
    // the residual stream (which no later chunk reads: their q come from normed). The q rows
    // and the k/v rows of the fused matrix are multiplied separately where they can be viewed
    // alone (ops::PackedMatrix::RowsView: the same bits as the fused product's columns), else
    // (or with whole_qkv) the fused product runs and the other columns are dropped.
    const std::optional<ops::PackedMatrix> q_part = split_qkv ? p.qkv.RowsView(0, e) : std::nullopt;
    const std::optional<ops::PackedMatrix> kv_part =
        split_qkv ? p.qkv.RowsView(e, 2 * e) : std::nullopt;
    const int64_t k_col = split_qkv ? 0 : e;
    for (int64_t r0 = 0; r0 < patches; r0 += qkv_rows) {
      const int64_t rows = std::min(qkv_rows, patches - r0);
      if (kv_part) {
        ops::MatMul(pool, normed.data() + r0 * e, rows, e, *kv_part, w.qkv_bias.data() + e,
                    scratch.data(), ld_kv, false);
      } else {
        ops::MatMul(pool, normed.data() + r0 * e, rows, e, p.qkv, w.qkv_bias.data(), scratch.data(),
                    ld_kv, false);
      }
      float* const k = scratch.data() + k_col;
      // Rotary on k; cos/sin rows of dv / 2 values.
      ops::RopeRotateHalf(pool, k, rows, ld_kv, heads, dv, cos.data() + r0 * (dv / 2),
                          sin.data() + r0 * (dv / 2));
      // Keys and values of the rows into each segment they belong to, in order (the bf16
      // writer relies on it; slots past a segment's length stay zero from allocation).
      for_each_segment_in(r0, rows, [&](size_t s, int64_t lo, int64_t hi) {
        const Segment& seg = segments[s];
        const float* row = k + (lo - r0) * ld_kv;
        if (bf16) {
          ops::WriteKvBf16(
              pool, shape, row, ld_kv, row + e, ld_kv, hi - lo,
              {keys16.data() + key_offsets[s], values16.data() + value_offsets[s], seg.capacity},
              lo - seg.start);
        } else {
          ops::PackKv(pool, shape, row, ld_kv, row + e, ld_kv, hi - lo,
                      {keys.data() + seg.offset, values.data() + seg.offset, seg.capacity},
                      lo - seg.start);
        }
      });
    }
    for (int64_t r0 = 0; r0 < patches; r0 += qkv_rows) {
      const int64_t rows = std::min(qkv_rows, patches - r0);
      float* const q = scratch.data();
      float* const attn = scratch.data() + rows * ld_q;  // [rows, e]
      ops::MatMul(pool, normed.data() + r0 * e, rows, e, q_part ? *q_part : p.qkv,
                  w.qkv_bias.data(), q, ld_q, false);
      ops::RopeRotateHalf(pool, q, rows, ld_q, heads, dv, cos.data() + r0 * (dv / 2),
                          sin.data() + r0 * (dv / 2));
      // This chunk's queries against all keys of each segment they belong to.
      problems.clear();
      problems16.clear();
      for_each_segment_in(r0, rows, [&](size_t s, int64_t lo, int64_t hi) {
        const float* q_rows = q + (lo - r0) * ld_q;
        float* out = attn + (lo - r0) * e;
        if (bf16) {
          problems16.push_back({q_rows, ld_q, hi - lo, 0, std::span(&chunks16[s], 1), out, e});
        } else {
          problems.push_back({q_rows, ld_q, hi - lo, 0, std::span(&chunks[s], 1), out, e});
        }
      });
      if (bf16) {
        ops::AttentionBf16(pool, shape, problems16);
      } else {
        ops::Attention(pool, shape, problems);
      }
      ops::MatMul(pool, attn, rows, e, p.proj, w.proj_bias.data(), x.data() + r0 * e, e, true);
    }
    ops::LayerNorm(pool, x.data(), patches, e, e, w.norm2_weight.data(), w.norm2_bias.data(),
                   c.layer_norm_eps, normed.data(), e);
    for (int64_t r0 = 0; r0 < patches; r0 += mlp_rows) {
      const int64_t rows = std::min(mlp_rows, patches - r0);
      float* const hidden = scratch.data();
      ops::MatMul(pool, normed.data() + r0 * e, rows, e, p.fc1, w.fc1_bias.data(), hidden, mlp,
                  false);
      if (c.hidden_act == "quick_gelu") {
        ops::QuickGelu(pool, hidden, rows * mlp);
      } else {
        ops::GeluErf(pool, hidden, rows * mlp);
      }
      ops::MatMul(pool, hidden, rows, mlp, p.fc2, w.fc2_bias.data(), x.data() + r0 * e, e, true);
    }
    Trace(trace, "vision.block." + std::to_string(b), x.data(), patches, e);
  }

  // The blocks' buffers go before the merger allocates its own, and the residual stream once
  // its LayerNorm has read it: the merger's peak is normed and merged_hidden alone.
  auto release_all = [](auto&... buffers) {
    ((std::decay_t<decltype(buffers)>().swap(buffers)), ...);
  };
  release_all(scratch, keys, values, keys16, values16, chunks, chunks16, problems, problems16, cos,
              sin);

  // Merger: LayerNorm, then each window of merge_unit consecutive rows is one row of
  // merge_unit * E values (a free reshape), Linear -> exact GELU -> Linear.
  ops::LayerNorm(pool, x.data(), patches, e, e, weights_.merger_norm_weight.data(),
                 weights_.merger_norm_bias.data(), c.layer_norm_eps, normed.data(), e);
  release_all(x);
  const int64_t tokens = patches / c.merge_unit();
  const int64_t merged = e * c.merge_unit();
  std::vector<float> merged_hidden(static_cast<size_t>(tokens * merged));
  ops::MatMul(pool, normed.data(), tokens, merged, packed_->merger_fc1,
              weights_.merger_fc1_bias.data(), merged_hidden.data(), merged, false);
  ops::GeluErf(pool, merged_hidden.data(), tokens * merged);
  std::vector<float> out(static_cast<size_t>(tokens * c.out_hidden));
  ops::MatMul(pool, merged_hidden.data(), tokens, merged, packed_->merger_fc2,
              weights_.merger_fc2_bias.data(), out.data(), c.out_hidden, false);
  Trace(trace, "vision.merged", out.data(), tokens, c.out_hidden);
  return out;
}

}  // namespace mineru::model
