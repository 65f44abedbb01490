// SPDX-License-Identifier: Apache-2.0
// Scalar twins of every optimized kernel: plain loops in the order the formula is written,
// accumulating in double where a sum is long. Tests compare each kernel against its twin.
#pragma once

#include <cstdint>
#include <span>

#include "ops/attention.h"
#include "ops/bf16_attention.h"
#include "ops/matrix.h"

namespace mineru::ops::reference {

float LoadElement(const MatrixView& w, int64_t r, int64_t c);

// The product in double precision: the accuracy yardstick for MatMulBlocked's float32 order.
void MatMul(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
            float* y, int64_t ldy, bool accumulate);
// The exact contract of MatMul over a PackedMatrix (ops/packed_matrix.h), literally: float32
// std::fma chains over each depth block of kPackedDepthBlock, added to y block by block.
void MatMulBlocked(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
                   float* y, int64_t ldy, bool accumulate);
// One output of the bf16 product, exactly as ops/bf16_matmul.h specifies it: a holds kp bf16
// activations (kp a multiple of 32, zero past the row's depth), w k bf16 weights (k <= kp;
// zero beyond). 16 lanes of vdpbf16ps's two rounded additions with DAZ/FTZ, then the tree.
float Bf16Dot(const uint16_t* a, const uint16_t* w, int64_t k, int64_t kp);
// The bf16 product's contract over a bf16 MatrixView: x rounded to bf16, then Bf16Dot.
void MatMulBf16(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
                float* y, int64_t ldy, bool accumulate);
// The exact contract of MatMul over a Q8Matrix (ops/q8_matrix.h), literally: each weight row
// and each row of x quantized per group of kQ8Group, int32 dot products per group, one float32
// std::fma per group in ascending order, then the bias and y.
void MatMulQ8(const float* x, int64_t m, int64_t ldx, const MatrixView& w, const float* bias,
              float* y, int64_t ldy, bool accumulate);
void RmsNorm(const float* x, int64_t rows, int64_t dim, int64_t ldx, const float* weight, float eps,
             float* y, int64_t ldy);
void LayerNorm(const float* x, int64_t rows, int64_t dim, int64_t ldx, const float* weight,
               const float* bias, float eps, float* y, int64_t ldy);
void QuickGelu(float* x, int64_t n);
void GeluErf(float* x, int64_t n);
void SiluMul(float* gate, const float* up, int64_t n);
// SiluMul on each row's [gate | up] halves (2n values, row stride ldx), in place in the gate half.
void SiluMulRows(float* x, int64_t rows, int64_t n, int64_t ldx);
void RopeRotateHalf(float* x, int64_t rows, int64_t ldx, int heads, int head_dim, const float* cos,
                    const float* sin);
void Softmax(float* x, int64_t rows, int64_t n, int64_t ld);
void GatherRows(const MatrixView& table, const int32_t* ids, int64_t n, float* y, int64_t ldy);

// PackKv's layout written element by element (ops/attention.h): key j of head h, dim c at
// k[(h * head_dim + c) * capacity + at + j]; its value at v[(h * capacity + at + j) *
// padded_head_dim + c], the padding dims zero.
void PackKv(const AttentionShape& shape, const float* k, int64_t ldk, const float* v, int64_t ldv,
            int64_t n, const MutableKvChunk& chunk, int64_t at);

// Attention from unpacked rows: k, v are [n_kv, n_kv_heads * head_dim]; full softmax per row.
void Attention(const AttentionShape& shape, const float* q, int64_t ldq, int64_t n_q,
               int64_t q_start, const float* k, int64_t ldk, const float* v, int64_t ldv,
               int64_t n_kv, float* out, int64_t ldo);

// The bf16 attention's inputs (ops/bf16_attention.h: q scaled then rounded to bf16, the packed
// bf16 keys and values) with the softmax and every sum in double and p not rounded: the
// accuracy yardstick for AttentionBf16, and its portable fallback.
void AttentionBf16(const AttentionShape& shape, const Bf16AttentionProblem& problem);

}  // namespace mineru::ops::reference
