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
#include <utility>
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

// Keys and values of a case in the kernel's layout: one whole chunk (block == 0, PackKvBf16), or
// paged blocks of `block` tokens written by WriteKvBf16 in pieces of `piece` tokens, over
// buffers first filled with NaN (a reused cache block's stale contents at their worst).
struct PackedKv {
  std::vector<uint32_t> keys, values;
  std::vector<Bf16KvChunk> chunks;
};

PackedKv Pack(ThreadPool& pool, const AttentionShape& shape, const std::vector<float>& k,
              const std::vector<float>& v, int64_t n_kv, int64_t block, int64_t piece) {
  const int64_t kw = int64_t{shape.n_kv_heads} * shape.head_dim;
  const int64_t cap = block == 0 ? RoundUpKv(n_kv) : block;
  const int64_t blocks = block == 0 ? 1 : std::max<int64_t>(1, (n_kv + block - 1) / block);
  const int64_t key_words = Bf16KeyWords(shape, cap), value_words = Bf16ValueWords(shape, cap);
  PackedKv out;
  out.keys.assign(static_cast<size_t>(blocks * key_words), 0xFFFFFFFFu);
  out.values.assign(static_cast<size_t>(blocks * value_words), 0xFFFFFFFFu);
  if (block == 0) {
    PackKvBf16(pool, shape, k.data(), kw, v.data(), kw, n_kv, out.keys.data(), out.values.data(),
               cap);
    out.chunks.push_back({out.keys.data(), out.values.data(), n_kv, cap});
    return out;
  }
  for (int64_t at = 0; at < n_kv;) {
    const int64_t b = at / block, in_block = at % block;
    const int64_t n = std::min({piece, n_kv - at, block - in_block});
    WriteKvBf16(pool, shape, k.data() + at * kw, kw, v.data() + at * kw, kw, n,
                {out.keys.data() + b * key_words, out.values.data() + b * value_words, cap},
                in_block);
    at += n;
  }
  for (int64_t b = 0; b < blocks; ++b) {
    out.chunks.push_back({out.keys.data() + b * key_words, out.values.data() + b * value_words,
                          std::min(block, n_kv - b * block), cap});
  }
  return out;
}

void Check(ThreadPool& pool, const Case& t, int64_t block = 0, int64_t piece = 0) {
  SCOPED_TRACE(::testing::Message()
               << "heads " << t.heads << "/" << t.kv_heads << " d " << t.head_dim << " q " << t.n_q
               << " kv " << t.n_kv << " causal " << t.causal << " block " << block << " piece "
               << piece);
  const AttentionShape shape{t.heads, t.kv_heads, t.head_dim,
                             1.0f / std::sqrt(static_cast<float>(t.head_dim)), t.causal};
  const int64_t qw = int64_t{t.heads} * t.head_dim, kw = int64_t{t.kv_heads} * t.head_dim;
  const auto q = RandomVector(static_cast<size_t>(t.n_q * qw), 3, 2.0f);
  const auto k = RandomVector(static_cast<size_t>(t.n_kv * kw), 5, 2.0f);
  const auto v = RandomVector(static_cast<size_t>(t.n_kv * kw), 7);
  const PackedKv kv = Pack(pool, shape, k, v, t.n_kv, block, piece);
  std::vector<float> got(static_cast<size_t>(t.n_q * qw), NAN), want(got.size(), NAN);
  Bf16AttentionProblem problem{q.data(), qw, t.n_q, t.q_start, kv.chunks, got.data(), qw};
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

// Paged keys (a decoder's KV cache): many chunks, written a few tokens at a time at odd and even
// offsets, over stale NaN; the twin reads the same chunks.
TEST(Bf16AttentionTest, PagedBlocksMatchTwin) {
  ThreadPool pool(2);
  const Case cases[] = {
      {14, 2, 64, 1, 77, 76, true},   // one decode step over 5 blocks of 16
      {14, 2, 64, 9, 100, 91, true},  // a prefill chunk after 91 cached tokens
      {4, 2, 16, 33, 33, 0, true},    // a whole prompt
      {2, 1, 7, 5, 41, 36, true},     // odd head dim
      {4, 4, 80, 3, 130, 127, true},  // padded head width
  };
  for (const Case& c : cases) {
    for (const auto& [block, piece] :
         {std::pair<int64_t, int64_t>{16, 1}, {16, 3}, {32, 7}, {64, 64}, {128, 5}}) {
      Check(pool, c, block, piece);
      if (HasFailure()) return;
    }
  }
}

// A block written token by token holds exactly what one packing of the same tokens holds, and
// the value half past an odd count is zero.
TEST(Bf16AttentionTest, WritesInPiecesEqualOnePacking) {
  ThreadPool pool(2);
  const AttentionShape shape{4, 2, 7, 1.0f, true};
  const int64_t kw = 14, cap = 32;
  const auto k = RandomVector(static_cast<size_t>(cap * kw), 1), v = RandomVector(k.size(), 2);
  for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{17}, int64_t{32}}) {
    SCOPED_TRACE(n);
    std::vector<uint32_t> keys(static_cast<size_t>(Bf16KeyWords(shape, cap)), 0);
    std::vector<uint32_t> values(static_cast<size_t>(Bf16ValueWords(shape, cap)), 0);
    PackKvBf16(pool, shape, k.data(), kw, v.data(), kw, n, keys.data(), values.data(), cap);
    std::vector<uint32_t> keys2(keys.size(), 0xFFFFFFFFu), values2(values.size(), 0xFFFFFFFFu);
    for (int64_t at = 0; at < n; ++at) {
      WriteKvBf16(pool, shape, k.data() + at * kw, kw, v.data() + at * kw, kw, 1,
                  {keys2.data(), values2.data(), cap}, at);
    }
    const int64_t pairs = 4, dp = shape.padded_head_dim();
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t p = 0; p < pairs; ++p) {
          ASSERT_EQ(keys2[(h * pairs + p) * cap + j], keys[(h * pairs + p) * cap + j]);
        }
      }
      for (int64_t i = 0; i < (n + 1) / 2; ++i) {
        for (int64_t c = 0; c < dp; ++c) {
          ASSERT_EQ(values2[(h * cap / 2 + i) * dp + c], values[(h * cap / 2 + i) * dp + c])
              << "head " << h << " pair " << i << " dim " << c;
        }
      }
    }
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
