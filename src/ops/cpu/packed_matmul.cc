// SPDX-License-Identifier: Apache-2.0
// MatMul over PackedMatrix panels for every SIMD target (Highway dynamic dispatch), and the
// packing itself (target-independent bytes, see ops/packed_matrix.h).
//
// One register-tile kernel serves every row count: Tile<R, C> multiplies R rows of x (read in
// place) by C "slices" of output columns over one depth block. A slice is two float vectors of
// one panel: on a target of L lanes, slice s of a panel holds columns s L .. s L + L - 1
// (vector 0) and 16 + s L .. 16 + s L + L - 1 (vector 1), so a panel is 16 / L slices (AVX-512:
// 1, AVX2: 2). Each output is one FMA chain over k ascending from zero, added to y once per
// block: exactly the contract in packed_matrix.h, whatever R, C, the row tiling or the thread
// split, hence batch invariant.
//
// Each task owns a block of rows and a contiguous run of slices. It walks the run C slices at
// a time (C weight streams in flight; 2 R C independent chains hide FMA latency), and for each
// depth block sweeps its row tiles over those slices: the slices' depth block (C x 64 KiB of
// bf16 at most) stays in L2 while the tiles reuse it, and with one row tile (decode) every
// weight is read from memory exactly once. A variant that packed x into [k][12-row] panels
// (the classic GEMM scheme of cpu/matmul.cc) measured 3-15 % slower at every row count from 16
// to 5,476 on AVX-512 and AVX2, so x is not packed.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/packed_matmul.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ops/packed_matrix.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::ops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DF = hn::ScalableTag<float>;
using DU = hn::RebindToUnsigned<DF>;
using VF = hn::Vec<DF>;

constexpr size_t kLanes = hn::MaxLanes(DF());
static_assert(16 % kLanes == 0, "a panel half (16 columns) must be whole vectors");
constexpr size_t kSlicesPerPanel = 16 / kLanes;
constexpr size_t kPanel = static_cast<size_t>(kPanelCols);
constexpr size_t kDepthBlock = static_cast<size_t>(kPackedDepthBlock);

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_ARCH_ARM_A64
constexpr size_t kVectorRegisters = 32;
#else
constexpr size_t kVectorRegisters = 16;  // AVX2; the scalar target takes the same shapes
#endif
// Tiles have at most this many rows. A tile of R rows takes up to SlicesForRows(R) slices: its
// 2 R C accumulators, the 2 C widened weight vectors of one depth step and a broadcast of x must
// fit the vector registers (AVX-512: 1 row x 7 slices, 2 x 5, 3-4 x 3, 5-6 x 2; AVX2: 1 x 3,
// 2 x 2, 3-6 x 1).
constexpr size_t kMaxTileRows = 6;
constexpr size_t SlicesForRows(size_t rows) {
  return std::max<size_t>(1, (kVectorRegisters - 1) / (2 * rows + 2));
}
constexpr size_t kMaxTileSlices = SlicesForRows(1);
// Rows of x per row block: the block's depth block of x (1.5 MiB at most) stays in cache while
// the task's slices sweep it.
constexpr size_t kRowBlock = 384;
// Software prefetch distance of the weight streams, ahead of the hardware prefetchers.
constexpr size_t kPrefetchBytes = 2048;

// Panel element: bf16 panels are read as uint32 words (two columns each), f32 panels as float.
template <class TW>
constexpr size_t kRowElems = std::is_same_v<TW, float> ? 32 : 16;

// The two vectors of one slice at one depth step (p points at the slice's first element; panel
// rows are 64-byte aligned, slices whole vectors into them).
template <class TW>
HWY_INLINE void LoadSlice(const TW* HWY_RESTRICT p, VF& lo, VF& hi) {
  const DF df;
  if constexpr (std::is_same_v<TW, float>) {
    lo = hn::Load(df, p);
    hi = hn::Load(df, p + 16);
  } else {
    const DU du;
    const auto words = hn::Load(du, p);
    lo = hn::BitCast(df, hn::ShiftLeft<16>(words));                  // low halves: columns c
    hi = hn::BitCast(df, hn::And(words, hn::Set(du, 0xFFFF0000u)));  // high halves: c + 16
  }
}

struct TileArgs {
  const float* x;  // &x[i0, k0]; rows ldx apart
  size_t ldx;
  const void* panels;  // packed weights
  size_t panel_elems;  // TW elements per panel
  size_t g0;           // first slice of the tile
  size_t k0, kc;       // depth block
  float* y;            // &y[i0, 0]
  size_t ldy;
  size_t n;  // columns of y to write
  const float* bias;
  bool first;  // first depth block: add bias (and y only if accumulate)
  bool accumulate;
};
using TileFn = void (*)(const TileArgs&);

// Applies the contract's update to the valid columns of an R x C tile whose sums are in
// `tile` ([R][C][2][kLanes]): first block y = accumulate ? y + (acc + bias) : acc + bias
// (bias 0 when null), later blocks y = y + acc. Vector and scalar lanes round identically.
template <size_t R, size_t C>
HWY_INLINE void WriteBack(const TileArgs& t, const float* HWY_RESTRICT tile) {
  const DF df;
  for (size_t c = 0; c < C; ++c) {
    const size_t g = t.g0 + c;
    const size_t col_base = (g / kSlicesPerPanel) * kPanel + (g % kSlicesPerPanel) * kLanes;
    for (size_t h = 0; h < 2; ++h) {
      const size_t col = col_base + 16 * h;
      if (col >= t.n) continue;
      const float* sums = tile + (c * 2 + h) * kLanes;
      if (col + kLanes <= t.n) {
        const VF b = t.first && t.bias ? hn::LoadU(df, t.bias + col) : hn::Zero(df);
        for (size_t r = 0; r < R; ++r) {
          float* out = t.y + r * t.ldy + col;
          const VF acc = hn::Load(df, sums + r * C * 2 * kLanes);
          VF value;
          if (t.first) {
            value = hn::Add(acc, b);
            if (t.accumulate) value = hn::Add(hn::LoadU(df, out), value);
          } else {
            value = hn::Add(hn::LoadU(df, out), acc);
          }
          hn::StoreU(value, df, out);
        }
      } else {  // the last panel's padding columns are computed but never stored
        for (size_t r = 0; r < R; ++r) {
          for (size_t l = 0; col + l < t.n; ++l) {
            float& out = t.y[r * t.ldy + col + l];
            const float acc = sums[r * C * 2 * kLanes + l];
            if (t.first) {
              const float value = acc + (t.bias ? t.bias[col + l] : 0.0f);
              out = t.accumulate ? out + value : value;
            } else {
              out = out + acc;
            }
          }
        }
      }
    }
  }
}

// R rows x C slices over one depth block. The accumulators are an array indexed only by
// compile-time constants inside fully unrolled loops, so each lives in a register (checked in
// the disassembly: no spills for the tile shapes SlicesForRows allows).
template <class TW, size_t R, size_t C>
HWY_NOINLINE void Tile(const TileArgs& t) {
  const DF df;
  constexpr size_t kRow = kRowElems<TW>;
  constexpr size_t kAhead = kPrefetchBytes / (kRow * sizeof(TW));
  const TW* ws[C];
  HWY_UNROLL(16)
  for (size_t c = 0; c < C; ++c) {
    const size_t g = t.g0 + c;
    ws[c] = static_cast<const TW*>(t.panels) + (g / kSlicesPerPanel) * t.panel_elems +
            (g % kSlicesPerPanel) * kLanes + t.k0 * kRow;
  }
  const float* xr[R];
  HWY_UNROLL(16)
  for (size_t r = 0; r < R; ++r) xr[r] = t.x + r * t.ldx;

  VF acc[R][C][2];
  HWY_UNROLL(16)
  for (size_t r = 0; r < R; ++r) {
    HWY_UNROLL(16)
    for (size_t c = 0; c < C; ++c) acc[r][c][0] = acc[r][c][1] = hn::Zero(df);
  }
  for (size_t k = 0; k < t.kc; ++k) {
    VF w[C][2];
    HWY_UNROLL(16)
    for (size_t c = 0; c < C; ++c) {
      if constexpr (kPrefetchBytes > 0) {
        hwy::Prefetch(ws[c] + (k + kAhead) * kRow);
        if constexpr (kRow * sizeof(TW) > 64) hwy::Prefetch(ws[c] + (k + kAhead) * kRow + 16);
      }
      LoadSlice(ws[c] + k * kRow, w[c][0], w[c][1]);
    }
    HWY_UNROLL(16)
    for (size_t r = 0; r < R; ++r) {
      const VF xv = hn::Set(df, xr[r][k]);
      HWY_UNROLL(16)
      for (size_t c = 0; c < C; ++c) {
        acc[r][c][0] = hn::MulAdd(xv, w[c][0], acc[r][c][0]);  // fma(x[i, k], w[j, k], acc)
        acc[r][c][1] = hn::MulAdd(xv, w[c][1], acc[r][c][1]);
      }
    }
  }
  HWY_ALIGN float tile[R * C * 2 * kLanes];
  HWY_UNROLL(16)
  for (size_t r = 0; r < R; ++r) {
    HWY_UNROLL(16)
    for (size_t c = 0; c < C; ++c) {
      hn::Store(acc[r][c][0], df, tile + ((r * C + c) * 2) * kLanes);
      hn::Store(acc[r][c][1], df, tile + ((r * C + c) * 2 + 1) * kLanes);
    }
  }
  WriteBack<R, C>(t, tile);
}

// Tiles by [rows - 1][slices - 1]; slice counts beyond what a row count may hold map to the
// largest that fits (never requested), so only shapes that fit the registers are compiled.
template <class TW, size_t R, size_t... Cs>
constexpr std::array<TileFn, sizeof...(Cs)> TileRow(std::index_sequence<Cs...>) {
  return {{&Tile<TW, R, std::min(Cs + 1, SlicesForRows(R))>...}};
}
template <class TW, size_t... Rs>
constexpr auto TileTable(std::index_sequence<Rs...>) {
  return std::array{TileRow<TW, Rs + 1>(std::make_index_sequence<kMaxTileSlices>())...};
}

// Begin of range i when [0, total) is split into `parts` near-equal contiguous ranges.
inline size_t SplitPoint(size_t total, size_t parts, size_t i) { return total * i / parts; }

template <class TW>
void MatMulTiles(ThreadPool& pool, const float* x, size_t m, size_t ldx, const void* panels,
                 size_t n, size_t depth, const float* bias, float* y, size_t ldy, bool accumulate) {
  static constexpr auto kTiles = TileTable<TW>(std::make_index_sequence<kMaxTileRows>());
  const size_t slices = (n + kPanel - 1) / kPanel * kSlicesPerPanel;
  // Row blocks of near-equal size; within a block, row tiles of near-equal size.
  const size_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  const size_t block_rows_max = (m + row_blocks - 1) / row_blocks;
  const size_t tiles_max = (block_rows_max + kMaxTileRows - 1) / kMaxTileRows;
  const size_t slices_max = SlicesForRows((block_rows_max + tiles_max - 1) / tiles_max);
  // Long contiguous runs of slices (about 8 tasks per thread; with one row block a multiple
  // of the thread count): the prefetchers ramp up once per run, and threads finish together.
  const size_t threads = static_cast<size_t>(pool.num_threads());
  size_t runs = std::min((slices + slices_max - 1) / slices_max,
                         std::max<size_t>(1, (8 * threads + row_blocks - 1) / row_blocks));
  if (row_blocks == 1 && runs > threads) runs = runs / threads * threads;
  const size_t blocks = std::max<size_t>(1, (depth + kDepthBlock - 1) / kDepthBlock);
  TileArgs base{};
  base.ldx = ldx;
  base.panels = panels;
  base.panel_elems = depth * kRowElems<TW>;
  base.ldy = ldy;
  base.n = n;
  base.bias = bias;
  base.accumulate = accumulate;
  pool.ParallelFor(row_blocks * runs, [&](size_t task, int) {
    const size_t row_block = task / runs, run_index = task % runs;
    const size_t i_begin = SplitPoint(m, row_blocks, row_block);
    const size_t rows = SplitPoint(m, row_blocks, row_block + 1) - i_begin;
    const size_t row_tiles = (rows + kMaxTileRows - 1) / kMaxTileRows;
    const size_t c_max = SlicesForRows((rows + row_tiles - 1) / row_tiles);
    const size_t run_begin = SplitPoint(slices, runs, run_index);
    const size_t run = SplitPoint(slices, runs, run_index + 1) - run_begin;
    const size_t groups = (run + c_max - 1) / c_max;  // of near-equal size, at most c_max
    TileArgs t = base;
    for (size_t group = 0; group < groups; ++group) {
      t.g0 = run_begin + SplitPoint(run, groups, group);
      const size_t c = run_begin + SplitPoint(run, groups, group + 1) - t.g0;
      for (size_t b = 0; b < blocks; ++b) {
        t.k0 = b * kDepthBlock;
        t.kc = std::min(kDepthBlock, depth - std::min(depth, t.k0));
        t.first = b == 0;
        for (size_t tile = 0; tile < row_tiles; ++tile) {
          const size_t i0 = i_begin + SplitPoint(rows, row_tiles, tile);
          const size_t r = i_begin + SplitPoint(rows, row_tiles, tile + 1) - i0;
          t.x = x + i0 * ldx + t.k0;
          t.y = y + i0 * ldy;
          kTiles[r - 1][c - 1](t);
        }
      }
    }
  });
}

}  // namespace

void PackedMatMulImpl(ThreadPool* pool, const float* x, int64_t m, int64_t ldx,
                      const PackedMatrix* w, const float* bias, float* y, int64_t ldy,
                      bool accumulate) {
  const auto rows = static_cast<size_t>(m), lx = static_cast<size_t>(ldx);
  const auto ly = static_cast<size_t>(ldy), n = static_cast<size_t>(w->rows());
  const auto depth = static_cast<size_t>(w->cols());
  if (w->dtype() == DType::kBF16) {
    MatMulTiles<uint32_t>(*pool, x, rows, lx, w->data(), n, depth, bias, y, ly, accumulate);
  } else {
    MatMulTiles<float>(*pool, x, rows, lx, w->data(), n, depth, bias, y, ly, accumulate);
  }
}

bool FusesMultiplyAdd() { return HWY_NATIVE_FMA != 0; }

}  // namespace mineru::ops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru::ops {
namespace {

// uint16 index, within one bf16 panel row of 32 halves, of column c: word c % 16, low half for
// columns 0..15 and high half for 16..31 (little-endian words).
constexpr size_t Bf16Slot(size_t c) { return c < 16 ? 2 * c : 2 * (c - 16) + 1; }

// Writes panel p: bf16 halves moved as bits, f16 widened exactly, f32 copied; columns past
// `rows` zero. Depth is walked in blocks so the destination block stays in L1.
void PackPanel(const StackedRows& src, DType src_dtype, int64_t rows, int64_t depth, int64_t p,
               uint8_t* dst) {
  constexpr int64_t kBlock = 256;
  const bool to_bf16 = src_dtype == DType::kBF16;
  const size_t elem = DTypeSize(src_dtype);
  alignas(64) uint8_t row_buf[kBlock * 4];
  for (int64_t k0 = 0; k0 < depth; k0 += kBlock) {
    const int64_t kc = std::min(kBlock, depth - k0);
    for (int64_t c = 0; c < kPanelCols; ++c) {
      const int64_t j = p * kPanelCols + c;
      if (j < rows) {
        std::memcpy(row_buf, src.Row(j) + static_cast<size_t>(k0) * elem,
                    static_cast<size_t>(kc) * elem);
      } else {
        std::memset(row_buf, 0, static_cast<size_t>(kc) * elem);
      }
      if (to_bf16) {
        uint16_t halves[kBlock];
        std::memcpy(halves, row_buf, static_cast<size_t>(kc) * 2);
        auto* out = reinterpret_cast<uint16_t*>(dst) + k0 * kPanelCols + Bf16Slot(c);
        for (int64_t k = 0; k < kc; ++k) out[k * kPanelCols] = halves[k];
      } else {
        auto* out = reinterpret_cast<float*>(dst) + k0 * kPanelCols + c;
        if (src_dtype == DType::kF16) {
          uint16_t halves[kBlock];
          std::memcpy(halves, row_buf, static_cast<size_t>(kc) * 2);
          for (int64_t k = 0; k < kc; ++k) out[k * kPanelCols] = F16ToF32(halves[k]);
        } else {
          float values[kBlock];
          std::memcpy(values, row_buf, static_cast<size_t>(kc) * 4);
          for (int64_t k = 0; k < kc; ++k) out[k * kPanelCols] = values[k];
        }
      }
    }
  }
}

}  // namespace

PackedMatrix::PackedMatrix(PackedMatrix&& other) noexcept
    : storage_(std::move(other.storage_)),
      panels_(std::exchange(other.panels_, nullptr)),
      owned_bytes_(std::exchange(other.owned_bytes_, 0)),
      rows_(std::exchange(other.rows_, 0)),
      cols_(std::exchange(other.cols_, 0)),
      dtype_(std::exchange(other.dtype_, DType::kF32)),
      layout_(std::exchange(other.layout_, WeightLayout::kPanels)),
      row_parts_(std::move(other.row_parts_)),
      q8_(std::move(other.q8_)) {}

PackedMatrix& PackedMatrix::operator=(PackedMatrix&& other) noexcept {
  storage_ = std::move(other.storage_);
  panels_ = std::exchange(other.panels_, nullptr);
  owned_bytes_ = std::exchange(other.owned_bytes_, 0);
  rows_ = std::exchange(other.rows_, 0);
  cols_ = std::exchange(other.cols_, 0);
  dtype_ = std::exchange(other.dtype_, DType::kF32);
  layout_ = std::exchange(other.layout_, WeightLayout::kPanels);
  row_parts_ = std::move(other.row_parts_);
  q8_ = std::move(other.q8_);
  return *this;
}

PackedMatrix PackedMatrix::Pack(ThreadPool& pool, std::span<const MatrixView> parts) {
  const StackedRows src(parts, "PackedMatrix::Pack");
  const DType src_dtype = src.dtype();
  PackedMatrix packed;
  packed.rows_ = src.rows();
  packed.cols_ = src.cols();
  packed.dtype_ = PanelDType(src_dtype);
  const int64_t bytes = packed.bytes();
  if (bytes == 0) return packed;
  packed.storage_.reset(
      static_cast<uint8_t*>(::operator new[](static_cast<size_t>(bytes), std::align_val_t{64})));
  packed.owned_bytes_ = bytes;
  packed.panels_ = packed.storage_.get();
  uint8_t* base = packed.storage_.get();
  const int64_t panel_bytes = packed.panel_bytes();
  pool.ParallelFor(static_cast<size_t>(packed.panels()), [&](size_t p, int) {
    PackPanel(src, src_dtype, packed.rows_, packed.cols_, static_cast<int64_t>(p),
              base + static_cast<int64_t>(p) * panel_bytes);
  });
  return packed;
}

PackedMatrix PackedMatrix::Pack(ThreadPool& pool, const MatrixView& w) {
  return Pack(pool, std::span<const MatrixView>(&w, 1));
}

int64_t PackedMatrix::PanelsBytesFor(int64_t rows, int64_t cols, DType dtype) {
  if (rows < 0 || cols < 0 || (dtype != DType::kBF16 && dtype != DType::kF32)) return -1;
  const int64_t panels = rows / kPanelCols + (rows % kPanelCols != 0 ? 1 : 0);
  const int64_t step = kPanelCols * static_cast<int64_t>(DTypeSize(dtype));
  int64_t panel_bytes = 0, bytes = 0;
  if (__builtin_mul_overflow(cols, step, &panel_bytes) ||
      __builtin_mul_overflow(panels, panel_bytes, &bytes)) {
    return -1;
  }
  return bytes;
}

Result<PackedMatrix> PackedMatrix::PanelsView(std::span<const uint8_t> bytes, int64_t rows,
                                              int64_t cols, DType dtype) {
  const int64_t want = PanelsBytesFor(rows, cols, dtype);
  if (want < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "panels [{}, {}] of {}: negative, too large or not BF16/F32", rows, cols,
                DTypeName(dtype));
  }
  if (static_cast<uint64_t>(want) != bytes.size()) {
    return Fail(ErrorCode::kCorrupt, "panels [{}, {}] of {}: {} bytes, expected {}", rows, cols,
                DTypeName(dtype), bytes.size(), want);
  }
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 64 != 0 && !bytes.empty()) {
    return Fail(ErrorCode::kCorrupt, "panels [{}, {}] of {}: bytes not 64-byte aligned", rows, cols,
                DTypeName(dtype));
  }
  PackedMatrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.dtype_ = dtype;
  m.panels_ = bytes.empty() ? nullptr : bytes.data();
  return m;
}

PackedMatrix PackedMatrix::Bf16Rows(std::span<const MatrixView> parts) {
  const StackedRows src(parts, "PackedMatrix::Bf16Rows");
  PackedMatrix m;
  m.layout_ = WeightLayout::kBf16Rows;
  m.dtype_ = DType::kBF16;
  m.rows_ = src.rows();
  m.cols_ = src.cols();
  if (src.dtype() == DType::kBF16) {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].rows > 0) {
        m.row_parts_.push_back({src.begin(i), static_cast<const uint16_t*>(parts[i].data)});
      }
    }
    if (m.row_parts_.empty()) m.row_parts_.push_back({0, nullptr});
    return m;
  }
  // f32 / f16 sources (test models, float checkpoints): rounded once into owned bf16 rows.
  const int64_t bytes = m.rows_ * m.cols_ * 2;
  m.storage_.reset(static_cast<uint8_t*>(
      ::operator new[](static_cast<size_t>(std::max<int64_t>(bytes, 64)), std::align_val_t{64})));
  m.owned_bytes_ = bytes;
  auto* out = reinterpret_cast<uint16_t*>(m.storage_.get());
  for (int64_t j = 0; j < m.rows_; ++j) {
    for (int64_t k = 0; k < m.cols_; ++k) out[j * m.cols_ + k] = F32ToBf16(src.Load(j, k));
  }
  m.row_parts_.push_back({0, out});
  return m;
}

PackedMatrix PackedMatrix::Bf16Rows(const MatrixView& w) {
  return Bf16Rows(std::span<const MatrixView>(&w, 1));
}

PackedMatrix PackedMatrix::Q8(Q8Matrix q8) {
  PackedMatrix m;
  m.layout_ = WeightLayout::kQ8;
  m.rows_ = q8.rows();
  m.cols_ = q8.cols();
  m.dtype_ = DType::kI8;
  m.owned_bytes_ = q8.owns_bytes() ? q8.bytes() : 0;
  m.q8_ = std::move(q8);
  return m;
}

std::optional<PackedMatrix> PackedMatrix::RowsView(int64_t begin, int64_t count) const {
  if (begin < 0 || count <= 0 || begin > rows_ - count) return std::nullopt;
  PackedMatrix m;
  m.layout_ = layout_;
  m.dtype_ = dtype_;
  m.rows_ = count;
  m.cols_ = cols_;
  switch (layout_) {
    case WeightLayout::kPanels:
      if (begin % kPanelCols != 0) return std::nullopt;
      m.panels_ = panels_ + begin / kPanelCols * panel_bytes();
      return m;
    case WeightLayout::kQ8: {
      if (begin % kQ8PanelCols != 0) return std::nullopt;
      // The view's panels are whole: a partial last one holds columns of the rows after the
      // range, which the product computes and never stores (it writes columns < rows only).
      const int64_t bytes = Q8Matrix::BytesFor(count, cols_);
      const uint8_t* first = q8_.data() + begin / kQ8PanelCols * q8_.panel_bytes();
      Result<Q8Matrix> view = Q8Matrix::View({first, static_cast<size_t>(bytes)}, count, cols_);
      if (!view) return std::nullopt;
      m.q8_ = std::move(*view);
      return m;
    }
    case WeightLayout::kBf16Rows:
      // The parts holding [begin, begin + count), re-based at 0.
      for (const Bf16RowPart& part : row_parts_) {
        const int64_t part_end = &part == &row_parts_.back() ? rows_ : (&part + 1)->begin;
        if (part_end <= begin || part.begin >= begin + count) continue;
        const int64_t from = std::max(part.begin, begin);
        m.row_parts_.push_back({from - begin, part.data + (from - part.begin) * cols_});
      }
      return m;
  }
  return std::nullopt;
}

HWY_EXPORT(PackedMatMulImpl);
HWY_EXPORT(FusesMultiplyAdd);

void MatMul(ThreadPool& pool, const float* x, int64_t m, int64_t ldx, const PackedMatrix& w,
            const float* bias, float* y, int64_t ldy, bool accumulate) {
  if (m <= 0 || w.rows() <= 0) return;
  if (w.layout() == WeightLayout::kBf16Rows) {
    MatMulBf16(pool, x, m, ldx, w.row_parts(), w.rows(), w.cols(), bias, y, ldy, accumulate);
    return;
  }
  if (w.layout() == WeightLayout::kQ8) {
    MatMul(pool, x, m, ldx, w.q8(), bias, y, ldy, accumulate);
    return;
  }
  HWY_DYNAMIC_DISPATCH(PackedMatMulImpl)(&pool, x, m, ldx, &w, bias, y, ldy, accumulate);
}

bool PackedMatMulFusesMultiplyAdd() { return HWY_DYNAMIC_DISPATCH(FusesMultiplyAdd)(); }

}  // namespace mineru::ops
#endif  // HWY_ONCE
