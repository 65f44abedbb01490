// SPDX-License-Identifier: Apache-2.0
// Dense products with weights in their stored dtype (bf16, f16 or f32); arithmetic in float32.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"
#include "ops/matrix.h"

namespace mineru::ops {

// y[i, j] = (accumulate ? y[i, j] : 0) + sum_k x[i, k] * w[j, k] + (bias ? bias[j] : 0)
// for i < m, j < w.rows, k < w.cols. x has row stride ldx, y row stride ldy (in elements);
// y must not alias x. Weights are read in place and widened to float32 exactly; every product
// and sum is float32 with fused multiply-add.
//
// Few rows (decode) stream each weight row once for all of x; many rows (prefill, vision) run a
// packed, register-blocked kernel. The result never depends on the thread count.
void MatMul(ThreadPool& pool, const float* x, int64_t m, int64_t ldx, const MatrixView& w,
            const float* bias, float* y, int64_t ldy, bool accumulate);

// Rows up to this count take the streaming path (exposed for tests and benchmarks).
inline constexpr int64_t kMatMulStreamingMaxRows = 8;

}  // namespace mineru::ops
