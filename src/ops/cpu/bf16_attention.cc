// SPDX-License-Identifier: Apache-2.0
// AVX-512 BF16 attention (ops/bf16_attention.h). The tiling follows cpu/attention.cc: a task owns
// up to kTileRows query rows of one kv head's group; keys are visited in blocks of 64:
//   1. S = Q K^T: tiles of kScoreRows rows x 4 vectors of 16 keys; per pair of head dims one
//      64-byte key load per vector and one broadcast word of q per row, one vdpbf16ps each;
//   2. online softmax in float32 (running max, p = exp(s - m'), lane sums, rescaled outputs);
//   3. p rounded to bf16 pairs of keys, then O += P V: tiles of kPvRows rows x up to kPvMaxVecs
//      vectors of head dims; per pair of keys one value load per vector and one broadcast word
//      of p per row.
#include "ops/bf16_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "ops/bf16_matmul.h"
#include "ops/cpu/bf16_intrinsics.h"
#include "ops/reference.h"

namespace mineru::ops {
namespace {

inline uint32_t PackPair(float lo, float hi) {
  return uint32_t{F32ToBf16(lo)} | (uint32_t{F32ToBf16(hi)} << 16);
}

#if defined(__x86_64__)
constexpr int64_t kLanes = 16;
constexpr int64_t kBlockKeys = 64;  // 4 vectors of keys
constexpr int64_t kScoreRows = 6;   // 6 x 4 accumulators
constexpr int64_t kPvRows = 4;      // 4 x up to 5 accumulators
constexpr int64_t kPvMaxVecs = 5;
constexpr int64_t kTileRows = 64;

using bf16::Dot2;

// exp(x) for x in [-104, 0]: x = n ln2 + r, |r| <= ln2 / 2, degree-6 Taylor polynomial of e^r
// (truncation 1.2e-7 relative) times 2^n by vscalefps (exact).
MINERU_BF16_TARGET inline __m512 Exp(__m512 x) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// s[r][16 v ..] = sum over dim pairs of q words x key words (R rows, V vectors of keys).
template <int R, int V>
MINERU_BF16_TARGET void ScoreTile(const uint32_t* q, int64_t pairs, const uint32_t* kt, int64_t cap,
                                  float* s) {
  __m512 acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < pairs; ++p) {
    __m512i keys[V];
    for (int v = 0; v < V; ++v) keys[v] = _mm512_loadu_si512(kt + p * cap + v * kLanes);
    for (int r = 0; r < R; ++r) {
      const __m512i qv = _mm512_set1_epi32(static_cast<int>(q[r * pairs + p]));
      for (int v = 0; v < V; ++v) acc[r][v] = Dot2(acc[r][v], qv, keys[v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) _mm512_storeu_ps(s + r * kBlockKeys + v * kLanes, acc[r][v]);
  }
}

// o[r][16 v ..] += sum over key pairs of p words x value words.
template <int R, int V>
MINERU_BF16_TARGET void PvTile(const uint32_t* pw, int64_t key_pairs, const uint32_t* val,
                               int64_t ldv, float* o, int64_t ldo) {
  __m512 acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_loadu_ps(o + r * ldo + v * kLanes);
  }
  for (int64_t i = 0; i < key_pairs; ++i) {
    __m512i values[V];
    for (int v = 0; v < V; ++v) values[v] = _mm512_loadu_si512(val + i * ldv + v * kLanes);
    for (int r = 0; r < R; ++r) {
      const __m512i pv = _mm512_set1_epi32(static_cast<int>(pw[r * (kBlockKeys / 2) + i]));
      for (int v = 0; v < V; ++v) acc[r][v] = Dot2(acc[r][v], pv, values[v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) _mm512_storeu_ps(o + r * ldo + v * kLanes, acc[r][v]);
  }
}

template <int R>
MINERU_BF16_TARGET void Score(int64_t rows, int64_t vecs, const uint32_t* q, int64_t pairs,
                              const uint32_t* kt, int64_t cap, float* s) {
  if (rows == R) {
    switch (vecs) {
      case 1:
        return ScoreTile<R, 1>(q, pairs, kt, cap, s);
      case 2:
        return ScoreTile<R, 2>(q, pairs, kt, cap, s);
      case 3:
        return ScoreTile<R, 3>(q, pairs, kt, cap, s);
      default:
        return ScoreTile<R, 4>(q, pairs, kt, cap, s);
    }
  }
  if constexpr (R > 1) Score<R - 1>(rows, vecs, q, pairs, kt, cap, s);
}

template <int R>
MINERU_BF16_TARGET void Pv(int64_t rows, int64_t vecs, const uint32_t* pw, int64_t key_pairs,
                           const uint32_t* val, int64_t ldv, float* o, int64_t ldo) {
  if (rows == R) {
    switch (vecs) {
      case 1:
        return PvTile<R, 1>(pw, key_pairs, val, ldv, o, ldo);
      case 2:
        return PvTile<R, 2>(pw, key_pairs, val, ldv, o, ldo);
      case 3:
        return PvTile<R, 3>(pw, key_pairs, val, ldv, o, ldo);
      case 4:
        return PvTile<R, 4>(pw, key_pairs, val, ldv, o, ldo);
      default:
        return PvTile<R, 5>(pw, key_pairs, val, ldv, o, ldo);
    }
  }
  if constexpr (R > 1) Pv<R - 1>(rows, vecs, pw, key_pairs, val, ldv, o, ldo);
}

struct Scratch {
  std::vector<uint32_t> q, pw;
  std::vector<float> o, s, lane_sums, max;
  std::vector<int64_t> limit;
};

// Softmax update of one row's block of scores (keys [0, visible) of the block count), then its
// probabilities rounded to bf16 key pairs in pw. Returns nothing; updates max, lane sums, o.
MINERU_BF16_TARGET void SoftmaxRow(float* sr, int64_t vecs, int64_t visible, float& row_max,
                                   float* lane_sums, float* o, int64_t dp, uint32_t* pw) {
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  if (visible <= 0) {
    std::memset(pw, 0, sizeof(uint32_t) * kBlockKeys / 2);
    return;
  }
  __m512 vmax = neg_inf;
  for (int64_t v = 0; v < vecs; ++v) {
    const int64_t valid = std::clamp<int64_t>(visible - v * kLanes, 0, kLanes);
    const auto mask = static_cast<__mmask16>((1u << valid) - 1);
    vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(neg_inf, mask, sr + v * kLanes));
  }
  const float block_max = _mm512_reduce_max_ps(vmax);
  const float new_max = std::max(row_max, block_max);
  const float rescale =
      row_max == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(row_max - new_max);
  row_max = new_max;
  const __m512 vnew_max = _mm512_set1_ps(new_max);
  const __m512 floor = _mm512_set1_ps(-104.0f);
  __m512 vsum = _mm512_mul_ps(_mm512_loadu_ps(lane_sums), _mm512_set1_ps(rescale));
  __m512 p[4];
  for (int64_t v = 0; v < 4; ++v) {
    const int64_t valid = v < vecs ? std::clamp<int64_t>(visible - v * kLanes, 0, kLanes) : 0;
    const auto mask = static_cast<__mmask16>((1u << valid) - 1);
    const __m512 arg =
        _mm512_max_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, sr + v * kLanes), vnew_max), floor);
    p[v] = _mm512_maskz_mov_ps(mask, Exp(arg));
    vsum = _mm512_add_ps(vsum, p[v]);
  }
  _mm512_storeu_ps(lane_sums, vsum);
  // 32 words: keys (2i, 2i + 1); cvtne2ps puts its second operand in the low half.
  _mm512_storeu_si512(pw, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(p[1], p[0])));
  _mm512_storeu_si512(pw + 16, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(p[3], p[2])));
  if (rescale != 1.0f) {
    const __m512 vrescale = _mm512_set1_ps(rescale);
    for (int64_t c = 0; c < dp; c += kLanes) {
      _mm512_storeu_ps(o + c, _mm512_mul_ps(_mm512_loadu_ps(o + c), vrescale));
    }
  }
}

MINERU_BF16_TARGET void RunTile(const AttentionShape& shape, const Bf16AttentionProblem& problem,
                                int64_t g, int64_t first, int64_t positions, Scratch& sc) {
  const int64_t d = shape.head_dim, dp = shape.padded_head_dim(), pairs = (d + 1) / 2;
  const int64_t group = shape.n_heads / shape.n_kv_heads;
  const int64_t rows = positions * group;
  sc.q.assign(static_cast<size_t>(rows * pairs), 0);
  sc.o.assign(static_cast<size_t>(rows * dp), 0.0f);
  sc.s.resize(static_cast<size_t>(rows * kBlockKeys));
  sc.pw.resize(static_cast<size_t>(rows * kBlockKeys / 2));
  sc.lane_sums.assign(static_cast<size_t>(rows * kLanes), 0.0f);
  sc.max.assign(static_cast<size_t>(rows), -std::numeric_limits<float>::infinity());
  sc.limit.resize(static_cast<size_t>(rows));
  int64_t total = 0;
  for (const Bf16KvChunk& chunk : problem.kv) total += chunk.n;
  int64_t max_limit = 0;
  for (int64_t pi = 0; pi < positions; ++pi) {
    for (int64_t t = 0; t < group; ++t) {
      const int64_t r = pi * group + t;
      const float* src = problem.q + (first + pi) * problem.ldq + (g * group + t) * d;
      for (int64_t c = 0; c < d; c += 2) {
        const float hi = c + 1 < d ? src[c + 1] * shape.scale : 0.0f;
        sc.q[r * pairs + c / 2] = PackPair(src[c] * shape.scale, hi);
      }
      sc.limit[r] = shape.causal ? problem.q_start + first + pi : total - 1;
      max_limit = std::max(max_limit, sc.limit[r]);
    }
  }
  const int64_t dim_vecs = dp / kLanes;
  const int64_t dim_groups = (dim_vecs + kPvMaxVecs - 1) / kPvMaxVecs;
  // Keys are visited chunk by chunk, in blocks of up to kBlockKeys from each chunk's start: the
  // order (and so every sum) depends on the chunks alone, never on the other rows or problems.
  int64_t base = 0;  // key index of the chunk's first key
  for (const Bf16KvChunk& chunk : problem.kv) {
    const int64_t cap = chunk.capacity;
    const uint32_t* kt = chunk.k + g * pairs * cap;
    const uint32_t* val = chunk.v + g * (cap / 2) * dp;
    for (int64_t j0 = 0; j0 < chunk.n && base + j0 <= max_limit; j0 += kBlockKeys) {
      const int64_t keys = std::min(kBlockKeys, chunk.n - j0);
      const int64_t vecs = (keys + kLanes - 1) / kLanes;
      for (int64_t r0 = 0; r0 < rows; r0 += kScoreRows) {
        Score<kScoreRows>(std::min(kScoreRows, rows - r0), vecs, sc.q.data() + r0 * pairs, pairs,
                          kt + j0, cap, sc.s.data() + r0 * kBlockKeys);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t visible = std::min(keys, sc.limit[r] - (base + j0) + 1);
        SoftmaxRow(sc.s.data() + r * kBlockKeys, vecs, visible, sc.max[r],
                   sc.lane_sums.data() + r * kLanes, sc.o.data() + r * dp, dp,
                   sc.pw.data() + r * kBlockKeys / 2);
      }
      const int64_t key_pairs = (keys + 1) / 2;
      for (int64_t r0 = 0; r0 < rows; r0 += kPvRows) {
        const int64_t tile_rows = std::min(kPvRows, rows - r0);
        for (int64_t gi = 0, v0 = 0; gi < dim_groups; ++gi) {
          const int64_t v = dim_vecs / dim_groups + (gi < dim_vecs % dim_groups ? 1 : 0);
          Pv<kPvRows>(tile_rows, v, sc.pw.data() + r0 * kBlockKeys / 2, key_pairs,
                      val + (j0 / 2) * dp + v0 * kLanes, dp, sc.o.data() + r0 * dp + v0 * kLanes,
                      dp);
          v0 += v;
        }
      }
    }
    base += chunk.n;
  }
  for (int64_t pi = 0; pi < positions; ++pi) {
    for (int64_t t = 0; t < group; ++t) {
      const int64_t r = pi * group + t;
      float* dst = problem.out + (first + pi) * problem.ldo + (g * group + t) * d;
      const float sum = _mm512_reduce_add_ps(_mm512_loadu_ps(sc.lane_sums.data() + r * kLanes));
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      for (int64_t c = 0; c < d; ++c) dst[c] = sc.o[r * dp + c] * inv;
    }
  }
}
#endif

}  // namespace

void PackKvBf16(ThreadPool& pool, const AttentionShape& shape, const float* k, int64_t ldk,
                const float* v, int64_t ldv, int64_t n, uint32_t* keys, uint32_t* values,
                int64_t capacity) {
  MINERU_CHECK(n >= 0 && n <= capacity && capacity % kKvAlign == 0,
               "PackKvBf16: {} tokens, capacity {}", n, capacity);
  const int64_t d = shape.head_dim, dp = shape.padded_head_dim(), pairs = (d + 1) / 2;
  constexpr int64_t kTokensPerTask = 256;
  const int64_t ranges = (capacity + kTokensPerTask - 1) / kTokensPerTask;
  pool.ParallelFor(static_cast<size_t>(shape.n_kv_heads * ranges), [&](size_t task, int) {
    const int64_t h = static_cast<int64_t>(task) / ranges;
    const int64_t begin = (static_cast<int64_t>(task) % ranges) * kTokensPerTask;
    const int64_t end = std::min(capacity, begin + kTokensPerTask);  // an even number of tokens
    uint32_t* kt = keys + h * pairs * capacity;
    uint32_t* vh = values + h * (capacity / 2) * dp;
    auto key = [&](int64_t j, int64_t c) { return j < n && c < d ? k[j * ldk + h * d + c] : 0.0f; };
    auto value = [&](int64_t j, int64_t c) {
      return j < n && c < d ? v[j * ldv + h * d + c] : 0.0f;
    };
    for (int64_t j = begin; j < end; ++j) {
      for (int64_t p = 0; p < pairs; ++p)
        kt[p * capacity + j] = PackPair(key(j, 2 * p), key(j, 2 * p + 1));
    }
    for (int64_t j = begin; j < end; j += 2) {
      uint32_t* row = vh + (j / 2) * dp;
      for (int64_t c = 0; c < dp; ++c) row[c] = PackPair(value(j, c), value(j + 1, c));
    }
  });
}

void WriteKvBf16(ThreadPool& pool, const AttentionShape& shape, const float* k, int64_t ldk,
                 const float* v, int64_t ldv, int64_t n, const MutableBf16KvChunk& chunk,
                 int64_t at) {
  MINERU_CHECK(at >= 0 && n >= 0 && at + n <= chunk.capacity && chunk.capacity % kKvAlign == 0,
               "WriteKvBf16: tokens [{}, {}) of a chunk of {}", at, at + n, chunk.capacity);
  const int64_t d = shape.head_dim, dp = shape.padded_head_dim(), pairs = (d + 1) / 2;
  const int64_t cap = chunk.capacity;
  // A value word holds two tokens, so tasks split at even slots: no two write one word.
  constexpr int64_t kTokensPerTask = 64;
  const int64_t first_pair = at / 2, end_pair = (at + n + 1) / 2;
  const int64_t ranges = (end_pair - first_pair + kTokensPerTask / 2 - 1) / (kTokensPerTask / 2);
  pool.ParallelFor(static_cast<size_t>(shape.n_kv_heads * ranges), [&](size_t task, int) {
    const int64_t h = static_cast<int64_t>(task) / ranges;
    const int64_t pair_begin =
        first_pair + (static_cast<int64_t>(task) % ranges) * (kTokensPerTask / 2);
    const int64_t pair_end = std::min(end_pair, pair_begin + kTokensPerTask / 2);
    uint32_t* kt = chunk.k + h * pairs * cap;
    uint32_t* vh = chunk.v + h * (cap / 2) * dp;
    // Value word (j / 2, c) holds token j in its low half when j is even.
    auto set_half = [](uint32_t& word, int64_t j, uint16_t half) {
      word = j % 2 == 0 ? (word & 0xFFFF0000u) | half : (word & 0xFFFFu) | uint32_t{half} << 16;
    };
    for (int64_t j = std::max(at, 2 * pair_begin); j < std::min(at + n, 2 * pair_end); ++j) {
      const float* key = k + (j - at) * ldk + h * d;
      const float* value = v + (j - at) * ldv + h * d;
      for (int64_t p = 0; p < pairs; ++p) {
        kt[p * cap + j] = PackPair(key[2 * p], 2 * p + 1 < d ? key[2 * p + 1] : 0.0f);
      }
      uint32_t* row = vh + (j / 2) * dp;
      for (int64_t c = 0; c < dp; ++c) set_half(row[c], j, c < d ? F32ToBf16(value[c]) : 0);
    }
    const int64_t partner = at + n;  // odd: the unwritten half of the last token's pair
    if (partner % 2 == 1 && partner / 2 >= pair_begin && partner / 2 < pair_end) {
      uint32_t* row = vh + (partner / 2) * dp;
      for (int64_t c = 0; c < dp; ++c) set_half(row[c], partner, 0);
    }
  });
}

void AttentionBf16(ThreadPool& pool, const AttentionShape& shape,
                   std::span<const Bf16AttentionProblem> problems) {
  MINERU_CHECK(shape.n_kv_heads > 0 && shape.n_heads % shape.n_kv_heads == 0 && shape.head_dim > 0,
               "AttentionBf16: heads {} / kv heads {} / head dim {}", shape.n_heads,
               shape.n_kv_heads, shape.head_dim);
#if defined(__x86_64__)
  if (Bf16DotIsNative()) {
    const int64_t group = shape.n_heads / shape.n_kv_heads;
    const int64_t per_tile = std::max<int64_t>(1, kTileRows / group);
    struct Task {
      size_t problem;
      int64_t head, first;
    };
    std::vector<Task> tasks;
    for (size_t p = 0; p < problems.size(); ++p) {
      for (int64_t g = 0; g < shape.n_kv_heads; ++g) {
        for (int64_t i = 0; i < problems[p].n_q; i += per_tile) tasks.push_back({p, g, i});
      }
    }
    pool.ParallelFor(tasks.size(), [&](size_t index, int) {
      static thread_local Scratch scratch;
      const Task& t = tasks[index];
      const Bf16AttentionProblem& problem = problems[t.problem];
      RunTile(shape, problem, t.head, t.first, std::min(per_tile, problem.n_q - t.first), scratch);
    });
    return;
  }
#endif
  pool.ParallelFor(problems.size(),
                   [&](size_t p, int) { reference::AttentionBf16(shape, problems[p]); });
}

}  // namespace mineru::ops
