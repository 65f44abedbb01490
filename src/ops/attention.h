// SPDX-License-Identifier: Apache-2.0
// Scaled dot-product attention, tiled (flash-attention style): scores are computed for blocks
// of keys with a running max and sum, so no n_q x n_kv score matrix ever exists.
//
// Keys and values live in chunks in a packed layout that the kernel streams without
// transposing: a whole vision segment is one chunk; a paged KV cache is a list of chunks.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "base/thread_pool.h"

namespace mineru::ops {

// Chunk capacities and padded head widths are multiples of this many floats (one 64-byte
// AVX-512 vector), so every SIMD target reads whole vectors.
inline constexpr int64_t kKvAlign = 16;

inline int64_t RoundUpKv(int64_t n) { return (n + kKvAlign - 1) / kKvAlign * kKvAlign; }

struct AttentionShape {
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads; query head h reads kv head h / (n_heads / n_kv_heads)
  int head_dim = 0;
  float scale = 0;  // scores = (q . k) * scale
  bool causal = false;

  int64_t padded_head_dim() const { return RoundUpKv(head_dim); }
};

// Packed keys and values of up to `capacity` tokens for all kv heads:
//   k[(h * head_dim + c) * capacity + j]         key j, head h, dim c   (keys transposed)
//   v[(h * capacity + j) * padded_head_dim + c]  value j, head h, dim c (dims >= head_dim are 0)
// Columns j >= n of k may hold anything finite or not: they are never used.
struct KvChunk {
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t n = 0;         // tokens present
  int64_t capacity = 0;  // multiple of kKvAlign
};

struct MutableKvChunk {
  float* k = nullptr;
  float* v = nullptr;
  int64_t capacity = 0;
};

// Floats needed for one chunk's keys (equal to its values).
inline int64_t KvChunkFloats(const AttentionShape& shape, int64_t capacity) {
  return int64_t{shape.n_kv_heads} * capacity * shape.padded_head_dim();
}

// Writes n tokens into chunk positions [at, at + n). k and v rows hold n_kv_heads * head_dim
// floats (head h at column h * head_dim) with row strides ldk, ldv.
void PackKv(ThreadPool& pool, const AttentionShape& shape, const float* k, int64_t ldk,
            const float* v, int64_t ldv, int64_t n, const MutableKvChunk& chunk, int64_t at);

struct AttentionProblem {
  const float* q = nullptr;  // [n_q, n_heads * head_dim], row stride ldq
  int64_t ldq = 0;
  int64_t n_q = 0;
  // Causal masking: query i sits at key index q_start + i and sees keys 0 ..= q_start + i.
  int64_t q_start = 0;
  std::span<const KvChunk> kv;  // keys in order; their n sum to the key count
  float* out = nullptr;         // [n_q, n_heads * head_dim], row stride ldo
  int64_t ldo = 0;
};

// Solves every problem; work is spread over the pool as (problem, kv head, query tile) tasks.
// A query row that sees no key (impossible when causal with q_start + i < keys) outputs zeros.
void Attention(ThreadPool& pool, const AttentionShape& shape,
               std::span<const AttentionProblem> problems);

}  // namespace mineru::ops
