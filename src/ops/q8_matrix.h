// SPDX-License-Identifier: Apache-2.0
// Weight matrices quantized to int8 with one float32 scale per group of kQ8Group depth elements
// (the Q8_0 scheme of llama.cpp), and a batch-invariant product that quantizes the activations
// the same way on the fly and multiplies in integers: AVX-512 VNNI (vpdpbusd) where the CPU has
// it, AVX2 (vpmaddubsw) where it has that, a portable loop with the same arithmetic elsewhere. y[i,
// :] depends only on x[i, :]: never on how many rows are in the call, which path ran or how many
// threads there are.
//
// Quantization, in float32, of a group of 32 values v[0..31] (depths 32 g .. 32 g + 31 of one
// weight row or one activation row; depths past K count as 0.0f):
//   scale = max_t |v[t]| / 127                   (one IEEE division)
//   q[t]  = scale == 0 ? 0 : clamp(rne(v[t] / scale), -127, 127)
// rne is round to nearest, ties to even (the default rounding mode). f16 and bf16 weights are
// widened exactly first. Each value is then within scale / 2 (plus a few ulps of the division)
// of q[t] * scale. Inputs are expected finite; NaN or infinity give unspecified outputs.
//
// Layout (position independent: no pointers, so the bytes may be written to a file and mapped
// back with View). G = ceil(K / 32) groups per row. Output column j (= weight row j) lives in
// panel j / kQ8PanelCols; panels are stored one after another from offset 0, each G group
// blocks of kQ8GroupBytes (576) bytes in ascending g, the last panel zero-padded to 16 columns.
// Group block g of panel p, column c = j - 16 p (0..15):
//   bytes [64 s + 4 c + t], s = 0..7, t = 0..3: uint8(q[j, 32 g + 4 s + t] + 128)
//   bytes [512 + 4 c, 512 + 4 c + 4):          float32 scale d[j, g], little-endian
// So the 64 bytes of step s are 16 int32 lanes, lane c holding 4 consecutive depths of column c:
// one aligned load is the unsigned operand of vpdpbusd for 16 columns x 4 depths. Padding
// columns and depths hold q = 0 (byte 128) and padding columns d = 0. 576 = 9 x 64, so with
// data() 64-byte aligned every group block and panel is too; 576 bytes per 512 weights is
// 1.125 bytes per weight.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "ops/matrix.h"

namespace mineru::ops {

// Depth elements per quantization group (one scale each), weights and activations alike.
inline constexpr int64_t kQ8Group = 32;
// Output columns per panel: one 512-bit vector of int32 lanes.
inline constexpr int64_t kQ8PanelCols = 16;
// Bytes of one group block of a panel: 16 columns x 32 depths of uint8 + 16 float32 scales.
inline constexpr int64_t kQ8GroupBytes = kQ8PanelCols * kQ8Group + kQ8PanelCols * 4;

class Q8Matrix {
 public:
  Q8Matrix() = default;
  Q8Matrix(Q8Matrix&& other) noexcept;
  Q8Matrix& operator=(Q8Matrix&& other) noexcept;
  Q8Matrix(const Q8Matrix&) = delete;
  Q8Matrix& operator=(const Q8Matrix&) = delete;
  ~Q8Matrix() = default;

  // Quantizes the row-concatenation of `parts` (for instance the q, k and v projections into
  // one [nq + nk + nv, cols] matrix), exactly as PackedMatrix::Pack concatenates them. All parts
  // must share dtype (kBF16, kF16 or kF32) and cols; at least one part. Parallel over the pool;
  // the bytes do not depend on the thread count. Violations are programming errors and abort
  // through MINERU_CHECK. The result owns its bytes.
  static Q8Matrix Quantize(ThreadPool& pool, std::span<const MatrixView> parts);
  static Q8Matrix Quantize(ThreadPool& pool, const MatrixView& w);

  // A non-owning view of bytes in the layout above (for instance mapped from a file, which must
  // outlive the view). Refused with kInvalidArgument for a negative shape or one whose size
  // overflows, and with kCorrupt when bytes.size() != BytesFor(rows, cols) or the bytes are not
  // 64-byte aligned. The byte values themselves are not checked: any bytes give some finite or
  // non-finite product, never a fault.
  static Result<Q8Matrix> View(std::span<const uint8_t> bytes, int64_t rows, int64_t cols);

  // Size of the layout for [rows, cols] weights, or -1 when it does not fit in int64_t.
  static int64_t BytesFor(int64_t rows, int64_t cols);

  int64_t rows() const { return rows_; }  // output columns of MatMul (n)
  int64_t cols() const { return cols_; }  // depth (K)
  int64_t groups() const { return (cols_ + kQ8Group - 1) / kQ8Group; }
  int64_t panels() const { return (rows_ + kQ8PanelCols - 1) / kQ8PanelCols; }
  int64_t panel_bytes() const { return groups() * kQ8GroupBytes; }
  int64_t bytes() const { return panels() * panel_bytes(); }
  // Panel p starts at data() + p * panel_bytes(); 64-byte aligned (null when bytes() is 0).
  const uint8_t* data() const { return data_; }
  bool owns_bytes() const { return storage_ != nullptr; }

 private:
  struct AlignedDelete {
    void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };

  std::unique_ptr<uint8_t[], AlignedDelete> storage_;  // null for a view
  const uint8_t* data_ = nullptr;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
};

// The product with quantized weights w ([n, K]):
//   y[i, j] ~ (accumulate ? y[i, j] : 0) + sum_k x[i, k] * w[j, k] + (bias ? bias[j] : 0)
// for i < m, j < n; x has row stride ldx, y row stride ldy (elements); y must not alias x;
// columns of y past n are not touched.
//
// Exact arithmetic. Each row of x is quantized per group as above (scales s[i, g], values
// p[i, k]); then for every output (i, j):
//   acc = 0.0f
//   for g = 0 .. G - 1 ascending:
//     dot = sum_{t < 32} q[j, 32 g + t] * p[i, 32 g + t]       (int32, exact)
//     acc = fma(float(dot), d[j, g] * s[i, g], acc)            (float32; the product rounded,
//                                                              then one fused multiply-add)
//   b = bias ? bias[j] : 0.0f
//   y[i, j] = accumulate ? y[i, j] + (acc + b) : acc + b
// float(dot) is exact (|dot| <= 32 * 127 * 127 < 2^24). The VNNI kernel forms dot as the
// unsigned-by-signed sum over the stored bytes q + 128, starting from -128 * sum_t p[i, 32 g + t]
// (computed once per row and group), which is the same integer; the AVX2 kernel forms it from
// the signed bytes q directly (cpu/q8_avx2.cc says how it avoids vpmaddubsw's saturation). Every
// path, tile shape, row tiling and thread split computes exactly this, so all give the bits of
// reference::MatMulQ8.
//
// Speed: with few rows (decode) every weight byte is read from memory once for all rows; with
// many (prefill, vision) a few panels stay in L2 while a block of rows, sized to fit L2 beside
// them, sweeps them. w is only read: calls on one Q8Matrix may run concurrently (on different
// pools).
void MatMul(ThreadPool& pool, const float* x, int64_t m, int64_t ldx, const Q8Matrix& w,
            const float* bias, float* y, int64_t ldy, bool accumulate);

// The paths MatMul over a Q8Matrix can take on this CPU, fastest first: "avx512vnni" and
// "avx2" where the CPU has them, then always "portable".
std::vector<const char*> Q8MatMulPaths();
// The path MatMul takes now: the first of Q8MatMulPaths() unless one is forced.
const char* Q8MatMulPath();
// For tests and benchmarks: makes MatMul take `path`, one of Q8MatMulPaths() (false, and no
// change, for any other name); an empty name restores the run-time choice. Not for use while a
// product is running.
bool ForceQ8MatMulPath(std::string_view path);

}  // namespace mineru::ops
