// SPDX-License-Identifier: Apache-2.0
// The bf16 attention (ops/bf16_attention.h) against its double-precision twin on the same bf16
// inputs. Bound, per output: the kernel rounds each probability to bf16 (relative 2^-9), its
// exponential is within a few ulp, and each float32 score carries at most (d / 2 + 4) u sum|q k|
// of absolute error, which exp turns into the same relative error of p; the normalized output
// then moves by at most twice the largest relative error of any p times max |v|.
#include "ops/bf16_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/dtype.h"
#include "ops/bf16_matmul.h"
#include "ops/reference.h"
#include "ops_test_util.h"

namespace mineru::ops {
namespace {

using testing::kUnitRoundoff;
using testing::RandomVector;

struct Case {
  int heads, kv_heads, head_dim;
  int64_t n_q, n_kv, q_start;
  bool causal;
};

void Check(ThreadPool& pool, const Case& t) {
  SCOPED_TRACE(::testing::Message()
               << "heads " << t.heads << "/" << t.kv_heads << " d " << t.head_dim << " q " << t.n_q
               << " kv " << t.n_kv << " causal " << t.causal);
  const AttentionShape shape{t.heads, t.kv_heads, t.head_dim,
                             1.0f / std::sqrt(static_cast<float>(t.head_dim)), t.causal};
  const int64_t qw = int64_t{t.heads} * t.head_dim, kw = int64_t{t.kv_heads} * t.head_dim;
  const auto q = RandomVector(static_cast<size_t>(t.n_q * qw), 3, 2.0f);
  const auto k = RandomVector(static_cast<size_t>(t.n_kv * kw), 5, 2.0f);
  const auto v = RandomVector(static_cast<size_t>(t.n_kv * kw), 7);
  const int64_t cap = RoundUpKv(t.n_kv);
  std::vector<uint32_t> keys(static_cast<size_t>(Bf16KeyWords(shape, cap)), 0xFFFFFFFFu);
  std::vector<uint32_t> values(static_cast<size_t>(Bf16ValueWords(shape, cap)), 0xFFFFFFFFu);
  PackKvBf16(pool, shape, k.data(), kw, v.data(), kw, t.n_kv, keys.data(), values.data(), cap);
  std::vector<float> got(static_cast<size_t>(t.n_q * qw), NAN), want(got.size(), NAN);
  Bf16AttentionProblem problem{
      q.data(), qw, t.n_q, t.q_start, {keys.data(), values.data(), t.n_kv, cap}, got.data(), qw};
  AttentionBf16(pool, shape, std::span(&problem, 1));
  problem.out = want.data();
  reference::AttentionBf16(shape, problem);

  float v_max = 0;
  for (float x : v) v_max = std::max(v_max, std::fabs(x));
  const int group = t.heads / t.kv_heads;
  for (int64_t i = 0; i < t.n_q; ++i) {
    for (int h = 0; h < t.heads; ++h) {
      double score_mag = 0;  // largest sum |q k| over the keys of this row
      for (int64_t j = 0; j < t.n_kv; ++j) {
        double s = 0;
        for (int c = 0; c < t.head_dim; ++c) {
          s += std::fabs(q[i * qw + h * t.head_dim + c] * shape.scale *
                         k[j * kw + (h / group) * t.head_dim + c]);
        }
        score_mag = std::max(score_mag, s);
      }
      const double rel = std::ldexp(1.0, -9) + 8 * kUnitRoundoff +
                         (t.head_dim / 2.0 + 4) * kUnitRoundoff * score_mag;
      const double bound = 2 * rel * v_max + 1e-7;
      for (int c = 0; c < t.head_dim; ++c) {
        const size_t at = static_cast<size_t>(i * qw + h * t.head_dim + c);
        ASSERT_NEAR(got[at], want[at], bound) << "query " << i << " head " << h << " dim " << c;
      }
    }
  }
}

TEST(Bf16AttentionTest, MatchesTwin) {
  ThreadPool pool(2);
  const Case cases[] = {
      {4, 4, 16, 37, 37, 0, false},   {16, 16, 80, 65, 65, 0, false},  // vision-like
      {4, 2, 16, 17, 130, 113, true}, {2, 1, 7, 5, 33, 28, true},      // GQA, odd head dim
      {14, 2, 64, 3, 300, 297, true}, {4, 4, 80, 300, 300, 0, false},  // decoder heads; long
      {2, 2, 16, 1, 1, 0, false},     {2, 2, 16, 64, 64, 0, true},
  };
  for (const Case& c : cases) {
    Check(pool, c);
    if (HasFailure()) return;
  }
}

// The packing zeroes every slot past n (values feed P V with p = 0, which must not meet NaN).
TEST(Bf16AttentionTest, PackingZeroesPadding) {
  ThreadPool pool(1);
  const AttentionShape shape{2, 2, 7, 1.0f, false};
  const auto k = RandomVector(2 * 14, 1), v = RandomVector(2 * 14, 2);
  std::vector<uint32_t> keys(static_cast<size_t>(Bf16KeyWords(shape, 16)), 0xFFFFFFFFu);
  std::vector<uint32_t> values(static_cast<size_t>(Bf16ValueWords(shape, 16)), 0xFFFFFFFFu);
  PackKvBf16(pool, shape, k.data(), 14, v.data(), 14, 2, keys.data(), values.data(), 16);
  const int64_t dp = shape.padded_head_dim();
  for (int h = 0; h < 2; ++h) {
    // Key 0, dims 0 and 1 of head h; dim 7 (the odd pair's high half) is zero.
    EXPECT_EQ(keys[h * 4 * 16],
              uint32_t{F32ToBf16(k[h * 7])} | uint32_t{F32ToBf16(k[h * 7 + 1])} << 16);
    EXPECT_EQ(keys[(h * 4 + 3) * 16] >> 16, 0u);
    for (int64_t j = 2; j < 16; ++j) EXPECT_EQ(keys[h * 4 * 16 + j], 0u) << "key " << j;
    for (int64_t pair = 1; pair < 8; ++pair) {
      for (int64_t c = 0; c < dp; ++c) EXPECT_EQ(values[(h * 8 + pair) * dp + c], 0u);
    }
    for (int64_t c = 7; c < dp; ++c) EXPECT_EQ(values[h * 8 * dp + c], 0u);
  }
}

}  // namespace
}  // namespace mineru::ops
