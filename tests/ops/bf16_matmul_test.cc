// SPDX-License-Identifier: Apache-2.0
// The bf16 product (ops/bf16_matmul.h) against its scalar twin, for accuracy, and for batch
// invariance.
//
// Bound against the twin. Each output's lanes add 2 ceil(K / 32) exact products, then a tree of
// 4 levels, then the bias and y: at most d = 2 ceil(K / 32) + 6 rounded additions on any path,
// so both the kernel and the twin are within d u sum |a b| (+ |bias| + |y|) of the exact sum of
// the same bf16 products (Higham, Thm 3.1, first order), and within twice that of each other.
// Where the CPU performs vdpbf16ps's additions exactly as specified the two are equal (they are
// on the Intel CPUs this was written on); the bound is what every vendor must meet.
#include "ops/bf16_matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/dtype.h"
#include "ops/packed_matrix.h"
#include "ops/reference.h"
#include "ops_test_util.h"

namespace mineru::ops {
namespace {

using testing::kUnitRoundoff;
using testing::MakeWeights;
using testing::RandomVector;
using testing::TestWeights;

struct Problem {
  int64_t m, k, n;
  bool with_bias, accumulate;
};

// Runs the product (native, or portable when asked) on `w` and checks every output against the
// twin: equal for the portable loop, within the bound above for the native kernel. Columns past
// n are never written.
void ExpectMatchesTwin(ThreadPool& pool, const Problem& p, const TestWeights& w, bool portable) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << p.m << " k=" << p.k << " n=" << p.n << " bias=" << p.with_bias
               << " acc=" << p.accumulate << " portable=" << portable);
  const int64_t ldx = p.k + 3, ldy = p.n + 5;
  const auto x = RandomVector(static_cast<size_t>(p.m * ldx), static_cast<uint32_t>(3 + p.m + p.k));
  const auto bias = RandomVector(static_cast<size_t>(p.n), 5);
  const auto y0 = RandomVector(static_cast<size_t>(p.m * ldy), 7);
  const float* b = p.with_bias ? bias.data() : nullptr;
  std::vector<float> want = y0, got = y0;
  reference::MatMulBf16(x.data(), p.m, ldx, w.view, b, want.data(), ldy, p.accumulate);
  const PackedMatrix rows = PackedMatrix::Bf16Rows(w.view);
  ForceBf16Portable(portable);
  MatMul(pool, x.data(), p.m, ldx, rows, b, got.data(), ldy, p.accumulate);
  ForceBf16Portable(false);
  const double d = 2.0 * ((p.k + 31) / 32) + 6;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      const float g = got[i * ldy + j], e = want[i * ldy + j];
      if (portable || !Bf16DotIsNative()) {
        ASSERT_EQ(g, e) << "at (" << i << ", " << j << ")";
        continue;
      }
      double magnitude = (p.with_bias ? std::fabs(bias[j]) : 0.0) +
                         (p.accumulate ? std::fabs(y0[i * ldy + j]) : 0.0);
      for (int64_t k = 0; k < p.k; ++k) {
        magnitude +=
            std::fabs(double{Bf16ToF32(F32ToBf16(x[i * ldx + k]))} * w.values[j * p.k + k]);
      }
      ASSERT_NEAR(g, e, 2 * d * kUnitRoundoff * magnitude + 1e-30)
          << "at (" << i << ", " << j << ")";
    }
    for (int64_t j = p.n; j < ldy; ++j) ASSERT_EQ(got[i * ldy + j], y0[i * ldy + j]);
  }
}

// Rows around the 4-row tile and the row blocks (256 rows, fewer for deep products); depths
// around the 32-depth chunk and the real model's (896, 1176, 1280); columns around the 4-column
// group.
TEST(Bf16MatMulTest, MatchesTwinForAllShapes) {
  ThreadPool pool(2);
  const int64_t rows[] = {1, 2, 3, 4, 5, 7, 8, 9, 17, 64, 300};
  const int64_t depths[] = {1, 17, 31, 32, 33, 64, 896, 1176, 2100};
  const int64_t cols[] = {1, 3, 4, 5, 33, 100};
  constexpr int64_t kBudget = 6'000'000;  // multiply-adds through the twin per product
  for (int64_t k : depths) {
    for (int64_t n : cols) {
      const auto w = MakeWeights(DType::kBF16, n, k, static_cast<uint32_t>(11 + k + n));
      for (int64_t m : rows) {
        if (m * k * n > kBudget && m != 1 && m != 7) continue;
        const int64_t variant = (m + k + n) % 4;
        const Problem p{m, k, n, (variant & 1) != 0, (variant & 2) != 0};
        ExpectMatchesTwin(pool, p, w, /*portable=*/false);
        ExpectMatchesTwin(pool, p, w, /*portable=*/true);
        if (HasFailure()) return;
      }
    }
  }
}

// f32 and f16 sources are rounded to bf16 rows once; the product then follows the same twin.
TEST(Bf16MatMulTest, FloatSourcesAreRoundedToBf16Rows) {
  ThreadPool pool(2);
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const auto w = MakeWeights(dtype, 37, 70, 3);
    const PackedMatrix rows = PackedMatrix::Bf16Rows(w.view);
    EXPECT_EQ(rows.layout(), WeightLayout::kBf16Rows);
    EXPECT_EQ(rows.owned_bytes(), 37 * 70 * 2);
    ExpectMatchesTwin(pool, {9, 70, 37, true, false}, w, /*portable=*/true);
  }
  const auto bf = MakeWeights(DType::kBF16, 37, 70, 3);
  EXPECT_EQ(PackedMatrix::Bf16Rows(bf.view).owned_bytes(), 0);  // viewed in place
}

// y[i, :] is a function of x[i, :] alone: each row computed alone equals the same row computed in
// batches of every size, across row blocks (a deep product has several) and thread counts.
TEST(Bf16MatMulTest, BatchInvariant) {
  ThreadPool one(1), two(2);
  for (int64_t k : {70, 2100}) {
    const int64_t n = 45, m = 530;
    const auto w = MakeWeights(DType::kBF16, n, k, 17);
    const PackedMatrix rows = PackedMatrix::Bf16Rows(w.view);
    const auto x = RandomVector(static_cast<size_t>(m * k), 19);
    std::vector<float> all(static_cast<size_t>(m * n));
    MatMul(two, x.data(), m, k, rows, nullptr, all.data(), n, false);
    for (int64_t i : {int64_t{0}, int64_t{5}, int64_t{257}, m - 1}) {
      std::vector<float> alone(static_cast<size_t>(n));
      MatMul(one, x.data() + i * k, 1, k, rows, nullptr, alone.data(), n, false);
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_EQ(alone[j], all[i * n + j]) << "k=" << k << " row " << i << " col " << j;
      }
    }
    for (int64_t count : {2, 3, 6, 13}) {
      std::vector<float> part(static_cast<size_t>(count * n));
      MatMul(two, x.data() + 100 * k, count, k, rows, nullptr, part.data(), n, false);
      for (int64_t idx = 0; idx < count * n; ++idx) ASSERT_EQ(part[idx], all[100 * n + idx]);
    }
  }
}

// A matrix viewed as several parts (q, k and v rows) is the same product as one matrix.
TEST(Bf16MatMulTest, PartsAreOneMatrix) {
  ThreadPool pool(2);
  const int64_t k = 96;
  const auto whole = MakeWeights(DType::kBF16, 10, k, 23);
  const auto* base = static_cast<const uint8_t*>(whole.view.data);
  const MatrixView parts[] = {{base, DType::kBF16, 3, k},
                              {base + 3 * k * 2, DType::kBF16, 5, k},
                              {base + 8 * k * 2, DType::kBF16, 2, k}};
  const PackedMatrix split = PackedMatrix::Bf16Rows(parts);
  const PackedMatrix one = PackedMatrix::Bf16Rows(whole.view);
  ASSERT_EQ(split.rows(), 10);
  ASSERT_EQ(split.row_parts().size(), 3u);
  const auto x = RandomVector(static_cast<size_t>(6 * k), 29);
  std::vector<float> a(60), b(60);
  MatMul(pool, x.data(), 6, k, split, nullptr, a.data(), 10, false);
  MatMul(pool, x.data(), 6, k, one, nullptr, b.data(), 10, false);
  EXPECT_EQ(a, b);
}

// The product's accuracy: within the rounding of the activations to bf16 (relative 2^-9 per
// element) plus the summation bound of the exact float32 product.
TEST(Bf16MatMulTest, WithinActivationRoundingOfTheExactProduct) {
  ThreadPool pool(2);
  const int64_t m = 5, k = 1280, n = 40;
  const auto w = MakeWeights(DType::kBF16, n, k, 31);
  const auto x = RandomVector(static_cast<size_t>(m * k), 37);
  std::vector<float> got(static_cast<size_t>(m * n)), exact(static_cast<size_t>(m * n));
  MatMul(pool, x.data(), m, k, PackedMatrix::Bf16Rows(w.view), nullptr, got.data(), n, false);
  reference::MatMul(x.data(), m, k, w.view, nullptr, exact.data(), n, false);
  const double d = 2.0 * (k / 32) + 6;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double magnitude = 0;
      for (int64_t c = 0; c < k; ++c)
        magnitude += std::fabs(double{x[i * k + c]} * w.values[j * k + c]);
      const double bound = (std::ldexp(1.0, -9) + d * kUnitRoundoff) * magnitude;
      ASSERT_NEAR(got[i * n + j], exact[i * n + j], bound) << "(" << i << ", " << j << ")";
    }
  }
}

}  // namespace
}  // namespace mineru::ops
