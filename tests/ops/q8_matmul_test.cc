// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "ops/q8_matrix.h"
#include "ops/reference.h"
#include "ops_test_util.h"

namespace mineru::ops {
namespace {

using testing::kUnitRoundoff;
using testing::MakeWeights;
using testing::RandomVector;
using testing::TestWeights;

// Row counts around every register tile (1..4 rows, balanced tilings of 5..20 rows) and a row
// block; depths around the group (32) and the model's (896, 1176 = the patch embedding, which
// is not a multiple of 32); columns around a panel (16).
const int64_t kRows[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                         13, 14, 15, 16, 17, 18, 19, 20, 31, 33, 64, 385};
const int64_t kDepths[] = {1, 17, 32, 33, 896, 1176, 2100};
const int64_t kCols[] = {1, 15, 16, 17, 33, 100};

bool CpuHasVnni() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// Runs body once per path this CPU can take: each kernel set it has, and always the portable
// loop.
template <class Body>
void ForEachQ8Path(const Body& body) {
  for (const char* path : Q8MatMulPaths()) {
    ASSERT_TRUE(ForceQ8MatMulPath(path));
    SCOPED_TRACE(std::string("path ") + Q8MatMulPath());
    body();
    if (::testing::Test::HasFatalFailure()) break;
  }
  ForceQ8MatMulPath("");
}

// Every kernel set the CPU has is offered, fastest first, and taken unless another is forced.
TEST(Q8MatMulTest, EveryPathTheCpuHasIsOfferedAndTaken) {
  std::vector<std::string> expected;
  if (CpuHasVnni()) expected.emplace_back("avx512vnni");
  if (CpuHasAvx2Fma()) expected.emplace_back("avx2");
  expected.emplace_back("portable");
  const std::vector<const char*> paths = Q8MatMulPaths();
  ASSERT_EQ(std::vector<std::string>(paths.begin(), paths.end()), expected);
  EXPECT_EQ(Q8MatMulPath(), expected.front());
  for (const std::string& path : expected) {
    EXPECT_TRUE(ForceQ8MatMulPath(path));
    EXPECT_EQ(Q8MatMulPath(), path);
  }
  EXPECT_FALSE(ForceQ8MatMulPath("avx1024"));
  EXPECT_EQ(Q8MatMulPath(), expected.back());  // a refused name changes nothing
  EXPECT_TRUE(ForceQ8MatMulPath(""));
  EXPECT_EQ(Q8MatMulPath(), expected.front());
}

struct Problem {
  int64_t m, k, n;
  bool with_bias, accumulate;
};

// Both paths against the twin, bit for bit (integer dots are exact and the float steps are the
// same operations in the same order); columns past n are never written.
void ExpectMatchesTwin(ThreadPool& pool, const Problem& p, const TestWeights& w,
                       const Q8Matrix& q8) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << p.m << " k=" << p.k << " n=" << p.n << " bias=" << p.with_bias
               << " acc=" << p.accumulate << " dtype=" << DTypeName(w.view.dtype));
  const int64_t ldx = p.k + 3, ldy = p.n + 5;  // strides wider than the rows
  auto x = RandomVector(static_cast<size_t>(p.m * ldx), static_cast<uint32_t>(11 + p.m + p.k));
  if (p.m > 1) std::fill_n(x.begin() + ldx, p.k, 0.0f);  // an all-zero row: scales 0
  auto bias = RandomVector(static_cast<size_t>(p.n), 5);
  auto y0 = RandomVector(static_cast<size_t>(p.m * ldy), 3);
  const float* b = p.with_bias ? bias.data() : nullptr;
  std::vector<float> expected = y0;
  reference::MatMulQ8(x.data(), p.m, ldx, w.view, b, expected.data(), ldy, p.accumulate);
  ForEachQ8Path([&] {
    std::vector<float> y = y0;
    MatMul(pool, x.data(), p.m, ldx, q8, b, y.data(), ldy, p.accumulate);
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        ASSERT_EQ(y[i * ldy + j], expected[i * ldy + j]) << "at (" << i << ", " << j << ")";
      }
      for (int64_t j = p.n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], y0[i * ldy + j]);
    }
  });
}

TEST(Q8MatMulTest, MatchesTwinBitForBitForAllShapes) {
  ThreadPool pool(2);
  for (int64_t k : kDepths) {
    for (int64_t n : kCols) {
      // Every dtype widens exactly before quantizing; rotate them over the grid.
      const DType dtype = (k + n) % 3 == 0   ? DType::kF32
                          : (k + n) % 3 == 1 ? DType::kBF16
                                             : DType::kF16;
      const auto w = MakeWeights(dtype, n, k, static_cast<uint32_t>(7 + k + n));
      const Q8Matrix q8 = Q8Matrix::Quantize(pool, w.view);
      for (int64_t m : kRows) {
        const int64_t variant = (m + k + n) % 4;
        ExpectMatchesTwin(pool, {m, k, n, (variant & 1) != 0, (variant & 2) != 0}, w, q8);
        if (HasFailure()) return;
      }
    }
  }
}

// Every register tile shape: 1..12 rows (tiles of 1..4 rows) times runs of 1..9 panels on one
// thread, so each tile takes every panel count up to its maximum.
TEST(Q8MatMulTest, EveryTileShape) {
  ThreadPool pool(1);
  const int64_t k = 100;
  for (int64_t panels = 1; panels <= 9; ++panels) {
    const int64_t n = panels * 16 - (panels % 3);  // some with a partial last panel
    const auto w = MakeWeights(DType::kBF16, n, k, static_cast<uint32_t>(n));
    const Q8Matrix q8 = Q8Matrix::Quantize(pool, w.view);
    for (int64_t m = 1; m <= 12; ++m) {
      ExpectMatchesTwin(pool, {m, k, n, true, m % 2 == 0}, w, q8);
      if (HasFailure()) return;
    }
  }
}

TEST(Q8MatMulTest, BiasAndAccumulateCombinations) {
  ThreadPool pool(2);
  const auto w = MakeWeights(DType::kBF16, 100, 1176, 9);
  const Q8Matrix q8 = Q8Matrix::Quantize(pool, w.view);
  for (int64_t m : {1, 7, 40}) {
    for (bool with_bias : {false, true}) {
      for (bool accumulate : {false, true}) {
        ExpectMatchesTwin(pool, {m, 1176, 100, with_bias, accumulate}, w, q8);
      }
    }
  }
}

// A row's result is the same bits alone (m = 1) and among any number of other rows, at any
// position, and whatever the thread count.
TEST(Q8MatMulTest, RowIsBatchInvariant) {
  ThreadPool one(1), two(2), three(3);
  const int64_t k = 1176, n = 333;
  const auto w = MakeWeights(DType::kBF16, n, k, 21);
  const Q8Matrix q8 = Q8Matrix::Quantize(two, w.view);
  const auto bias = RandomVector(static_cast<size_t>(n), 22);
  const auto probe = RandomVector(static_cast<size_t>(k), 23);
  ForEachQ8Path([&] {
    std::vector<float> alone(static_cast<size_t>(n));
    MatMul(one, probe.data(), 1, k, q8, bias.data(), alone.data(), n, false);
    for (int64_t m = 2; m <= 70; ++m) {
      auto x = RandomVector(static_cast<size_t>(m * k), static_cast<uint32_t>(100 + m));
      const int64_t at = (m * 29 / 11) % m;  // a different position for most batch sizes
      std::memcpy(x.data() + at * k, probe.data(), static_cast<size_t>(k) * sizeof(float));
      std::vector<float> y(static_cast<size_t>(m * n));
      MatMul(m % 2 == 0 ? two : three, x.data(), m, k, q8, bias.data(), y.data(), n, false);
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_EQ(y[at * n + j], alone[j]) << "m=" << m << " row " << at << " col " << j;
      }
    }
    // Also at the last row of a batch of several row blocks.
    const int64_t m = 1000;
    auto x = RandomVector(static_cast<size_t>(m * k), 99);
    std::memcpy(x.data() + (m - 1) * k, probe.data(), static_cast<size_t>(k) * sizeof(float));
    std::vector<float> y(static_cast<size_t>(m * n));
    MatMul(two, x.data(), m, k, q8, bias.data(), y.data(), n, false);
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(y[(m - 1) * n + j], alone[j]) << "col " << j;
  });
}

// The bytes follow the documented layout, and every weight is within its group's scale d
// times (1/2 + 128 u) of q * d: rne leaves at most 1/2, and the division w / d, whose quotient is
// at most 127 (1 + u) in magnitude, adds at most 128 u before rounding. Padding is q = 0 (byte
// 128) and, for padding columns, d = 0.
TEST(Q8MatMulTest, QuantizationRoundTripIsWithinHalfAScale) {
  ThreadPool pool(2);
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
    const int64_t rows = 37, cols = 70;  // a partial panel and a partial group
    const auto w = MakeWeights(dtype, rows, cols, 31);
    const Q8Matrix q8 = Q8Matrix::Quantize(pool, w.view);
    ASSERT_EQ(q8.groups(), 3);
    ASSERT_EQ(q8.panels(), 3);
    ASSERT_EQ(q8.bytes(), 3 * 3 * 576);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(q8.data()) % 64, 0u);
    for (int64_t j = 0; j < 48; ++j) {
      for (int64_t g = 0; g < 3; ++g) {
        const uint8_t* block = q8.data() + (j / 16) * q8.panel_bytes() + g * 576;
        float d;
        std::memcpy(&d, block + 512 + 4 * (j % 16), 4);
        double amax = 0;
        for (int64_t t = 0; t < 32; ++t) {
          const int64_t k = g * 32 + t;
          if (j < rows && k < cols)
            amax = std::max(amax, std::fabs(double{w.values[j * cols + k]}));
        }
        ASSERT_EQ(d, static_cast<float>(amax) / 127.0f) << "col " << j << " group " << g;
        for (int64_t t = 0; t < 32; ++t) {
          const int64_t k = g * 32 + t;
          const int q = int{block[(t / 4) * 64 + (j % 16) * 4 + t % 4]} - 128;
          ASSERT_GE(q, -127);
          ASSERT_LE(q, 127);
          if (j >= rows || k >= cols) {
            ASSERT_EQ(q, 0) << "padding col " << j << " k " << k;
            continue;
          }
          const double error = std::fabs(static_cast<double>(q) * d - w.values[j * cols + k]);
          ASSERT_LE(error, d * (0.5 + 128 * kUnitRoundoff)) << "col " << j << " k " << k;
        }
      }
    }
  }
}

// The quantized product against the exact one (reference::MatMul, in double). Per group, with
// w = q d + e_w and x = p s + e_x (|e_w| <= E_w = d (1/2 + 128 u), |e_x| <= E_x likewise, from
// the round-trip test above):
//   q d p s - w x = -(e_w x + w e_x) + e_w e_x,  so  |.| <= E_w |x| + |w| E_x + E_w E_x
// per term. The float steps add at most (G + 3) u times the sum of the magnitudes they combine
// (first order: one rounding of d s and G fused adds, plus the bias and y adds; Higham,
// Thm 3.1), bounded by sum |q d p s| + |bias| + |y|. The test asserts the sum of both.
TEST(Q8MatMulTest, ProductIsWithinTheQuantizationBound) {
  ThreadPool pool(2);
  for (const Problem& p : {Problem{3, 1176, 70, true, true}, Problem{5, 896, 33, false, false},
                           Problem{2, 17, 31, true, false}, Problem{1, 2100, 16, false, true}}) {
    const auto x = RandomVector(static_cast<size_t>(p.m * p.k), static_cast<uint32_t>(3 + p.k));
    const TestWeights w = MakeWeights(DType::kBF16, p.n, p.k, static_cast<uint32_t>(9 + p.n));
    const auto bias = RandomVector(static_cast<size_t>(p.n), 2);
    const auto y0 = RandomVector(static_cast<size_t>(p.m * p.n), 4);
    const float* b = p.with_bias ? bias.data() : nullptr;
    const Q8Matrix q8 = Q8Matrix::Quantize(pool, w.view);
    std::vector<float> got = y0, exact = y0;
    MatMul(pool, x.data(), p.m, p.k, q8, b, got.data(), p.n, p.accumulate);
    reference::MatMul(x.data(), p.m, p.k, w.view, b, exact.data(), p.n, p.accumulate);
    const int64_t groups = (p.k + 31) / 32;
    const double slack = 0.5 + 128 * kUnitRoundoff;
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double quant = 0, magnitude = 0;
        for (int64_t g = 0; g < groups; ++g) {
          double amax_w = 0, amax_x = 0;
          for (int64_t k = g * 32; k < std::min(p.k, g * 32 + 32); ++k) {
            amax_w = std::max(amax_w, std::fabs(double{w.values[j * p.k + k]}));
            amax_x = std::max(amax_x, std::fabs(double{x[i * p.k + k]}));
          }
          // The scales as computed, rounded up by one ulp for the float division.
          const double ew = amax_w / 127 * (1 + kUnitRoundoff) * slack;
          const double ex = amax_x / 127 * (1 + kUnitRoundoff) * slack;
          for (int64_t k = g * 32; k < std::min(p.k, g * 32 + 32); ++k) {
            const double wk = std::fabs(double{w.values[j * p.k + k]});
            const double xk = std::fabs(double{x[i * p.k + k]});
            quant += ew * xk + wk * ex + ew * ex;
            magnitude += (wk + ew) * (xk + ex);  // bounds |q d p s|
          }
        }
        if (p.with_bias) magnitude += std::fabs(bias[j]);
        if (p.accumulate) magnitude += std::fabs(y0[i * p.n + j]);
        const double bound = quant + (groups + 3) * kUnitRoundoff * magnitude + 1e-30;
        ASSERT_NEAR(got[i * p.n + j], exact[i * p.n + j], bound)
            << "m=" << p.m << " k=" << p.k << " at (" << i << ", " << j << ")";
      }
    }
  }
}

// Activations round to nearest with ties to even. With one-hot weights (d = fl(1/127), q = 127)
// and a row whose largest magnitude is 127 (s = 1), y[j] = fl(127 p[j] * fl(1/127)) = p[j]
// exactly for these small integers, so the output shows each quantized activation.
TEST(Q8MatMulTest, ActivationsRoundToNearestEven) {
  ThreadPool pool(1);
  const std::vector<float> x = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 3.49f};
  const std::vector<float> want = {127, 0, 2, 2, 0, -2, -2, 126, 3};
  const auto k = static_cast<int64_t>(x.size());
  std::vector<float> eye(static_cast<size_t>(k * k), 0.0f);
  for (int64_t j = 0; j < k; ++j) eye[j * k + j] = 1.0f;
  const Q8Matrix q8 = Q8Matrix::Quantize(pool, MatrixView{eye.data(), DType::kF32, k, k});
  ForEachQ8Path([&] {
    std::vector<float> y(x.size());
    MatMul(pool, x.data(), 1, k, q8, nullptr, y.data(), k, false);
    EXPECT_EQ(y, want);
  });
}

TEST(Q8MatMulTest, ViewOfTheBytesGivesTheSameProduct) {
  ThreadPool pool(2);
  const int64_t rows = 50, cols = 1176;
  const auto w = MakeWeights(DType::kBF16, rows, cols, 12);
  const Q8Matrix owned = Q8Matrix::Quantize(pool, w.view);
  EXPECT_TRUE(owned.owns_bytes());
  ASSERT_EQ(owned.bytes(), Q8Matrix::BytesFor(rows, cols));
  // A copy into other aligned memory, as a file mapping would be: the layout is position
  // independent.
  std::vector<uint8_t> file(static_cast<size_t>(owned.bytes()) + 64);
  uint8_t* aligned = file.data() + (64 - reinterpret_cast<uintptr_t>(file.data()) % 64) % 64;
  std::memcpy(aligned, owned.data(), static_cast<size_t>(owned.bytes()));
  Result<Q8Matrix> view = Q8Matrix::View({aligned, static_cast<size_t>(owned.bytes())}, rows, cols);
  ASSERT_TRUE(view.has_value()) << view.error().ToString();
  EXPECT_FALSE(view->owns_bytes());
  EXPECT_EQ(view->data(), aligned);
  EXPECT_EQ(view->rows(), rows);
  EXPECT_EQ(view->cols(), cols);
  const auto x = RandomVector(static_cast<size_t>(9 * cols), 13);
  std::vector<float> a(static_cast<size_t>(9 * rows)), b(a.size());
  MatMul(pool, x.data(), 9, cols, owned, nullptr, a.data(), rows, false);
  MatMul(pool, x.data(), 9, cols, *view, nullptr, b.data(), rows, false);
  EXPECT_EQ(a, b);
  // Moving a view keeps pointing at the same bytes.
  Q8Matrix moved = std::move(*view);
  EXPECT_EQ(moved.data(), aligned);
  EXPECT_EQ(moved.bytes(), owned.bytes());
}

// Bytes that no quantizer writes (0, i.e. q = -128, and every other value, at random) against
// activations at both ends of their range (+-127 after quantization): the kernels' integer
// tricks (the AVX2 kernel's sign transfer, the VNNI kernel's correction) must still give the
// portable loop's exact sums, with no saturation, for whatever a file holds.
TEST(Q8MatMulTest, AnyStoredBytesGiveThePortableProductOnEveryPath) {
  ThreadPool pool(2);
  const int64_t rows = 33, cols = 100;  // 3 panels, the last partial; 4 groups, the last partial
  const auto bytes = static_cast<size_t>(Q8Matrix::BytesFor(rows, cols));
  std::vector<uint8_t> file(bytes + 64);
  uint8_t* aligned = file.data() + (64 - reinterpret_cast<uintptr_t>(file.data()) % 64) % 64;
  uint32_t state = 12345;
  for (size_t i = 0; i < bytes; ++i) {
    state = state * 1664525u + 1013904223u;
    aligned[i] = static_cast<uint8_t>(state >> 24);
  }
  for (size_t i = 0; i < bytes; i += 97) aligned[i] = 0;  // q = -128: |q| = 128 in AVX2's split
  for (size_t i = 50; i < bytes; i += 89) aligned[i] = 255;
  const size_t panel_bytes = bytes / 3;
  for (size_t p = 0; p < 3; ++p) {  // scales finite: small positive floats
    for (size_t g = 0; g < 4; ++g) {
      for (size_t c = 0; c < 16; ++c) {
        const float d = 1e-3f * static_cast<float>(1 + (p * 64 + g * 16 + c) % 7);
        std::memcpy(aligned + p * panel_bytes + g * 576 + 512 + 4 * c, &d, 4);
      }
    }
  }
  Result<Q8Matrix> w = Q8Matrix::View({aligned, bytes}, rows, cols);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  const int64_t m = 7;
  std::vector<float> x(static_cast<size_t>(m * cols));
  for (size_t i = 0; i < x.size(); ++i) {  // each group's extremes are +-1 -> +-127
    x[i] = (i % 3 == 0) ? 1.0f : (i % 3 == 1 ? -1.0f : 0.18f * static_cast<float>(i % 11) - 0.9f);
  }
  ASSERT_TRUE(ForceQ8MatMulPath("portable"));
  std::vector<float> want(static_cast<size_t>(m * rows));
  MatMul(pool, x.data(), m, cols, *w, nullptr, want.data(), rows, false);
  ForceQ8MatMulPath("");
  ForEachQ8Path([&] {
    std::vector<float> y(want.size());
    MatMul(pool, x.data(), m, cols, *w, nullptr, y.data(), rows, false);
    EXPECT_EQ(y, want);
  });
}

TEST(Q8MatMulTest, ViewRejectsWrongSizesAlignmentAndShapes) {
  const int64_t rows = 20, cols = 40;  // 2 panels x 2 groups
  const int64_t bytes = Q8Matrix::BytesFor(rows, cols);
  ASSERT_EQ(bytes, 2 * 2 * 576);
  std::vector<uint8_t> file(static_cast<size_t>(bytes) + 128);
  uint8_t* aligned = file.data() + (64 - reinterpret_cast<uintptr_t>(file.data()) % 64) % 64;
  const auto size = static_cast<size_t>(bytes);
  EXPECT_TRUE(Q8Matrix::View({aligned, size}, rows, cols).has_value());
  for (size_t wrong : {size - 1, size + 1, size - 64, size + 576, size_t{0}}) {
    Result<Q8Matrix> v = Q8Matrix::View({aligned, wrong}, rows, cols);
    ASSERT_FALSE(v.has_value()) << wrong;
    EXPECT_EQ(v.error().code, ErrorCode::kCorrupt);
    EXPECT_NE(v.error().message.find("expected"), std::string::npos) << v.error().message;
  }
  // Rows and depth are not interchangeable: [40, 20] is 3 panels x 1 group.
  EXPECT_FALSE(Q8Matrix::View({aligned, size}, cols, rows).has_value());
  Result<Q8Matrix> misaligned = Q8Matrix::View({aligned + 4, size}, rows, cols);
  ASSERT_FALSE(misaligned.has_value());
  EXPECT_EQ(misaligned.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(misaligned.error().message.find("aligned"), std::string::npos);
  for (auto [r, c] : {std::pair<int64_t, int64_t>{-1, 40}, {20, -1}, {int64_t{1} << 62, 1 << 20}}) {
    Result<Q8Matrix> v = Q8Matrix::View({aligned, size}, r, c);
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidArgument);
  }
  // Empty shapes are zero bytes.
  EXPECT_TRUE(Q8Matrix::View({}, 0, 100).has_value());
  EXPECT_TRUE(Q8Matrix::View({}, 7, 0).has_value());
}

TEST(Q8MatMulTest, QuantizeOfPartsEqualsQuantizeOfConcatenation) {
  ThreadPool pool(2);
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
    const int64_t cols = 70;
    const int64_t part_rows[] = {45, 7, 0, 40};  // parts need not be panel-aligned
    const auto whole = MakeWeights(dtype, 92, cols, 5);
    std::vector<MatrixView> parts;
    const size_t row_bytes = static_cast<size_t>(cols) * DTypeSize(dtype);
    int64_t start = 0;
    for (int64_t r : part_rows) {
      parts.push_back({whole.storage.data() + start * row_bytes, dtype, r, cols});
      start += r;
    }
    const Q8Matrix a = Q8Matrix::Quantize(pool, parts);
    const Q8Matrix b = Q8Matrix::Quantize(pool, whole.view);
    EXPECT_EQ(a.rows(), 92);
    EXPECT_EQ(a.cols(), cols);
    ASSERT_EQ(a.bytes(), b.bytes());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())), 0);
  }
  // And the bytes do not depend on the thread count.
  const auto w = MakeWeights(DType::kBF16, 500, 300, 4);
  ThreadPool one(1), three(3);
  const Q8Matrix a = Q8Matrix::Quantize(one, w.view);
  const Q8Matrix b = Q8Matrix::Quantize(three, w.view);
  ASSERT_EQ(a.bytes(), b.bytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())), 0);
}

TEST(Q8MatMulTest, EmptyDepthAddsBias) {
  ThreadPool pool(2);
  const MatrixView w{nullptr, DType::kBF16, 3, 0};
  const Q8Matrix q8 = Q8Matrix::Quantize(pool, w);
  EXPECT_EQ(q8.bytes(), 0);
  const float bias[3] = {1.0f, -2.0f, 3.5f};
  ForEachQ8Path([&] {
    float y[3] = {10.0f, 10.0f, 10.0f}, expected[3] = {10.0f, 10.0f, 10.0f};
    MatMul(pool, nullptr, 1, 0, q8, bias, y, 3, true);
    reference::MatMulQ8(nullptr, 1, 0, w, bias, expected, 3, true);
    for (int j = 0; j < 3; ++j) EXPECT_EQ(y[j], expected[j]);
    EXPECT_EQ(y[1], 8.0f);
  });
}

TEST(Q8MatMulDeathTest, RejectsMismatchedParts) {
  ThreadPool pool(1);
  const auto a = MakeWeights(DType::kBF16, 4, 8, 1);
  const auto b = MakeWeights(DType::kF32, 4, 8, 2);
  const auto c = MakeWeights(DType::kBF16, 4, 9, 3);
  const MatrixView mixed[] = {a.view, b.view};
  const MatrixView widths[] = {a.view, c.view};
  EXPECT_DEATH(Q8Matrix::Quantize(pool, mixed), "mix");
  EXPECT_DEATH(Q8Matrix::Quantize(pool, widths), "columns");
  EXPECT_DEATH(Q8Matrix::Quantize(pool, std::span<const MatrixView>()), "no parts");
}

}  // namespace
}  // namespace mineru::ops
