// SPDX-License-Identifier: Apache-2.0
// Attention with bf16 products (`--precision bf16`: the vision tower, and the decoder over a bf16
// KV cache): the same tiled,
// online-softmax algorithm as ops/attention.h, with Q K^T and P V as bf16 x bf16 products with
// float32 sums (AVX-512 BF16 `vdpbf16ps`), and the softmax itself in float32.
//
// Numerics, per query row: q is scaled, then rounded to bf16; keys and values are stored as bf16;
// scores are float32 sums of exact bf16 products (in pairs of head dims); the running max, the
// exponentials (a degree-6 polynomial with exact power-of-two scaling, within 2 ulp of exp), the
// running sum and the output accumulators are float32; the probabilities p = exp(s - m) are
// rounded to bf16 (relative error <= 2^-9) before P V, as bf16 flash attention does. The result
// is within ~2^-8 relative of the float32 attention of the same bf16 inputs (tests derive the
// bound). Where the CPU lacks AVX-512 BF16 a portable loop over the same bf16 inputs runs
// (reference::AttentionBf16: slow, and `auto` precision never picks bf16 there).
#pragma once

#include <cstdint>
#include <span>

#include "base/thread_pool.h"
#include "ops/attention.h"

namespace mineru::ops {

// Keys and values of up to `capacity` tokens (a multiple of kKvAlign) for all kv heads, as
// 32-bit words each holding two bf16 (low half first):
//   k[(h * pairs + p) * capacity + j]            key j, head h, dims 2p and 2p + 1
//   v[(h * capacity / 2 + i) * padded_dim + c]   dim c of keys 2i and 2i + 1, head h
// with pairs = ceil(head_dim / 2) and padded_dim = padded_head_dim(); a missing odd dim, dims
// past head_dim and tokens past n are zero (PackKvBf16 writes them).
struct Bf16KvChunk {
  const uint32_t* k = nullptr;
  const uint32_t* v = nullptr;
  int64_t n = 0;
  int64_t capacity = 0;
};

struct MutableBf16KvChunk {
  uint32_t* k = nullptr;
  uint32_t* v = nullptr;
  int64_t capacity = 0;
};

inline int64_t Bf16KeyWords(const AttentionShape& shape, int64_t capacity) {
  return int64_t{shape.n_kv_heads} * ((shape.head_dim + 1) / 2) * capacity;
}
inline int64_t Bf16ValueWords(const AttentionShape& shape, int64_t capacity) {
  return int64_t{shape.n_kv_heads} * (capacity / 2) * shape.padded_head_dim();
}

// Writes n tokens (rows of n_kv_heads * head_dim floats, strides ldk and ldv) into a whole chunk
// of `capacity` tokens, rounded to bf16, and zeroes every token slot past n.
void PackKvBf16(ThreadPool& pool, const AttentionShape& shape, const float* k, int64_t ldk,
                const float* v, int64_t ldv, int64_t n, uint32_t* keys, uint32_t* values,
                int64_t capacity);

// Writes n tokens into chunk positions [at, at + n) (a paged KV cache's block), rounded to bf16;
// dims past head_dim are zero. When at + n is odd it also zeroes the value half of slot at + n,
// the partner of the last token in its pair of keys: P V reads whole pairs, and the partner's
// p = 0 must never meet a stale value (0 x inf is NaN). Tokens are written in order, so every
// slot P V reads is then either written or zero.
void WriteKvBf16(ThreadPool& pool, const AttentionShape& shape, const float* k, int64_t ldk,
                 const float* v, int64_t ldv, int64_t n, const MutableBf16KvChunk& chunk,
                 int64_t at);

struct Bf16AttentionProblem {
  const float* q = nullptr;  // [n_q, n_heads * head_dim], row stride ldq
  int64_t ldq = 0;
  int64_t n_q = 0;
  int64_t q_start = 0;              // causal: query i sees keys 0 ..= q_start + i
  std::span<const Bf16KvChunk> kv;  // keys in order (a vision segment, or a sequence's blocks)
  float* out = nullptr;             // [n_q, n_heads * head_dim], row stride ldo
  int64_t ldo = 0;
};

void AttentionBf16(ThreadPool& pool, const AttentionShape& shape,
                   std::span<const Bf16AttentionProblem> problems);

}  // namespace mineru::ops
