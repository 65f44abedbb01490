// SPDX-License-Identifier: Apache-2.0
#include "ops/elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/reference.h"
#include "ops_test_util.h"

namespace mineru::ops {
namespace {

using testing::ForEachTarget;
using testing::kUnitRoundoff;
using testing::MakeWeights;
using testing::RandomVector;

// Lengths around vector widths (4, 8, 16 lanes) and the per-task range (64 Ki floats).
const int64_t kLengths[] = {1, 3, 8, 15, 16, 17, 33, 100, 896, 1280, 70000};

TEST(ElementwiseTest, NormsMatchReference) {
  ThreadPool pool(2);
  ForEachTarget([&] {
    for (int64_t dim : {1, 7, 16, 64, 100, 896, 1280}) {
      const int64_t rows = 5, ld = dim + 2;
      auto x = RandomVector(static_cast<size_t>(rows * ld), 1, 3.0f);
      for (int64_t c = 0; c < dim; ++c) x[c] += 50.0f;  // a row with a large mean
      auto w = RandomVector(static_cast<size_t>(dim), 2);
      auto b = RandomVector(static_cast<size_t>(dim), 3);
      std::vector<float> y(x.size()), expected(x.size());
      // RMSNorm: the mean of squares carries dim * u relative error; the scaled output then
      // |w x| * (dim + 4) * u.
      RmsNorm(pool, x.data(), rows, dim, ld, w.data(), 1e-6f, y.data(), ld);
      reference::RmsNorm(x.data(), rows, dim, ld, w.data(), 1e-6f, expected.data(), ld);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < dim; ++c) {
          const double tol = (dim + 4) * kUnitRoundoff * std::fabs(expected[r * ld + c]) + 1e-30;
          ASSERT_NEAR(y[r * ld + c], expected[r * ld + c], tol) << "rms dim " << dim;
        }
      }
      // LayerNorm: the centred values carry u * |mean| absolute error; relative to the row's
      // spread that is |mean| / std * u, plus dim * u for the sums.
      LayerNorm(pool, x.data(), rows, dim, ld, w.data(), b.data(), 1e-6f, y.data(), ld);
      reference::LayerNorm(x.data(), rows, dim, ld, w.data(), b.data(), 1e-6f, expected.data(), ld);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < dim; ++c) {
          const double tol =
              (dim + 64) * 4 * kUnitRoundoff * (std::fabs(w[c]) * 20 + std::fabs(b[c]));
          ASSERT_NEAR(y[r * ld + c], expected[r * ld + c], tol) << "layernorm dim " << dim;
        }
      }
    }
  });
}

TEST(ElementwiseTest, ActivationsMatchReference) {
  ThreadPool pool(2);
  ForEachTarget([&] {
    for (int64_t n : kLengths) {
      auto x = RandomVector(static_cast<size_t>(n), 4, 4.0f);
      if (n > 10) {
        x[0] = 100.0f;
        x[1] = -100.0f;
        x[2] = 0.0f;
        x[3] = -9.0f;
      }
      auto up = RandomVector(static_cast<size_t>(n), 5);
      // exp and division add a few ulp, and exp(z) turns the rounding of its argument z
      // (|z| * u) into relative error |z| * u; erf's rational approximation is within 2 ulp of
      // 1, so GELU's absolute error is about |x| * 2^-23.
      auto check = [&](const std::vector<float>& got, const std::vector<float>& want, double rel,
                       double abs_per_x, const char* name) {
        for (int64_t i = 0; i < n; ++i) {
          const double tol = (rel + 2 * kUnitRoundoff * std::fabs(x[i])) * std::fabs(want[i]) +
                             abs_per_x * (1 + std::fabs(x[i]));
          ASSERT_NEAR(got[i], want[i], tol) << name << " x=" << x[i] << " n=" << n;
        }
      };
      std::vector<float> a = x, b = x;
      QuickGelu(pool, a.data(), n);
      reference::QuickGelu(b.data(), n);
      check(a, b, 16 * kUnitRoundoff, 1e-37, "quick_gelu");
      a = x, b = x;
      GeluErf(pool, a.data(), n);
      reference::GeluErf(b.data(), n);
      check(a, b, 16 * kUnitRoundoff, 4 * kUnitRoundoff, "gelu");
      a = x, b = x;
      SiluMul(pool, a.data(), up.data(), n);
      reference::SiluMul(b.data(), up.data(), n);
      check(a, b, 16 * kUnitRoundoff, 1e-37, "silu");
    }
  });
}

// An element's activation is the same bits whether it sits in a short array or anywhere in a
// longer one (vector tails, per-task ranges of 64 Ki floats): activations of a row do not depend
// on how many rows are batched with it.
TEST(ElementwiseTest, ActivationsIndependentOfPositionAndLength) {
  ThreadPool pool(2);
  const int64_t kLong = 140000;  // three per-task ranges
  const auto fill_x = RandomVector(static_cast<size_t>(kLong), 33, 4.0f);
  const auto fill_up = RandomVector(static_cast<size_t>(kLong), 34);
  ForEachTarget([&] {
    for (int64_t n : {1, 3, 7, 8, 9, 15, 16, 17, 33, 100}) {
      const auto x = RandomVector(static_cast<size_t>(n), 31, 4.0f);
      const auto up = RandomVector(static_cast<size_t>(n), 32);
      std::vector<float> quick = x, gelu = x, silu = x;
      QuickGelu(pool, quick.data(), n);
      GeluErf(pool, gelu.data(), n);
      SiluMul(pool, silu.data(), up.data(), n);
      // Offsets inside a vector and straddling the first per-task range boundary.
      for (int64_t offset : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{13}, int64_t{65536 - 3},
                             int64_t{65536 - 70}}) {
        if (offset > 100 && n != 3 && n != 17 && n != 100) continue;  // keep the test quick
        for (int64_t total : {offset + n, offset + n + 1, offset + n + 29, kLong}) {
          if (total == kLong && offset < 65536 - 100) continue;  // long arrays: range boundary
          std::vector<float> long_x(fill_x.begin(), fill_x.begin() + total);
          std::vector<float> long_up(fill_up.begin(), fill_up.begin() + total);
          std::copy(x.begin(), x.end(), long_x.begin() + offset);
          std::copy(up.begin(), up.end(), long_up.begin() + offset);
          std::vector<float> a = long_x, b = long_x, c = long_x;
          QuickGelu(pool, a.data(), total);
          GeluErf(pool, b.data(), total);
          SiluMul(pool, c.data(), long_up.data(), total);
          for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(a[offset + i], quick[i]) << "quick_gelu n=" << n << " at " << offset + i;
            ASSERT_EQ(b[offset + i], gelu[i]) << "gelu n=" << n << " at " << offset + i;
            ASSERT_EQ(c[offset + i], silu[i]) << "silu n=" << n << " at " << offset + i;
          }
        }
      }
    }
  });
}

TEST(ElementwiseTest, RopeAndSoftmaxMatchReference) {
  ThreadPool pool(2);
  ForEachTarget([&] {
    for (int head_dim : {2, 16, 20, 64, 80}) {
      const int heads = 3;
      const int64_t rows = 9, ld = heads * head_dim + 5;
      auto x = RandomVector(static_cast<size_t>(rows * ld), 6);
      std::vector<float> cos(static_cast<size_t>(rows * head_dim / 2)), sin(cos.size());
      for (size_t i = 0; i < cos.size(); ++i) {
        const float angle = 0.37f * static_cast<float>(i) + 1000.0f * (i % 3);
        cos[i] = std::cos(angle);
        sin[i] = std::sin(angle);
      }
      std::vector<float> a = x, b = x;
      RopeRotateHalf(pool, a.data(), rows, ld, heads, head_dim, cos.data(), sin.data());
      reference::RopeRotateHalf(b.data(), rows, ld, heads, head_dim, cos.data(), sin.data());
      for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 8 * kUnitRoundoff * 4);
    }
    for (int64_t n : kLengths) {
      auto x = RandomVector(static_cast<size_t>(3 * n), 7, 5.0f);
      std::vector<float> a = x, b = x;
      Softmax(pool, a.data(), 3, n, n);
      reference::Softmax(b.data(), 3, n, n);
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_NEAR(a[i], b[i], (n + 16) * kUnitRoundoff * b[i] + 1e-38) << "n=" << n;
      }
    }
  });
}

TEST(ElementwiseTest, GatherRowsWidensExactly) {
  ThreadPool pool(2);
  ForEachTarget([&] {
    for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
      for (int64_t cols : {1, 17, 64, 100}) {
        auto table = MakeWeights(dtype, 50, cols, 9);
        const std::vector<int32_t> ids = {0, 49, 3, 3, 17};
        std::vector<float> y(ids.size() * static_cast<size_t>(cols));
        GatherRows(pool, table.view, ids.data(), static_cast<int64_t>(ids.size()), y.data(), cols);
        for (size_t i = 0; i < ids.size(); ++i) {
          for (int64_t c = 0; c < cols; ++c) {
            ASSERT_EQ(y[i * cols + c], table.values[ids[i] * cols + c]);
          }
        }
      }
    }
  });
}

TEST(ElementwiseTest, ArgMaxTiesGoToLowestIndex) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(ArgMax(std::vector<float>{1, 3, 3, 2}.data(), 4), 1);
  EXPECT_EQ(ArgMax(std::vector<float>{nan, -5, -1, -1}.data(), 4), 2);
  EXPECT_EQ(ArgMax(std::vector<float>{-INFINITY, -INFINITY}.data(), 2), 0);
  EXPECT_EQ(ArgMax(std::vector<float>{7}.data(), 1), 0);
}

// [gate | up] rows give exactly what SiluMul gives on the separate halves.
TEST(ElementwiseTest, SiluMulRowsEqualsSiluMulOnHalves) {
  ThreadPool pool(2);
  ForEachTarget([&] {
    for (int64_t n : {1, 7, 16, 33, 128, 4864}) {
      const int64_t rows = 5, ld = 2 * n + 3;
      auto x = RandomVector(static_cast<size_t>(rows * ld), 40 + n);
      std::vector<float> expected = x;
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<float> gate(x.begin() + r * ld, x.begin() + r * ld + n);
        std::vector<float> up(x.begin() + r * ld + n, x.begin() + r * ld + 2 * n);
        SiluMul(pool, gate.data(), up.data(), n);
        std::copy(gate.begin(), gate.end(), expected.begin() + r * ld);
      }
      std::vector<float> twin = x;
      SiluMulRows(pool, x.data(), rows, n, ld);
      EXPECT_EQ(x, expected) << "n=" << n;
      // And its scalar twin, to SiluMul's tolerance; the up halves and the row tails untouched.
      reference::SiluMulRows(twin.data(), rows, n, ld);
      for (size_t i = 0; i < x.size(); ++i) {
        const bool gate = static_cast<int64_t>(i) % ld < n;
        if (gate) {
          ASSERT_NEAR(x[i], twin[i], 16 * kUnitRoundoff * std::abs(twin[i]) + 1e-37) << i;
        } else {
          ASSERT_EQ(x[i], twin[i]) << i;
        }
      }
    }
  });
}

}  // namespace
}  // namespace mineru::ops
