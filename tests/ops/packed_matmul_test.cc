// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/simd_targets.h"
#include "ops/packed_matrix.h"
#include "ops/reference.h"
#include "ops_test_util.h"

namespace mineru::ops {
namespace {

using testing::ForEachTarget;
using testing::kUnitRoundoff;
using testing::MakeWeights;
using testing::RandomVector;
using testing::TestWeights;

// Row counts around every register tile (1..6 rows, balanced tilings of 7..20 rows) and row
// block (384); depths around the depth block (1024); columns around a panel (32) and the
// 16-column panel halves.
const int64_t kRows[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,  13,  14,
                         15, 16, 17, 18, 19, 20, 31, 32, 33, 64, 65, 100, 300, 385};
const int64_t kDepths[] = {1, 17, 64, 896, 1023, 1024, 1025, 2100};
const int64_t kCols[] = {1, 31, 32, 33, 100, 1030};

struct Problem {
  int64_t m, k, n;
  bool with_bias, accumulate;
};

// Runs the twin once, then the packed MatMul on every SIMD target, and compares every output:
// bit for bit where the target fuses multiply-add; otherwise within the bound of a float32 dot
// product whose every step rounds twice, |error| <= 2 (k + 2) u (sum |x w| + |bias| + |y|)
// (Higham, Thm 3.1, first order). Columns past n are never written.
void ExpectMatchesTwinOnEveryTarget(ThreadPool& pool, const Problem& p, const TestWeights& w,
                                    const PackedMatrix& packed) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << p.m << " k=" << p.k << " n=" << p.n << " bias=" << p.with_bias
               << " acc=" << p.accumulate << " dtype=" << DTypeName(w.view.dtype));
  const int64_t ldx = p.k + 3, ldy = p.n + 5;  // strides wider than the rows
  auto x = RandomVector(static_cast<size_t>(p.m * ldx), static_cast<uint32_t>(11 + p.m + p.k));
  auto bias = RandomVector(static_cast<size_t>(p.n), 5);
  auto y0 = RandomVector(static_cast<size_t>(p.m * ldy), 3);
  const float* b = p.with_bias ? bias.data() : nullptr;
  std::vector<float> expected = y0;
  reference::MatMulBlocked(x.data(), p.m, ldx, w.view, b, expected.data(), ldy, p.accumulate);
  std::vector<double> bound;  // filled on the first target without fused multiply-add
  ForEachTarget([&] {
    std::vector<float> y = y0;
    MatMul(pool, x.data(), p.m, ldx, packed, b, y.data(), ldy, p.accumulate);
    const bool exact = PackedMatMulFusesMultiplyAdd();
    if (!exact && bound.empty()) {
      bound.resize(static_cast<size_t>(p.m * p.n));
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          double magnitude = p.with_bias ? std::fabs(bias[j]) : 0.0;
          for (int64_t k = 0; k < p.k; ++k) {
            magnitude += std::fabs(double{x[i * ldx + k]} * w.values[j * p.k + k]);
          }
          if (p.accumulate) magnitude += std::fabs(y0[i * ldy + j]);
          bound[i * p.n + j] = 2 * (p.k + 2) * kUnitRoundoff * magnitude + 1e-30;
        }
      }
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        const float got = y[i * ldy + j], want = expected[i * ldy + j];
        if (exact) {
          ASSERT_EQ(got, want) << "at (" << i << ", " << j << ")";
        } else {
          ASSERT_NEAR(got, want, bound[i * p.n + j]) << "at (" << i << ", " << j << ")";
        }
      }
      for (int64_t j = p.n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], y0[i * ldy + j]);
    }
  });
}

TEST(PackedMatMulTest, MatchesBlockedTwinForAllShapesDtypesTargets) {
  ThreadPool pool(2);
  for (DType dtype : {DType::kBF16, DType::kF32, DType::kF16}) {
    // The whole grid would be 17 G multiply-adds through the scalar twin: products above a
    // budget run only for a few row counts (one row and the 7- and 13-row tiles).
    const int64_t budget = dtype == DType::kBF16 ? 4'000'000 : 1'000'000;
    for (int64_t k : kDepths) {
      for (int64_t n : kCols) {
        const auto w = MakeWeights(dtype, n, k, static_cast<uint32_t>(7 + k + n));
        const PackedMatrix packed = PackedMatrix::Pack(pool, w.view);
        for (int64_t m : kRows) {
          const bool always = m == 1 || (dtype == DType::kBF16 && (m == 7 || m == 13));
          if (m * k * n > budget && !always) continue;
          const int64_t variant = (m + k + n) % 4;
          ExpectMatchesTwinOnEveryTarget(pool, {m, k, n, (variant & 1) != 0, (variant & 2) != 0}, w,
                                         packed);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Every register tile shape: 1..12 rows (tiles of 1..6 rows) times runs of 1..9 slices, so
// each tile takes every slice count up to its maximum, over one and over two depth blocks.
// The contract's order is accurate: the blocked twin (which the kernels equal) stays within the
// first-order bound of a float32 dot product, |error| <= (k + 2) u sum |x w| (Higham, Thm 3.1;
// +2 for the bias and accumulate adds), of the double-precision product reference::MatMul.
TEST(PackedMatMulTest, BlockedOrderIsWithinTheDotProductBound) {
  for (const Problem& p : {Problem{3, 2100, 70, true, true}, Problem{5, 1025, 33, true, false},
                           Problem{2, 17, 31, false, false}}) {
    const auto x = RandomVector(static_cast<size_t>(p.m * p.k), 3 + p.k);
    const TestWeights w = MakeWeights(DType::kBF16, p.n, p.k, 9 + p.n);
    const auto bias = RandomVector(static_cast<size_t>(p.n), 2);
    const auto y0 = RandomVector(static_cast<size_t>(p.m * p.n), 4);
    std::vector<float> blocked = y0, exact = y0;
    const float* b = p.with_bias ? bias.data() : nullptr;
    reference::MatMulBlocked(x.data(), p.m, p.k, w.view, b, blocked.data(), p.n, p.accumulate);
    reference::MatMul(x.data(), p.m, p.k, w.view, b, exact.data(), p.n, p.accumulate);
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double magnitude = p.with_bias ? std::fabs(bias[j]) : 0.0;
        if (p.accumulate) magnitude += std::fabs(y0[i * p.n + j]);
        for (int64_t k = 0; k < p.k; ++k) {
          magnitude += std::fabs(double{x[i * p.k + k]} * w.values[j * p.k + k]);
        }
        ASSERT_NEAR(blocked[i * p.n + j], exact[i * p.n + j],
                    (p.k + 2) * kUnitRoundoff * magnitude + 1e-30)
            << "m=" << p.m << " k=" << p.k << " at (" << i << ", " << j << ")";
      }
    }
  }
}

TEST(PackedMatMulTest, EveryTileShape) {
  ThreadPool pool(1);  // one run of slices: the group sizes follow n directly
  for (int64_t k : {37, 1100}) {
    for (int64_t panels = 1; panels <= 9; ++panels) {
      const int64_t n = panels * 32 - (panels % 3);  // some with a partial last panel
      const auto w = MakeWeights(DType::kBF16, n, k, static_cast<uint32_t>(n + k));
      const PackedMatrix packed = PackedMatrix::Pack(pool, w.view);
      for (int64_t m = 1; m <= 12; ++m) {
        ExpectMatchesTwinOnEveryTarget(pool, {m, k, n, true, m % 2 == 0}, w, packed);
        if (HasFailure()) return;
      }
    }
  }
}

TEST(PackedMatMulTest, SimdTargetsWithFmaReportIt) {
  ForEachTarget([] {
    const std::string name = CurrentSimdTargetName();
    if (name != "SCALAR" && name != "EMU128") {
      EXPECT_TRUE(PackedMatMulFusesMultiplyAdd()) << name;
    }
  });
}

TEST(PackedMatMulTest, BiasAndAccumulateCombinations) {
  ThreadPool pool(2);
  const auto w = MakeWeights(DType::kBF16, 100, 2100, 9);
  const PackedMatrix packed = PackedMatrix::Pack(pool, w.view);
  for (int64_t m : {1, 7, 40}) {
    for (bool with_bias : {false, true}) {
      for (bool accumulate : {false, true}) {
        ExpectMatchesTwinOnEveryTarget(pool, {m, 2100, 100, with_bias, accumulate}, w, packed);
      }
    }
  }
}

// A row's result is the same bits alone (m = 1) and among any number of other rows, at any
// position: the whole point of the blocked contract.
TEST(PackedMatMulTest, RowIsBatchInvariant) {
  ThreadPool pool(2);
  for (DType dtype : {DType::kBF16, DType::kF32}) {
    const int64_t k = 1100, n = 333;
    const auto w = MakeWeights(dtype, n, k, 21);
    const PackedMatrix packed = PackedMatrix::Pack(pool, w.view);
    const auto bias = RandomVector(static_cast<size_t>(n), 22);
    const auto probe = RandomVector(static_cast<size_t>(k), 23);
    ForEachTarget([&] {
      std::vector<float> alone(static_cast<size_t>(n));
      MatMul(pool, probe.data(), 1, k, packed, bias.data(), alone.data(), n, false);
      for (int64_t m = 2; m <= 70; ++m) {
        auto x = RandomVector(static_cast<size_t>(m * k), static_cast<uint32_t>(100 + m));
        const int64_t at = (m * 29 / 11) % m;  // a different position for most batch sizes
        std::memcpy(x.data() + at * k, probe.data(), static_cast<size_t>(k) * sizeof(float));
        std::vector<float> y(static_cast<size_t>(m * n));
        MatMul(pool, x.data(), m, k, packed, bias.data(), y.data(), n, false);
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(y[at * n + j], alone[j]) << "m=" << m << " row " << at << " col " << j;
        }
      }
      // Also at the last row of a batch of several row blocks.
      const int64_t m = 800;
      auto x = RandomVector(static_cast<size_t>(m * k), 99);
      std::memcpy(x.data() + (m - 1) * k, probe.data(), static_cast<size_t>(k) * sizeof(float));
      std::vector<float> y(static_cast<size_t>(m * n));
      MatMul(pool, x.data(), m, k, packed, bias.data(), y.data(), n, false);
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(y[(m - 1) * n + j], alone[j]) << "col " << j;
    });
  }
}

TEST(PackedMatMulTest, ResultIndependentOfThreadCount) {
  const int64_t k = 1500, n = 517;
  ThreadPool one(1), two(2), three(3);
  const auto w = MakeWeights(DType::kBF16, n, k, 2);
  const PackedMatrix packed = PackedMatrix::Pack(one, w.view);
  for (int64_t m : {1, 5, 16, 50, 200}) {
    auto x = RandomVector(static_cast<size_t>(m * k), 1);
    std::vector<float> y1(static_cast<size_t>(m * n)), y2 = y1, y3 = y1;
    MatMul(one, x.data(), m, k, packed, nullptr, y1.data(), n, false);
    MatMul(two, x.data(), m, k, packed, nullptr, y2.data(), n, false);
    MatMul(three, x.data(), m, k, packed, nullptr, y3.data(), n, false);
    EXPECT_EQ(y1, y2) << "m=" << m;
    EXPECT_EQ(y1, y3) << "m=" << m;
  }
}

TEST(PackedMatMulTest, PackingThreadsDoNotChangeBytes) {
  const auto w = MakeWeights(DType::kBF16, 1000, 300, 4);
  ThreadPool one(1), three(3);
  const PackedMatrix a = PackedMatrix::Pack(one, w.view);
  const PackedMatrix b = PackedMatrix::Pack(three, w.view);
  ASSERT_EQ(a.bytes(), b.bytes());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())), 0);
}

TEST(PackedMatMulTest, ShapeDtypeAndBytes) {
  ThreadPool pool(2);
  const auto bf16 = MakeWeights(DType::kBF16, 33, 10, 1);
  const PackedMatrix a = PackedMatrix::Pack(pool, bf16.view);
  EXPECT_EQ(a.rows(), 33);
  EXPECT_EQ(a.cols(), 10);
  EXPECT_EQ(a.dtype(), DType::kBF16);
  EXPECT_EQ(a.panels(), 2);
  EXPECT_EQ(a.bytes(), 2 * 10 * 32 * 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (DType dtype : {DType::kF16, DType::kF32}) {
    const auto w = MakeWeights(dtype, 64, 7, 1);
    const PackedMatrix b = PackedMatrix::Pack(pool, w.view);
    EXPECT_EQ(b.dtype(), DType::kF32);
    EXPECT_EQ(b.bytes(), 2 * 7 * 32 * 4);
  }
  // Move leaves the source empty.
  PackedMatrix moved = PackedMatrix::Pack(pool, bf16.view);
  const uint8_t* data = moved.data();
  PackedMatrix target = std::move(moved);
  EXPECT_EQ(target.data(), data);
  EXPECT_EQ(target.rows(), 33);
  EXPECT_EQ(moved.rows(), 0);  // NOLINT(bugprone-use-after-move): documented empty state
  EXPECT_EQ(moved.bytes(), 0);
}

// The documented layout, byte for byte: bf16 word i of depth step k holds column i (low half)
// and column i + 16 (high half); f32 rows are 32 floats in column order; padding is zero.
TEST(PackedMatMulTest, LayoutIsTheDocumentedOne) {
  ThreadPool pool(2);
  const int64_t rows = 40, cols = 5;
  const auto bf16 = MakeWeights(DType::kBF16, rows, cols, 3);
  const PackedMatrix a = PackedMatrix::Pack(pool, bf16.view);
  for (int64_t j = 0; j < 64; ++j) {
    for (int64_t k = 0; k < cols; ++k) {
      const uint8_t* row = a.data() + (j / 32) * a.panel_bytes() + k * 64;
      uint32_t word;
      std::memcpy(&word, row + 4 * (j % 16), 4);
      const uint16_t half =
          (j % 32) < 16 ? static_cast<uint16_t>(word & 0xFFFF) : static_cast<uint16_t>(word >> 16);
      uint16_t want = 0;
      if (j < rows) std::memcpy(&want, bf16.storage.data() + 2 * (j * cols + k), 2);
      ASSERT_EQ(half, want) << "col " << j << " k " << k;
    }
  }
  const auto f16 = MakeWeights(DType::kF16, rows, cols, 4);
  const PackedMatrix b = PackedMatrix::Pack(pool, f16.view);
  for (int64_t j = 0; j < 64; ++j) {
    for (int64_t k = 0; k < cols; ++k) {
      float value;
      std::memcpy(&value, b.data() + (j / 32) * b.panel_bytes() + k * 128 + 4 * (j % 32), 4);
      ASSERT_EQ(value, j < rows ? f16.values[j * cols + k] : 0.0f) << "col " << j << " k " << k;
    }
  }
}

TEST(PackedMatMulTest, PackOfPartsEqualsPackOfConcatenation) {
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
    const PackedMatrix a = PackedMatrix::Pack(pool, parts);
    const PackedMatrix b = PackedMatrix::Pack(pool, whole.view);
    EXPECT_EQ(a.rows(), 92);
    EXPECT_EQ(a.cols(), cols);
    ASSERT_EQ(a.bytes(), b.bytes());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())), 0);
  }
}

// A view of rows [begin, begin + count) multiplies exactly as those columns of the whole do,
// in every layout (panels of bf16 and f32, bf16 rows over several parts, int8), ranges ending
// inside a panel included; starts off a panel and ranges outside the matrix are refused.
TEST(PackedMatMulTest, RowsViewGivesTheWholeProductsColumns) {
  ThreadPool pool(2);
  const int64_t rows = 96, cols = 70, m = 5;
  const auto bf16 = MakeWeights(DType::kBF16, rows, cols, 8);
  const auto f32 = MakeWeights(DType::kF32, rows, cols, 9);
  // bf16 rows from parts that do not line up with the views: 45 + 7 + 44.
  std::vector<MatrixView> parts;
  int64_t start = 0;
  for (int64_t r : {45, 7, 44}) {
    parts.push_back({bf16.storage.data() + start * cols * 2, DType::kBF16, r, cols});
    start += r;
  }
  std::vector<PackedMatrix> matrices;
  matrices.push_back(PackedMatrix::Pack(pool, bf16.view));
  matrices.push_back(PackedMatrix::Pack(pool, f32.view));
  matrices.push_back(PackedMatrix::Bf16Rows(parts));
  matrices.push_back(PackedMatrix::Q8(Q8Matrix::Quantize(pool, bf16.view)));
  const auto x = RandomVector(static_cast<size_t>(m * cols), 10);
  const auto bias = RandomVector(static_cast<size_t>(rows), 11);
  for (const PackedMatrix& w : matrices) {
    const int64_t step = w.layout() == WeightLayout::kPanels ? kPanelCols
                         : w.layout() == WeightLayout::kQ8   ? kQ8PanelCols
                                                             : 1;
    SCOPED_TRACE(::testing::Message()
                 << "layout " << static_cast<int>(w.layout()) << " dtype " << DTypeName(w.dtype()));
    std::vector<float> whole(static_cast<size_t>(m * rows));
    MatMul(pool, x.data(), m, cols, w, bias.data(), whole.data(), rows, false);
    for (int64_t begin : {int64_t{0}, step, 2 * step}) {
      for (int64_t count : {int64_t{1}, int64_t{17}, rows - begin}) {
        if (begin + count > rows) continue;
        const std::optional<PackedMatrix> view = w.RowsView(begin, count);
        ASSERT_TRUE(view.has_value()) << begin << " + " << count;
        EXPECT_EQ(view->rows(), count);
        EXPECT_EQ(view->cols(), cols);
        const int64_t ldy = count + 3;
        std::vector<float> y(static_cast<size_t>(m * ldy), -7.0f);
        MatMul(pool, x.data(), m, cols, *view, bias.data() + begin, y.data(), ldy, false);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < count; ++j) {
            ASSERT_EQ(y[i * ldy + j], whole[i * rows + begin + j]) << begin << " + " << count;
          }
          for (int64_t j = count; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], -7.0f);  // untouched
        }
      }
    }
    EXPECT_FALSE(w.RowsView(-1, 2));
    EXPECT_FALSE(w.RowsView(0, 0));
    EXPECT_FALSE(w.RowsView(rows - 1, 2));
    EXPECT_FALSE(w.RowsView(0, rows + 1));
    EXPECT_EQ(w.RowsView(1, 2).has_value(), step == 1);
    EXPECT_EQ(w.RowsView(step + 3, 2).has_value(), step == 1);
  }
}

TEST(PackedMatMulTest, EmptyDepthAddsBias) {
  ThreadPool pool(2);
  const MatrixView w{nullptr, DType::kBF16, 3, 0};
  const PackedMatrix packed = PackedMatrix::Pack(pool, w);
  const float bias[3] = {1.0f, -2.0f, 3.5f};
  float y[3] = {10.0f, 10.0f, 10.0f}, expected[3] = {10.0f, 10.0f, 10.0f};
  MatMul(pool, nullptr, 1, 0, packed, bias, y, 3, true);
  reference::MatMulBlocked(nullptr, 1, 0, w, bias, expected, 3, true);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(y[j], expected[j]);
  EXPECT_EQ(y[1], 8.0f);
}

// A view of packed bytes copied elsewhere (as `mineru-cpp pack`'s file is mapped) is the same
// matrix: bit-identical products on every target, for bf16 panels and for the f32 panels of f32
// and f16 weights; nothing owned, and moving the view keeps its bytes.
TEST(PackedMatMulTest, PanelsViewGivesTheSameProductAsTheOwnedPanels) {
  ThreadPool pool(2);
  const int64_t rows = 70, cols = 1100;  // a partial last panel, two depth blocks
  for (DType dtype : {DType::kBF16, DType::kF32, DType::kF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const auto w = MakeWeights(dtype, rows, cols, 21);
    const PackedMatrix owned = PackedMatrix::Pack(pool, w.view);
    EXPECT_EQ(owned.owned_bytes(), owned.bytes());
    ASSERT_EQ(owned.bytes(), PackedMatrix::PanelsBytesFor(rows, cols, owned.dtype()));
    std::vector<uint8_t> file(static_cast<size_t>(owned.bytes()) + 64);
    uint8_t* aligned = file.data() + (64 - reinterpret_cast<uintptr_t>(file.data()) % 64) % 64;
    std::memcpy(aligned, owned.data(), static_cast<size_t>(owned.bytes()));
    Result<PackedMatrix> view = PackedMatrix::PanelsView(
        {aligned, static_cast<size_t>(owned.bytes())}, rows, cols, owned.dtype());
    ASSERT_TRUE(view.has_value()) << view.error().ToString();
    EXPECT_EQ(view->layout(), WeightLayout::kPanels);
    EXPECT_EQ(view->owned_bytes(), 0);
    EXPECT_EQ(view->data(), aligned);
    EXPECT_EQ(view->bytes(), owned.bytes());
    EXPECT_EQ(view->dtype(), owned.dtype());
    const PackedMatrix moved = std::move(*view);
    EXPECT_EQ(moved.data(), aligned);
    const auto x = RandomVector(static_cast<size_t>(9 * cols), 22);
    const auto bias = RandomVector(static_cast<size_t>(rows), 23);
    ForEachTarget([&] {
      std::vector<float> a(static_cast<size_t>(9 * rows)), b(a.size());
      MatMul(pool, x.data(), 9, cols, owned, bias.data(), a.data(), rows, false);
      MatMul(pool, x.data(), 9, cols, moved, bias.data(), b.data(), rows, false);
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    });
  }
}

TEST(PackedMatMulTest, PanelsViewRejectsWrongSizesAlignmentDtypesAndShapes) {
  const int64_t rows = 40, cols = 3;  // 2 panels of 3 depth steps
  const int64_t bytes = PackedMatrix::PanelsBytesFor(rows, cols, DType::kBF16);
  ASSERT_EQ(bytes, 2 * 3 * 64);
  EXPECT_EQ(PackedMatrix::PanelsBytesFor(rows, cols, DType::kF32), 2 * bytes);
  std::vector<uint8_t> file(static_cast<size_t>(2 * bytes) + 128);
  uint8_t* aligned = file.data() + (64 - reinterpret_cast<uintptr_t>(file.data()) % 64) % 64;
  const auto size = static_cast<size_t>(bytes);
  EXPECT_TRUE(PackedMatrix::PanelsView({aligned, size}, rows, cols, DType::kBF16).has_value());
  for (size_t wrong : {size - 1, size + 1, size - 64, 2 * size, size_t{0}}) {
    auto v = PackedMatrix::PanelsView({aligned, wrong}, rows, cols, DType::kBF16);
    ASSERT_FALSE(v.has_value()) << wrong;
    EXPECT_EQ(v.error().code, ErrorCode::kCorrupt);
    EXPECT_NE(v.error().message.find("expected"), std::string::npos) << v.error().message;
  }
  // The same bytes are not f32 panels, nor a matrix of another depth.
  EXPECT_FALSE(PackedMatrix::PanelsView({aligned, size}, rows, cols, DType::kF32).has_value());
  EXPECT_FALSE(PackedMatrix::PanelsView({aligned, size}, rows, cols + 1, DType::kBF16));
  auto misaligned = PackedMatrix::PanelsView({aligned + 4, size}, rows, cols, DType::kBF16);
  ASSERT_FALSE(misaligned.has_value());
  EXPECT_EQ(misaligned.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(misaligned.error().message.find("aligned"), std::string::npos);
  for (auto [r, c, d] : {std::tuple{int64_t{-1}, int64_t{3}, DType::kBF16},
                         {40, -1, DType::kBF16},
                         {int64_t{1} << 62, 1 << 20, DType::kF32},
                         {40, 3, DType::kF16},
                         {40, 3, DType::kI8}}) {
    auto v = PackedMatrix::PanelsView({aligned, size}, r, c, d);
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidArgument) << v.error().message;
  }
  EXPECT_TRUE(PackedMatrix::PanelsView({}, 0, 100, DType::kBF16).has_value());
  EXPECT_TRUE(PackedMatrix::PanelsView({}, 7, 0, DType::kF32).has_value());
}

TEST(PackedMatMulDeathTest, RejectsMismatchedParts) {
  ThreadPool pool(1);
  const auto a = MakeWeights(DType::kBF16, 4, 8, 1);
  const auto b = MakeWeights(DType::kF32, 4, 8, 2);
  const auto c = MakeWeights(DType::kBF16, 4, 9, 3);
  const MatrixView mixed[] = {a.view, b.view};
  const MatrixView widths[] = {a.view, c.view};
  EXPECT_DEATH(PackedMatrix::Pack(pool, mixed), "mix");
  EXPECT_DEATH(PackedMatrix::Pack(pool, widths), "columns");
  EXPECT_DEATH(PackedMatrix::Pack(pool, std::span<const MatrixView>()), "no parts");
}

}  // namespace
}  // namespace mineru::ops
