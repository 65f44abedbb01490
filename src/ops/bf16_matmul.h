// SPDX-License-Identifier: Apache-2.0
// The bf16 matrix product: float32 activations rounded to bfloat16, times bfloat16 weights read
// in place — row-major, straight from the checkpoint mapping — with float32 accumulation
// (AVX-512 BF16 `vdpbf16ps` where the CPU has it, the same arithmetic in portable code
// elsewhere). No packed copy of the weights exists: a process holds the mapping and nothing more.
//
// Arithmetic of every output (i, j), the same whatever m, the tiling or the thread count (so the
// product is batch invariant, like the float32 one of ops/packed_matrix.h):
//   a[k] = bf16(x[i, k]), round to nearest even (base/dtype.h F32ToBf16); b[k] = w[j, k];
//   K is padded with zeros to a multiple of 32.
//   16 lanes, l = 0..15, each start at +0.0f; for each chunk c of 32 depths, ascending:
//     acc[l] = acc[l] + a[32c + 2l + 1] * b[32c + 2l + 1]
//     acc[l] = acc[l] + a[32c + 2l] * b[32c + 2l]
//   (each product of two bf16 values is exact in float32; each addition rounds to nearest
//   even; inputs and results below FLT_MIN count as zero: the instruction's DAZ/FTZ).
//   Then a fixed tree: h[l] = acc[l] + acc[l + 8] (l < 8); q[l] = h[l] + h[l + 4] (l < 4);
//   s0 = q[0] + q[2], s1 = q[1] + q[3]; dot = s0 + s1.
//   y[i, j] = accumulate ? y[i, j] + (dot + bias_j) : dot + bias_j   (bias_j = 0 when null).
// reference::MatMulBf16 is the scalar twin. CPUs implement vdpbf16ps's two additions as
// specified above to within their own rounding choices (the order is architectural, the
// intermediate rounding of one vendor may differ), so tests hold the kernel to the twin within a
// derived bound and to itself bit for bit across batch sizes.
#pragma once

#include <cstdint>
#include <span>

#include "base/thread_pool.h"
#include "ops/matrix.h"

namespace mineru::ops {

// Rows of one weight matrix as bf16, possibly the row-concatenation of several views (q, k and
// v rows as one matrix): row j of the whole is row j - begin of the part holding it.
struct Bf16RowPart {
  int64_t begin = 0;               // first row of the whole held by this part
  const uint16_t* data = nullptr;  // rows of `cols` bf16 values, contiguous
};

// Whether this CPU runs the product with vdpbf16ps (else the portable loop, ~20x slower).
bool Bf16DotIsNative();

// y = x * w^T (+ bias) as above, w being rows [0, n) of `parts` (ascending begin, the first 0),
// each row `k` bf16 values. x has row stride ldx, y row stride ldy; y must not alias x.
void MatMulBf16(ThreadPool& pool, const float* x, int64_t m, int64_t ldx,
                std::span<const Bf16RowPart> parts, int64_t n, int64_t k, const float* bias,
                float* y, int64_t ldy, bool accumulate);

// Makes the product use the portable loop even where vdpbf16ps exists (tests and benchmarks;
// not thread-safe with products running).
void ForceBf16Portable(bool portable);

}  // namespace mineru::ops
