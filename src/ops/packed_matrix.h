// SPDX-License-Identifier: Apache-2.0
// Weight matrices packed once at load time into column panels, and a batch-invariant MatMul
// over them: y[i, :] depends only on x[i, :], never on how many rows are in the call, what the
// other rows hold, which kernel path ran or how many threads there are. A request therefore
// produces the same logits alone and batched with others.
//
// Layout (the same bytes serve every SIMD target). Output column j (= weight row j) lives in
// panel j / kPanelCols; panels are stored one after another, each [cols][kPanelCols] over the
// whole depth, the last one zero-padded to kPanelCols columns.
//   bf16 panels: each depth step k is 16 uint32 words (64 bytes, one cache line), word i =
//     bits(column i) | bits(column i + 16) << 16. A 16-lane target widens one 64-byte load into
//     columns 0..15 (shift left 16) and 16..31 (AND 0xFFFF0000); an 8-lane target gets columns
//     {0-7, 16-23} from words 0..7 and {8-15, 24-31} from words 8..15.
//   f32 panels: each depth step is 32 floats in column order.
// bf16 weights pack to bf16 panels (no float32 copy of the model); f32 and f16 weights pack to
// f32 panels (f16 widened exactly).
//
// The panels may be owned (Pack) or a view of bytes mapped from a file (PanelsView: the file
// `mineru-cpp pack` writes, model/weights_file.h); MatMul reads both through data().
//
// A PackedMatrix may instead hold bf16 rows (WeightLayout::kBf16Rows, made by Bf16Rows): the
// checkpoint's own bf16 rows viewed in place, nothing copied, and MatMul then computes the bf16
// product of ops/bf16_matmul.h (activations rounded to bf16, float32 accumulation) — the
// `--precision bf16` path. Or it may hold int8 weights (WeightLayout::kQ8, ops/q8_matrix.h:
// quantized at load or viewed in a mapped file), and MatMul is then the int8 product.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "ops/bf16_matmul.h"
#include "ops/matrix.h"
#include "ops/q8_matrix.h"

namespace mineru::ops {

// Column panels of this many output columns.
inline constexpr int64_t kPanelCols = 32;
// Depth block: sums are formed per block of this many k and then added to y (see MatMul).
inline constexpr int64_t kPackedDepthBlock = 1024;

enum class WeightLayout {
  kPanels,    // float32-contract panels, packed at load (the layout described above)
  kBf16Rows,  // bf16 rows read in place by the bf16 product
  kQ8,        // int8 weights with per-group scales, the int8 product (ops/q8_matrix.h)
};

class PackedMatrix {
 public:
  PackedMatrix() = default;
  PackedMatrix(PackedMatrix&& other) noexcept;
  PackedMatrix& operator=(PackedMatrix&& other) noexcept;
  PackedMatrix(const PackedMatrix&) = delete;
  PackedMatrix& operator=(const PackedMatrix&) = delete;
  ~PackedMatrix() = default;

  // Packs the row-concatenation of `parts` (for instance the q, k and v projections into one
  // [nq + nk + nv, cols] matrix). All parts must share dtype (kBF16, kF16 or kF32) and cols;
  // at least one part. Parallel over the pool. Violations are programming errors (weights are
  // validated when loaded) and abort through MINERU_CHECK.
  static PackedMatrix Pack(ThreadPool& pool, std::span<const MatrixView> parts);
  // The panel element type Pack gives weights of `source`: bf16 stays bf16, f32 and f16 become
  // f32 (f16 widened exactly).
  static DType PanelDType(DType source) {
    return source == DType::kBF16 ? DType::kBF16 : DType::kF32;
  }
  static PackedMatrix Pack(ThreadPool& pool, const MatrixView& w);

  // A non-owning view of panels in the layout above, exactly the bytes Pack gives for [rows,
  // cols] weights packing to panels of `dtype` (kBF16 or kF32); the memory (for instance a
  // mapped file) must outlive the view. Refused with kInvalidArgument for another dtype, a
  // negative shape or one whose size overflows, and with kCorrupt when bytes.size() !=
  // PanelsBytesFor(rows, cols, dtype) or the bytes are not 64-byte aligned. Byte values are not
  // checked: any bytes give some finite or non-finite product, never a fault.
  static Result<PackedMatrix> PanelsView(std::span<const uint8_t> bytes, int64_t rows, int64_t cols,
                                         DType dtype);
  // Size of the panels of [rows, cols] weights in `dtype` (kBF16 or kF32), or -1 for another
  // dtype, a negative shape or a size that does not fit in int64_t.
  static int64_t PanelsBytesFor(int64_t rows, int64_t cols, DType dtype);

  // The row-concatenation of `parts` for the bf16 product. bf16 parts are viewed in place (the
  // memory they point into must outlive this matrix, and nothing is copied); f32 and f16 parts
  // are rounded to bf16 into storage this matrix owns. Same preconditions as Pack.
  static PackedMatrix Bf16Rows(std::span<const MatrixView> parts);
  static PackedMatrix Bf16Rows(const MatrixView& w);

  // Int8 weights (owned or a view of mapped bytes) for the int8 product.
  static PackedMatrix Q8(Q8Matrix q8);

  // Rows [begin, begin + count) as a matrix of their own that views this one's bytes (which
  // must outlive it): MatMul over the view gives exactly the columns MatMul over the whole gives
  // for those rows, bit for bit. nullopt when the rows do not start a panel (begin a multiple
  // of kPanelCols for panels, of kQ8PanelCols for int8; bf16 rows start anywhere) or the range
  // is not inside [0, rows()).
  std::optional<PackedMatrix> RowsView(int64_t begin, int64_t count) const;

  WeightLayout layout() const { return layout_; }
  // kQ8 only.
  const Q8Matrix& q8() const { return q8_; }
  // kBf16Rows only: the parts, ascending, the first at row 0.
  std::span<const Bf16RowPart> row_parts() const { return row_parts_; }

  int64_t rows() const { return rows_; }  // output columns of MatMul (n)
  int64_t cols() const { return cols_; }  // depth (k)
  DType dtype() const { return dtype_; }  // kBF16 or kF32: the panel element type (kBF16 rows)
  // Bytes the product reads: the panels, the bf16 rows or the int8 layout.
  int64_t bytes() const {
    if (layout_ == WeightLayout::kQ8) return q8_.bytes();
    return layout_ == WeightLayout::kBf16Rows ? rows_ * cols_ * 2 : panels() * panel_bytes();
  }
  // Bytes this matrix allocated itself (0 for bf16 rows viewed in place and for views of
  // mapped panels or int8 bytes).
  int64_t owned_bytes() const { return owned_bytes_; }

  int64_t panels() const { return (rows_ + kPanelCols - 1) / kPanelCols; }
  // One panel: cols * 64 bytes (bf16) or cols * 128 bytes (f32); a multiple of 64.
  int64_t panel_bytes() const { return cols_ * kPanelCols * (dtype_ == DType::kBF16 ? 2 : 4); }
  // Panel p starts at data() + p * panel_bytes(); data() is 64-byte aligned (owned or viewed;
  // null when bytes() is 0). kQ8: the int8 layout's bytes; kBf16Rows: the owned bf16 rows of a
  // float source, else null.
  const uint8_t* data() const {
    if (layout_ == WeightLayout::kQ8) return q8_.data();
    return layout_ == WeightLayout::kPanels ? panels_ : storage_.get();
  }

 private:
  struct AlignedDelete {
    void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };

  std::unique_ptr<uint8_t[], AlignedDelete> storage_;
  // kPanels: storage_.get() when packed here, the caller's bytes for a view.
  const uint8_t* panels_ = nullptr;
  int64_t owned_bytes_ = 0;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  DType dtype_ = DType::kF32;
  WeightLayout layout_ = WeightLayout::kPanels;
  std::vector<Bf16RowPart> row_parts_;
  Q8Matrix q8_;
};

// The product with packed weights w ([n, K]). For WeightLayout::kBf16Rows it is the bf16
// product (ops/bf16_matmul.h, same arguments and row independence); for panels:
//   y[i, j] = (accumulate ? y[i, j] : 0) + sum_k x[i, k] * w[j, k] + (bias ? bias[j] : 0)
// for i < m, j < n; x has row stride ldx, y row stride ldy (elements); y must not alias x;
// columns of y past n are not touched.
//
// Exact arithmetic (this is what makes rows independent of the batch). For every output
// (i, j), for each depth block b = [k0, min(k0 + kPackedDepthBlock, K)), k0 = 0, 1024, ...
// in order (K = 0 counts as one empty block):
//   acc = 0
//   for k ascending in b: acc = fma(x[i, k], w[j, k], acc)     (fused, float32)
//   first block: y[i, j] = accumulate ? y[i, j] + (acc + bias_j) : acc + bias_j
//                (bias_j = 0.0f when bias is null, so the sum is still acc + 0.0f)
//   later blocks: y[i, j] = y[i, j] + acc
// Every register tile shape, row tiling and thread split computes exactly this, so y[i, :] is
// a function of x[i, :] alone, and every SIMD target with native FMA (AVX2, AVX-512) gives the
// same bits. reference::MatMulBlocked is the scalar twin. On a target without native FMA (the
// scalar fallback; see PackedMatMulFusesMultiplyAdd) each fma is a multiply then an add: still
// batch invariant, but not bit-equal to the twin.
//
// Speed: with few rows (decode) every weight is read from memory once for all rows; with many
// (prefill, vision) each depth block of a few panels stays in L2 while all rows sweep it.
// w is only read: calls on one PackedMatrix may run concurrently (on different pools).
void MatMul(ThreadPool& pool, const float* x, int64_t m, int64_t ldx, const PackedMatrix& w,
            const float* bias, float* y, int64_t ldy, bool accumulate);

// Whether the SIMD target dispatch uses now fuses multiply-add (Highway's HWY_NATIVE_FMA), so
// MatMul above equals reference::MatMulBlocked bit for bit.
bool PackedMatMulFusesMultiplyAdd();

}  // namespace mineru::ops
