// SPDX-License-Identifier: Apache-2.0
#include "ops/matmul.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ops/reference.h"
#include "ops_test_util.h"

namespace mineru::ops {
namespace {

using testing::ForEachTarget;
using testing::kUnitRoundoff;
using testing::MakeWeights;
using testing::RandomVector;

struct Case {
  int64_t m, k, n;
};

// Shapes around every blocking boundary: streaming vs packed rows (8/9), register tiles (6, 12),
// vector widths (8, 16, 32), depth blocks (1024) and column blocks (512), plus MinerU-like widths.
const Case kCases[] = {
    {1, 1, 1},    {1, 64, 33},   {2, 17, 5},     {3, 100, 64},    {4, 896, 128},  {5, 1, 7},
    {7, 33, 19},  {8, 257, 31},  {9, 16, 16},    {12, 64, 32},    {13, 300, 100}, {25, 1176, 64},
    {31, 5, 513}, {64, 257, 33}, {97, 128, 600}, {130, 64, 1030}, {13, 1100, 40}, {20, 2100, 33},
};

// Forward error of a float32 dot product of length k, accumulated in any order with FMA:
// |computed - exact| <= k * u * sum_k |x_k w_k| (Higham, Thm 3.1, first order), plus one
// rounding each for the bias and accumulate adds. The reference is exact to u|y|.
void ExpectMatMulMatches(ThreadPool& pool, const Case& c, DType dtype, bool with_bias,
                         bool accumulate) {
  const int64_t ldx = c.k + 3, ldy = c.n + 5;  // strides wider than the rows
  auto x = RandomVector(static_cast<size_t>(c.m * ldx), 11 + c.m);
  auto w = MakeWeights(dtype, c.n, c.k, 7 + c.k);
  auto bias = RandomVector(static_cast<size_t>(c.n), 5);
  auto y0 = RandomVector(static_cast<size_t>(c.m * ldy), 3);
  std::vector<float> y = y0, expected = y0;
  MatMul(pool, x.data(), c.m, ldx, w.view, with_bias ? bias.data() : nullptr, y.data(), ldy,
         accumulate);
  reference::MatMul(x.data(), c.m, ldx, w.view, with_bias ? bias.data() : nullptr, expected.data(),
                    ldy, accumulate);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double magnitude = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        magnitude += std::fabs(double{x[i * ldx + k]} * w.values[j * c.k + k]);
      }
      if (with_bias) magnitude += std::fabs(bias[j]);
      if (accumulate) magnitude += std::fabs(y0[i * ldy + j]);
      const double bound = (c.k + 3) * kUnitRoundoff * magnitude + 1e-30;
      ASSERT_NEAR(y[i * ldy + j], expected[i * ldy + j], bound)
          << "m=" << c.m << " k=" << c.k << " n=" << c.n << " at (" << i << ", " << j << ")";
    }
    // Padding between rows is untouched.
    for (int64_t j = c.n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], y0[i * ldy + j]);
  }
}

TEST(MatMulTest, MatchesReferenceForAllShapesDtypesTargets) {
  ThreadPool pool(2);
  ForEachTarget([&] {
    for (const Case& c : kCases) {
      for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
        ExpectMatMulMatches(pool, c, dtype, /*with_bias=*/(c.m % 2) == 1, /*accumulate=*/false);
      }
      ExpectMatMulMatches(pool, c, DType::kBF16, true, true);
    }
  });
}

TEST(MatMulTest, ResultIndependentOfThreadCount) {
  const Case c{50, 300, 77};
  auto x = RandomVector(static_cast<size_t>(c.m * c.k), 1);
  auto w = MakeWeights(DType::kBF16, c.n, c.k, 2);
  std::vector<float> y1(static_cast<size_t>(c.m * c.n)), y3 = y1;
  ThreadPool one(1), three(3);
  MatMul(one, x.data(), c.m, c.k, w.view, nullptr, y1.data(), c.n, false);
  MatMul(three, x.data(), c.m, c.k, w.view, nullptr, y3.data(), c.n, false);
  EXPECT_EQ(y1, y3);
}

}  // namespace
}  // namespace mineru::ops
