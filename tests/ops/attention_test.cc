// SPDX-License-Identifier: Apache-2.0
#include "ops/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/reference.h"
#include "ops_test_util.h"

namespace mineru::ops {
namespace {

using testing::ForEachTarget;
using testing::kUnitRoundoff;
using testing::RandomVector;

struct Case {
  int n_heads, n_kv_heads, head_dim;
  int64_t n_q, n_kv;
  bool causal;
  int64_t chunk_capacity;  // keys per chunk (the last may be partial)
};

// Vision-like (one big chunk, non-causal), prefill (causal, GQA), decode (one query), paged
// caches with small chunks, head dims that are not multiples of any vector width, and head
// widths of 1 to 7 vectors (the value products split the head into register-sized groups).
const Case kCases[] = {
    {4, 4, 16, 37, 37, false, 48},      {2, 2, 80, 70, 70, false, 80},
    {14, 2, 64, 1, 50, true, 16},       {14, 2, 64, 9, 130, true, 64},
    {4, 2, 16, 243, 243, true, 256},    {3, 1, 20, 5, 5, true, 16},
    {2, 1, 24, 17, 100, true, 32},      {1, 1, 7, 3, 200, false, 96},
    {16, 16, 80, 130, 130, false, 144}, {2, 1, 96, 20, 90, true, 48},
    {2, 2, 112, 33, 33, false, 48},
};

// Error model: each score q.k carries at most d * u * |q||k| of float32 rounding, scaled; exp
// adds a few ulp; a perturbation delta of the scores moves the softmax weights by at most
// 2 * delta in relative terms, so the output (a convex combination of values) moves by at most
// about (2 * delta + n_kv * u) * max|v|. Factor 4 of headroom over this first-order bound.
double Bound(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
             const std::vector<float>& v, float scale) {
  auto max_abs = [](const std::vector<float>& a) {
    float m = 0;
    for (float x : a) m = std::max(m, std::fabs(x));
    return double{m};
  };
  const double delta =
      c.head_dim * kUnitRoundoff * max_abs(q) * max_abs(k) * c.head_dim * scale + 8 * kUnitRoundoff;
  return 4 * (2 * delta + (c.n_kv + 8) * kUnitRoundoff) * max_abs(v);
}

void ExpectAttentionMatches(ThreadPool& pool, const Case& c) {
  AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim,
                       1.0f / std::sqrt(static_cast<float>(c.head_dim)), c.causal};
  const int64_t q_width = int64_t{c.n_heads} * c.head_dim;
  const int64_t kv_width = int64_t{c.n_kv_heads} * c.head_dim;
  const auto q = RandomVector(static_cast<size_t>(c.n_q * q_width), 1, 1.5f);
  const auto k = RandomVector(static_cast<size_t>(c.n_kv * kv_width), 2, 1.5f);
  const auto v = RandomVector(static_cast<size_t>(c.n_kv * kv_width), 3);
  // Pack into chunks of chunk_capacity keys; unused columns are filled with NaN to prove the
  // kernel never reads them into a result.
  std::vector<std::vector<float>> k_store, v_store;
  std::vector<KvChunk> chunks;
  for (int64_t at = 0; at < c.n_kv; at += c.chunk_capacity) {
    const int64_t n = std::min(c.chunk_capacity, c.n_kv - at);
    const int64_t floats = KvChunkFloats(shape, c.chunk_capacity);
    k_store.emplace_back(static_cast<size_t>(floats), std::nanf(""));
    v_store.emplace_back(static_cast<size_t>(floats), std::nanf(""));
    MutableKvChunk dst{k_store.back().data(), v_store.back().data(), c.chunk_capacity};
    PackKv(pool, shape, k.data() + at * kv_width, kv_width, v.data() + at * kv_width, kv_width, n,
           dst, 0);
    chunks.push_back({dst.k, dst.v, n, c.chunk_capacity});
  }
  const int64_t q_start = c.causal ? c.n_kv - c.n_q : 0;
  std::vector<float> out(static_cast<size_t>(c.n_q * q_width), -1.0f);
  std::vector<float> expected(out.size());
  AttentionProblem problem{q.data(), q_width, c.n_q, q_start, chunks, out.data(), q_width};
  Attention(pool, shape, std::span(&problem, 1));
  reference::Attention(shape, q.data(), q_width, c.n_q, q_start, k.data(), kv_width, v.data(),
                       kv_width, c.n_kv, expected.data(), q_width);
  const double bound = Bound(c, q, k, v, shape.scale);
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], expected[i], bound)
        << "heads " << c.n_heads << "/" << c.n_kv_heads << " d=" << c.head_dim << " n_q=" << c.n_q
        << " n_kv=" << c.n_kv << " causal=" << c.causal << " at " << i;
  }
}

// PackKv writes exactly its scalar twin's layout: the tokens' keys transposed, values in rows
// with zero padding, nothing outside [at, at + n) touched; on the one-thread path of a decode
// step and on the pool's path of a long prefill.
TEST(AttentionTest, PackKvMatchesItsScalarTwin) {
  ThreadPool pool(2);
  struct PackCase {
    int n_kv_heads, head_dim;
    int64_t capacity, at, n;
  };
  for (const PackCase& c : {PackCase{2, 64, 32, 5, 20}, PackCase{2, 72, 32, 0, 1},
                            PackCase{1, 80, 16, 15, 1}, PackCase{2, 64, 640, 7, 600}}) {
    AttentionShape shape{2 * c.n_kv_heads, c.n_kv_heads, c.head_dim, 1.0f, true};
    const int64_t width = int64_t{c.n_kv_heads} * c.head_dim;
    const auto k = RandomVector(static_cast<size_t>(c.n * width), 7);
    const auto v = RandomVector(static_cast<size_t>(c.n * width), 8);
    const auto floats = static_cast<size_t>(KvChunkFloats(shape, c.capacity));
    std::vector<float> k1(floats, std::nanf("")), v1(floats, std::nanf("")), k2 = k1, v2 = v1;
    PackKv(pool, shape, k.data(), width, v.data(), width, c.n, {k1.data(), v1.data(), c.capacity},
           c.at);
    reference::PackKv(shape, k.data(), width, v.data(), width, c.n,
                      {k2.data(), v2.data(), c.capacity}, c.at);
    EXPECT_EQ(std::memcmp(k1.data(), k2.data(), floats * sizeof(float)), 0)
        << "d=" << c.head_dim << " n=" << c.n;
    EXPECT_EQ(std::memcmp(v1.data(), v2.data(), floats * sizeof(float)), 0)
        << "d=" << c.head_dim << " n=" << c.n;
  }
}

TEST(AttentionTest, MatchesReferenceForAllShapesTargets) {
  ThreadPool pool(2);
  ForEachTarget([&] {
    for (const Case& c : kCases) ExpectAttentionMatches(pool, c);
  });
}

TEST(AttentionTest, SeveralProblemsInOneCall) {
  // Two sequences of different lengths (a decode step and a prefill) solved together equal
  // each solved alone.
  ThreadPool pool(2);
  AttentionShape shape{4, 2, 16, 0.25f, true};
  const int64_t width = 4 * 16, kv_width = 2 * 16;
  std::vector<int64_t> lengths = {33, 7};
  std::vector<int64_t> queries = {1, 7};
  std::vector<std::vector<float>> qs, ks, vs, outs, alone;
  std::vector<AttentionProblem> problems;
  std::vector<std::vector<KvChunk>> chunk_lists(2);
  std::vector<std::vector<float>> kstore(2), vstore(2);
  for (int s = 0; s < 2; ++s) {
    qs.push_back(RandomVector(static_cast<size_t>(queries[s] * width), 10 + s));
    ks.push_back(RandomVector(static_cast<size_t>(lengths[s] * kv_width), 20 + s));
    vs.push_back(RandomVector(static_cast<size_t>(lengths[s] * kv_width), 30 + s));
    const int64_t cap = RoundUpKv(lengths[s]);
    kstore[s].assign(static_cast<size_t>(KvChunkFloats(shape, cap)), 0.0f);
    vstore[s].assign(kstore[s].size(), 0.0f);
    PackKv(pool, shape, ks[s].data(), kv_width, vs[s].data(), kv_width, lengths[s],
           {kstore[s].data(), vstore[s].data(), cap}, 0);
    chunk_lists[s].push_back({kstore[s].data(), vstore[s].data(), lengths[s], cap});
    outs.emplace_back(static_cast<size_t>(queries[s] * width));
    alone.emplace_back(static_cast<size_t>(queries[s] * width));
  }
  for (int s = 0; s < 2; ++s) {
    problems.push_back({qs[s].data(), width, queries[s], lengths[s] - queries[s], chunk_lists[s],
                        outs[s].data(), width});
  }
  Attention(pool, shape, problems);
  for (int s = 0; s < 2; ++s) {
    AttentionProblem single = problems[s];
    single.out = alone[s].data();
    Attention(pool, shape, std::span(&single, 1));
    EXPECT_EQ(outs[s], alone[s]) << "sequence " << s;
  }
}

}  // namespace
}  // namespace mineru::ops
