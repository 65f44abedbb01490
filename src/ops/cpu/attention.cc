// SPDX-License-Identifier: Apache-2.0
// Tiled attention for every SIMD target (Highway dynamic dispatch).
//
// A task owns one query tile: up to kTileRows rows, each row one (query position, query head)
// pair of a single kv head's group, so grouped-query heads share every key and value load.
// Keys are visited in blocks of kBlockKeys:
//   1. scores S = Q K^T for the block: register tiles of kScoreRows rows x 4 vectors of keys,
//      reading the transposed keys of the chunk directly (one vector load per dim and vector);
//   2. online softmax: new running max m', p = exp(s - m') (queries are pre-scaled), running
//      sum l' = l * exp(m - m') + sum(p) kept per lane, output rows rescaled by exp(m - m');
//   3. O += P V: register tiles of kPvRows rows x up to kPvMaxVecs vectors of the head
//      dimension (the head split into as few, as even groups as fit the registers).
// Finally O / l. Memory per task is O(kTileRows * (head_dim + kBlockKeys)), never n_q x n_kv.
//
// Numerics: float32 throughout; exp is Highway's (about 1 ulp). Compared with a full softmax
// the result differs only by rounding (the rescaling factors are exact powers of e products).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/attention.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/aligned_allocator.h>
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "ops/attention.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::ops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kLanes = hn::MaxLanes(DF());

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_ARCH_ARM_A64
constexpr size_t kScoreRows = 6;  // 6 x 4 = 24 accumulators of 32 registers
constexpr size_t kPvRows = 4;     // 4 x 6 = 24 accumulators
constexpr size_t kPvMaxVecs = 6;
#else
constexpr size_t kScoreRows = 2;  // 2 x 4 = 8 accumulators of 16 registers
constexpr size_t kPvRows = 2;     // 2 x 4 = 8 accumulators
constexpr size_t kPvMaxVecs = 4;
#endif
constexpr size_t kMaxVecs = 4;
constexpr size_t kBlockKeys = kMaxVecs * kLanes;
constexpr size_t kTileRows = 64;
static_assert(kKvAlign % kLanes == 0, "chunk capacities must hold whole vectors");

// s[r][v * kLanes ..] = sum_c q[r][c] * kt[c][v * kLanes ..]   (unscaled scores)
template <size_t kRows, size_t kVecs>
HWY_INLINE void ScoreTile(const float* HWY_RESTRICT q, size_t ldq, size_t head_dim,
                          const float* HWY_RESTRICT kt, size_t ldk, float* HWY_RESTRICT s) {
  const DF df;
  VF acc[kRows][kVecs];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::Zero(df);
  }
  for (size_t c = 0; c < head_dim; ++c) {
    VF keys[kVecs];
    for (size_t v = 0; v < kVecs; ++v) keys[v] = hn::LoadU(df, kt + c * ldk + v * kLanes);
    for (size_t r = 0; r < kRows; ++r) {
      const VF a = hn::Set(df, q[r * ldq + c]);
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::MulAdd(a, keys[v], acc[r][v]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t v = 0; v < kVecs; ++v) hn::Store(acc[r][v], df, s + r * kBlockKeys + v * kLanes);
  }
}

// o[r][v * kLanes ..] += sum_j p[r][j] * val[j][v * kLanes ..]
template <size_t kRows, size_t kVecs>
HWY_INLINE void PvTile(const float* HWY_RESTRICT p, size_t keys, const float* HWY_RESTRICT val,
                       size_t ldv, float* HWY_RESTRICT o, size_t ldo) {
  const DF df;
  VF acc[kRows][kVecs];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::LoadU(df, o + r * ldo + v * kLanes);
  }
  for (size_t j = 0; j < keys; ++j) {
    VF values[kVecs];
    for (size_t v = 0; v < kVecs; ++v) values[v] = hn::LoadU(df, val + j * ldv + v * kLanes);
    for (size_t r = 0; r < kRows; ++r) {
      const VF a = hn::Set(df, p[r * kBlockKeys + j]);
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::MulAdd(a, values[v], acc[r][v]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t v = 0; v < kVecs; ++v) hn::StoreU(acc[r][v], df, o + r * ldo + v * kLanes);
  }
}

// Runtime (rows, vecs) -> compile-time tile. rows <= kRows, 1 <= vecs <= kMaxVecs.
template <size_t kRows>
HWY_INLINE void Score(size_t rows, size_t vecs, const float* q, size_t ldq, size_t head_dim,
                      const float* kt, size_t ldk, float* s) {
  if (rows == kRows) {
    switch (vecs) {
      case 1:
        return ScoreTile<kRows, 1>(q, ldq, head_dim, kt, ldk, s);
      case 2:
        return ScoreTile<kRows, 2>(q, ldq, head_dim, kt, ldk, s);
      case 3:
        return ScoreTile<kRows, 3>(q, ldq, head_dim, kt, ldk, s);
      default:
        return ScoreTile<kRows, 4>(q, ldq, head_dim, kt, ldk, s);
    }
  }
  if constexpr (kRows > 1) Score<kRows - 1>(rows, vecs, q, ldq, head_dim, kt, ldk, s);
}

template <size_t kRows>
HWY_INLINE void Pv(size_t rows, size_t vecs, const float* p, size_t keys, const float* val,
                   size_t ldv, float* o, size_t ldo) {
  if (rows == kRows) {
    switch (vecs) {
      case 1:
        return PvTile<kRows, 1>(p, keys, val, ldv, o, ldo);
      case 2:
        return PvTile<kRows, 2>(p, keys, val, ldv, o, ldo);
      case 3:
        return PvTile<kRows, 3>(p, keys, val, ldv, o, ldo);
      case 4:
        return PvTile<kRows, 4>(p, keys, val, ldv, o, ldo);
      case 5:
        if constexpr (kPvMaxVecs >= 5) return PvTile<kRows, 5>(p, keys, val, ldv, o, ldo);
        break;
      default:
        if constexpr (kPvMaxVecs >= 6) return PvTile<kRows, 6>(p, keys, val, ldv, o, ldo);
        break;
    }
    return;
  }
  if constexpr (kRows > 1) Pv<kRows - 1>(rows, vecs, p, keys, val, ldv, o, ldo);
}

struct Scratch {
  hwy::AlignedFreeUniquePtr<float[]> q, o, s, sum_vec;
  std::vector<float> max;
  std::vector<int64_t> limit;
  size_t capacity_rows = 0, padded = 0;

  void Reserve(size_t rows, size_t padded_dim) {
    if (rows <= capacity_rows && padded_dim == padded) return;
    capacity_rows = std::max(rows, capacity_rows);
    padded = padded_dim;
    q = hwy::AllocateAligned<float>(capacity_rows * padded);
    o = hwy::AllocateAligned<float>(capacity_rows * padded);
    s = hwy::AllocateAligned<float>(capacity_rows * kBlockKeys);
    sum_vec = hwy::AllocateAligned<float>(capacity_rows * kLanes);
    max.resize(capacity_rows);
    limit.resize(capacity_rows);
  }
};

struct Task {
  size_t problem;
  size_t kv_head;
  size_t first_position;
};

void RunTile(const AttentionShape& shape, const AttentionProblem& problem, size_t g, size_t first,
             size_t positions, Scratch& sc) {
  const DF df;
  const size_t d = static_cast<size_t>(shape.head_dim);
  const size_t dp = static_cast<size_t>(shape.padded_head_dim());
  const size_t group = static_cast<size_t>(shape.n_heads / shape.n_kv_heads);
  const size_t rows = positions * group;
  sc.Reserve(rows, dp);
  float* qs = sc.q.get();
  float* o = sc.o.get();
  float* s = sc.s.get();
  int64_t total_keys = 0;
  for (const KvChunk& chunk : problem.kv) total_keys += chunk.n;
  int64_t max_limit = 0;
  for (size_t pi = 0; pi < positions; ++pi) {
    const size_t i = first + pi;
    for (size_t t = 0; t < group; ++t) {
      const size_t r = pi * group + t;
      const float* src = problem.q + i * static_cast<size_t>(problem.ldq) + (g * group + t) * d;
      // Queries are stored pre-scaled, so scores come out of the product ready for softmax.
      for (size_t c = 0; c < d; ++c) qs[r * dp + c] = src[c] * shape.scale;
      std::fill(qs + r * dp + d, qs + (r + 1) * dp, 0.0f);
      hn::Store(hn::Zero(df), df, sc.sum_vec.get() + r * kLanes);
      std::fill(o + r * dp, o + (r + 1) * dp, 0.0f);
      sc.max[r] = -std::numeric_limits<float>::infinity();
      // Last key index this row may see.
      sc.limit[r] = shape.causal ? problem.q_start + static_cast<int64_t>(i) : total_keys - 1;
      max_limit = std::max(max_limit, sc.limit[r]);
    }
  }
  const VF neg_inf = hn::Set(df, -std::numeric_limits<float>::infinity());
  // exp(-104) is 0 in float32; clamping keeps exp's argument in its valid range.
  const VF floor = hn::Set(df, -104.0f);
  // The head dimension in as few groups of at most kPvMaxVecs vectors as possible, sized evenly.
  const size_t dim_vecs = dp / kLanes;
  const size_t dim_groups = (dim_vecs + kPvMaxVecs - 1) / kPvMaxVecs;
  int64_t key_base = 0;
  for (const KvChunk& chunk : problem.kv) {
    const size_t cap = static_cast<size_t>(chunk.capacity);
    const float* kt = chunk.k + g * d * cap;
    const float* val = chunk.v + g * cap * dp;
    for (size_t j0 = 0; j0 < static_cast<size_t>(chunk.n); j0 += kBlockKeys) {
      const int64_t block_base = key_base + static_cast<int64_t>(j0);
      if (block_base > max_limit) return;
      const size_t keys = std::min(kBlockKeys, static_cast<size_t>(chunk.n) - j0);
      const size_t vecs = (keys + kLanes - 1) / kLanes;
      for (size_t r0 = 0; r0 < rows; r0 += kScoreRows) {
        Score<kScoreRows>(std::min(kScoreRows, rows - r0), vecs, qs + r0 * dp, dp, d, kt + j0, cap,
                          s + r0 * kBlockKeys);
      }
      for (size_t r = 0; r < rows; ++r) {
        float* sr = s + r * kBlockKeys;
        const int64_t visible_signed =
            std::min<int64_t>(static_cast<int64_t>(keys), sc.limit[r] - block_base + 1);
        if (visible_signed <= 0) {
          std::fill(sr, sr + vecs * kLanes, 0.0f);
          continue;
        }
        const size_t visible = static_cast<size_t>(visible_signed);
        VF vmax = neg_inf;
        for (size_t v = 0; v < vecs; ++v) {
          const size_t valid = visible > v * kLanes ? std::min(kLanes, visible - v * kLanes) : 0;
          vmax = hn::Max(
              vmax, hn::IfThenElse(hn::FirstN(df, valid), hn::Load(df, sr + v * kLanes), neg_inf));
        }
        const float block_max = hn::GetLane(hn::MaxOfLanes(df, vmax));
        const float new_max = std::max(sc.max[r], block_max);
        const float rescale = sc.max[r] == -std::numeric_limits<float>::infinity()
                                  ? 0.0f
                                  : std::exp(sc.max[r] - new_max);
        sc.max[r] = new_max;
        const VF vnew_max = hn::Set(df, new_max);
        // The running sum stays a vector of lane sums; one horizontal sum at the end.
        float* lane_sums = sc.sum_vec.get() + r * kLanes;
        VF vsum = hn::Mul(hn::Load(df, lane_sums), hn::Set(df, rescale));
        for (size_t v = 0; v < vecs; ++v) {
          const size_t valid = visible > v * kLanes ? std::min(kLanes, visible - v * kLanes) : 0;
          const VF arg = hn::Max(hn::Sub(hn::Load(df, sr + v * kLanes), vnew_max), floor);
          const VF p = hn::IfThenElseZero(hn::FirstN(df, valid), hn::Exp(df, arg));
          hn::Store(p, df, sr + v * kLanes);
          vsum = hn::Add(vsum, p);
        }
        hn::Store(vsum, df, lane_sums);
        if (rescale != 1.0f) {
          const VF vrescale = hn::Set(df, rescale);
          for (size_t c = 0; c < dp; c += kLanes) {
            hn::Store(hn::Mul(hn::Load(df, o + r * dp + c), vrescale), df, o + r * dp + c);
          }
        }
      }
      for (size_t r0 = 0; r0 < rows; r0 += kPvRows) {
        const size_t tile_rows = std::min(kPvRows, rows - r0);
        for (size_t g = 0, v0 = 0; g < dim_groups; ++g) {
          const size_t vecs = dim_vecs / dim_groups + (g < dim_vecs % dim_groups ? 1 : 0);
          Pv<kPvRows>(tile_rows, vecs, s + r0 * kBlockKeys, keys, val + j0 * dp + v0 * kLanes, dp,
                      o + r0 * dp + v0 * kLanes, dp);
          v0 += vecs;
        }
      }
    }
    key_base += chunk.n;
  }
}

void WriteTile(const AttentionShape& shape, const AttentionProblem& problem, size_t g, size_t first,
               size_t positions, const Scratch& sc) {
  const size_t d = static_cast<size_t>(shape.head_dim);
  const size_t dp = static_cast<size_t>(shape.padded_head_dim());
  const size_t group = static_cast<size_t>(shape.n_heads / shape.n_kv_heads);
  for (size_t pi = 0; pi < positions; ++pi) {
    for (size_t t = 0; t < group; ++t) {
      const size_t r = pi * group + t;
      float* dst =
          problem.out + (first + pi) * static_cast<size_t>(problem.ldo) + (g * group + t) * d;
      const DF df;
      const float sum =
          hn::GetLane(hn::SumOfLanes(df, hn::Load(df, sc.sum_vec.get() + r * kLanes)));
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      for (size_t c = 0; c < d; ++c) dst[c] = sc.o[r * dp + c] * inv;
    }
  }
}

void AttentionImpl(ThreadPool* pool, const AttentionShape* shape_ptr,
                   const AttentionProblem* problems, size_t num_problems) {
  const AttentionShape& shape = *shape_ptr;
  const size_t group = static_cast<size_t>(shape.n_heads / shape.n_kv_heads);
  const size_t positions_per_tile = std::max<size_t>(1, kTileRows / group);
  std::vector<Task> tasks;
  for (size_t p = 0; p < num_problems; ++p) {
    for (size_t g = 0; g < static_cast<size_t>(shape.n_kv_heads); ++g) {
      for (size_t i = 0; i < static_cast<size_t>(problems[p].n_q); i += positions_per_tile) {
        tasks.push_back({p, g, i});
      }
    }
  }
  pool->ParallelFor(tasks.size(), [&](size_t index, int) {
    static thread_local Scratch scratch;
    const Task& task = tasks[index];
    const AttentionProblem& problem = problems[task.problem];
    const size_t positions =
        std::min(positions_per_tile, static_cast<size_t>(problem.n_q) - task.first_position);
    RunTile(shape, problem, task.kv_head, task.first_position, positions, scratch);
    WriteTile(shape, problem, task.kv_head, task.first_position, positions, scratch);
  });
}

}  // namespace mineru::ops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru::ops {

HWY_EXPORT(AttentionImpl);

void Attention(ThreadPool& pool, const AttentionShape& shape,
               std::span<const AttentionProblem> problems) {
  MINERU_CHECK(shape.n_kv_heads > 0 && shape.n_heads % shape.n_kv_heads == 0 && shape.head_dim > 0,
               "Attention: heads {} / kv heads {} / head dim {}", shape.n_heads, shape.n_kv_heads,
               shape.head_dim);
  for (const AttentionProblem& problem : problems) {
    for (const KvChunk& chunk : problem.kv) {
      MINERU_CHECK(chunk.capacity % kKvAlign == 0 && chunk.n <= chunk.capacity,
                   "Attention: chunk of {} tokens, capacity {}", chunk.n, chunk.capacity);
    }
  }
  HWY_DYNAMIC_DISPATCH(AttentionImpl)(&pool, &shape, problems.data(), problems.size());
}

void PackKv(ThreadPool& pool, const AttentionShape& shape, const float* k, int64_t ldk,
            const float* v, int64_t ldv, int64_t n, const MutableKvChunk& chunk, int64_t at) {
  MINERU_CHECK(at >= 0 && at + n <= chunk.capacity, "PackKv: [{}, {}) past capacity {}", at, at + n,
               chunk.capacity);
  const int64_t d = shape.head_dim;
  const int64_t dp = shape.padded_head_dim();
  const int64_t cap = chunk.capacity;
  // One task per (kv head, range of 256 tokens).
  constexpr int64_t kTokensPerTask = 256;
  const int64_t ranges = (n + kTokensPerTask - 1) / kTokensPerTask;
  auto pack = [&](size_t task, int) {
    const int64_t h = static_cast<int64_t>(task) / ranges;
    const int64_t begin = (static_cast<int64_t>(task) % ranges) * kTokensPerTask;
    const int64_t end = std::min(n, begin + kTokensPerTask);
    float* kt = chunk.k + h * d * cap + at;
    float* vh = chunk.v + (h * cap + at) * dp;
    for (int64_t j = begin; j < end; ++j) {
      const float* kr = k + j * ldk + h * d;
      for (int64_t c = 0; c < d; ++c) kt[c * cap + j] = kr[c];
      float* vr = vh + j * dp;
      std::memcpy(vr, v + j * ldv + h * d, static_cast<size_t>(d) * sizeof(float));
      std::fill(vr + d, vr + dp, 0.0f);
    }
  };
  const auto tasks = static_cast<size_t>(shape.n_kv_heads * ranges);
  if (n * shape.n_kv_heads * d < 16 * 1024) {  // a decode step: waking the pool costs more
    for (size_t task = 0; task < tasks; ++task) pack(task, 0);
  } else {
    pool.ParallelFor(tasks, pack);
  }
}

}  // namespace mineru::ops
#endif  // HWY_ONCE
