// SPDX-License-Identifier: Apache-2.0
// Normalisations, activations, rotary embedding, softmax and row gathers. All float32;
// rows of x have stride ld (elements). Each has a scalar twin in ops/reference.h.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"
#include "ops/matrix.h"

namespace mineru::ops {

// y = weight * (x / sqrt(mean(x^2) + eps)), per row of `dim` values.
void RmsNorm(ThreadPool& pool, const float* x, int64_t rows, int64_t dim, int64_t ldx,
             const float* weight, float eps, float* y, int64_t ldy);

// y = (x - mean) / sqrt(var + eps) * weight + bias, biased variance, per row.
void LayerNorm(ThreadPool& pool, const float* x, int64_t rows, int64_t dim, int64_t ldx,
               const float* weight, const float* bias, float eps, float* y, int64_t ldy);

// In place over n contiguous values: x * sigmoid(1.702 x).
void QuickGelu(ThreadPool& pool, float* x, int64_t n);
// In place: 0.5 x (1 + erf(x / sqrt(2))) (the exact, not the tanh, GELU).
void GeluErf(ThreadPool& pool, float* x, int64_t n);
// gate = silu(gate) * up over n values (SwiGLU), silu(z) = z * sigmoid(z).
void SiluMul(ThreadPool& pool, float* gate, const float* up, int64_t n);
// SwiGLU on rows holding [gate | up] (2n values, row stride ldx): x[r, j] = silu(x[r, j]) *
// x[r, n + j] for j < n, in place in the first half. Each element gets SiluMul's arithmetic.
void SiluMulRows(ThreadPool& pool, float* x, int64_t rows, int64_t n, int64_t ldx);

// Rotate-half rotary embedding in place on `heads` heads of `head_dim` values per row
// (head h at column h * head_dim). cos/sin hold head_dim / 2 values per row (row stride
// head_dim / 2); element j pairs with j + head_dim / 2:
//   x'[j] = x[j] cos[j] - x[j + half] sin[j],  x'[j + half] = x[j + half] cos[j] + x[j] sin[j].
void RopeRotateHalf(ThreadPool& pool, float* x, int64_t rows, int64_t ldx, int heads, int head_dim,
                    const float* cos, const float* sin);

// Row-wise softmax in place: exp(x - max) / sum.
void Softmax(ThreadPool& pool, float* x, int64_t rows, int64_t n, int64_t ld);

// y[i, :] = table[ids[i], :] widened to float32. Ids must be < table.rows (callers validate).
void GatherRows(ThreadPool& pool, const MatrixView& table, const int32_t* ids, int64_t n, float* y,
                int64_t ldy);

// Index of the largest value; ties go to the lowest index (torch.argmax's rule). NaN never wins.
int64_t ArgMax(const float* x, int64_t n);

}  // namespace mineru::ops
