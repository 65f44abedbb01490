// SPDX-License-Identifier: Apache-2.0
// Norms, activations, rotary embedding, softmax and gathers for every SIMD target.
// All are memory-bound: one pass (two for the norms) over the data, split over the pool by rows
// or by contiguous ranges.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/elementwise.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/elementwise.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::ops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr size_t kLanes = hn::MaxLanes(DF());

// Elementwise work is split into ranges of this many floats (256 KiB) per task.
constexpr size_t kElementsPerTask = 64 * 1024;

template <class Fn>
void ForRanges(ThreadPool& pool, size_t n, const Fn& fn) {
  const size_t tasks = (n + kElementsPerTask - 1) / kElementsPerTask;
  pool.ParallelFor(tasks, [&](size_t task, int) {
    const size_t begin = task * kElementsPerTask;
    fn(begin, std::min(n, begin + kElementsPerTask));
  });
}

// Rows per task so that each task touches roughly kElementsPerTask floats.
template <class Fn>
void ForRows(ThreadPool& pool, size_t rows, size_t row_elements, const Fn& fn) {
  const size_t per_task = std::max<size_t>(1, kElementsPerTask / std::max<size_t>(1, row_elements));
  const size_t tasks = (rows + per_task - 1) / per_task;
  pool.ParallelFor(tasks, [&](size_t task, int) {
    const size_t begin = task * per_task;
    const size_t end = std::min(rows, begin + per_task);
    for (size_t r = begin; r < end; ++r) fn(r);
  });
}

// Applies op(vector) over [begin, end) of x in place; the tail goes through one partial vector
// loaded from a zero-padded copy so that op sees whole vectors only. Every op here is lane-wise,
// so each element gets the identical vector arithmetic wherever range and array boundaries fall
// (batch invariance: a row's activations do not depend on the rows batched with it).
template <class Op>
HWY_INLINE void MapInPlace(float* HWY_RESTRICT x, size_t begin, size_t end, const Op& op) {
  const DF df;
  size_t i = begin;
  for (; i + kLanes <= end; i += kLanes) hn::StoreU(op(hn::LoadU(df, x + i)), df, x + i);
  if (i < end) {
    HWY_ALIGN float tail[kLanes] = {};
    std::memcpy(tail, x + i, (end - i) * sizeof(float));
    hn::Store(op(hn::Load(df, tail)), df, tail);
    std::memcpy(x + i, tail, (end - i) * sizeof(float));
  }
}

// x = op(x, y) over [begin, end), the tail like MapInPlace's.
template <class Op>
HWY_INLINE void Map2InPlace(float* HWY_RESTRICT x, const float* HWY_RESTRICT y, size_t begin,
                            size_t end, const Op& op) {
  const DF df;
  size_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
    hn::StoreU(op(hn::LoadU(df, x + i), hn::LoadU(df, y + i)), df, x + i);
  }
  if (i < end) {
    HWY_ALIGN float tail_x[kLanes] = {};
    HWY_ALIGN float tail_y[kLanes] = {};
    std::memcpy(tail_x, x + i, (end - i) * sizeof(float));
    std::memcpy(tail_y, y + i, (end - i) * sizeof(float));
    hn::Store(op(hn::Load(df, tail_x), hn::Load(df, tail_y)), df, tail_x);
    std::memcpy(x + i, tail_x, (end - i) * sizeof(float));
  }
}

HWY_INLINE float SumOfSquares(const float* HWY_RESTRICT x, size_t n) {
  const DF df;
  VF acc0 = hn::Zero(df), acc1 = hn::Zero(df);
  size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const VF a = hn::LoadU(df, x + i), b = hn::LoadU(df, x + i + kLanes);
    acc0 = hn::MulAdd(a, a, acc0);
    acc1 = hn::MulAdd(b, b, acc1);
  }
  for (; i + kLanes <= n; i += kLanes) {
    const VF a = hn::LoadU(df, x + i);
    acc0 = hn::MulAdd(a, a, acc0);
  }
  float sum = hn::GetLane(hn::SumOfLanes(df, hn::Add(acc0, acc1)));
  for (; i < n; ++i) sum += x[i] * x[i];
  return sum;
}

void RmsNormImpl(ThreadPool* pool, const float* x, int64_t rows, int64_t dim, int64_t ldx,
                 const float* weight, float eps, float* y, int64_t ldy) {
  const size_t d = static_cast<size_t>(dim);
  ForRows(*pool, static_cast<size_t>(rows), d, [&](size_t r) {
    const float* xr = x + r * static_cast<size_t>(ldx);
    float* yr = y + r * static_cast<size_t>(ldy);
    const float inv = 1.0f / std::sqrt(SumOfSquares(xr, d) / static_cast<float>(d) + eps);
    const DF df;
    const VF vinv = hn::Set(df, inv);
    size_t c = 0;
    for (; c + kLanes <= d; c += kLanes) {
      hn::StoreU(hn::Mul(hn::LoadU(df, weight + c), hn::Mul(hn::LoadU(df, xr + c), vinv)), df,
                 yr + c);
    }
    for (; c < d; ++c) yr[c] = weight[c] * (xr[c] * inv);
  });
}

void LayerNormImpl(ThreadPool* pool, const float* x, int64_t rows, int64_t dim, int64_t ldx,
                   const float* weight, const float* bias, float eps, float* y, int64_t ldy) {
  const size_t d = static_cast<size_t>(dim);
  ForRows(*pool, static_cast<size_t>(rows), d, [&](size_t r) {
    const float* xr = x + r * static_cast<size_t>(ldx);
    float* yr = y + r * static_cast<size_t>(ldy);
    const DF df;
    // Two passes (mean, then centred squares): no cancellation for rows with a large mean.
    VF acc = hn::Zero(df);
    size_t c = 0;
    for (; c + kLanes <= d; c += kLanes) acc = hn::Add(acc, hn::LoadU(df, xr + c));
    float sum = hn::GetLane(hn::SumOfLanes(df, acc));
    for (; c < d; ++c) sum += xr[c];
    const float mean = sum / static_cast<float>(d);
    const VF vmean = hn::Set(df, mean);
    acc = hn::Zero(df);
    for (c = 0; c + kLanes <= d; c += kLanes) {
      const VF centred = hn::Sub(hn::LoadU(df, xr + c), vmean);
      acc = hn::MulAdd(centred, centred, acc);
    }
    float var = hn::GetLane(hn::SumOfLanes(df, acc));
    for (; c < d; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    const float inv = 1.0f / std::sqrt(var / static_cast<float>(d) + eps);
    const VF vinv = hn::Set(df, inv);
    for (c = 0; c + kLanes <= d; c += kLanes) {
      const VF normed = hn::Mul(hn::Sub(hn::LoadU(df, xr + c), vmean), vinv);
      hn::StoreU(hn::MulAdd(normed, hn::LoadU(df, weight + c), hn::LoadU(df, bias + c)), df,
                 yr + c);
    }
    for (; c < d; ++c) yr[c] = (xr[c] - mean) * inv * weight[c] + bias[c];
  });
}

// sigmoid(z) = 1 / (1 + exp(-z)); exp's argument is clamped so that exp never overflows
// (sigmoid is 0 to float precision below -88 anyway).
HWY_INLINE VF Sigmoid(DF df, VF z) {
  const VF neg = hn::Min(hn::Neg(z), hn::Set(df, 88.0f));
  return hn::Div(hn::Set(df, 1.0f), hn::Add(hn::Set(df, 1.0f), hn::Exp(df, neg)));
}

void QuickGeluImpl(ThreadPool* pool, float* x, int64_t n) {
  ForRanges(*pool, static_cast<size_t>(n), [&](size_t begin, size_t end) {
    const DF df;
    const VF k = hn::Set(df, 1.702f);
    MapInPlace(x, begin, end, [&](VF v) { return hn::Mul(v, Sigmoid(df, hn::Mul(k, v))); });
  });
}

// erf(x) for float32: odd rational minimax approximation on [-4, 4] (erf(+-4) = +-1 to float
// precision), max error about 2 ulp. x * P(x^2) / Q(x^2).
HWY_INLINE VF Erf(DF df, VF x) {
  x = hn::Min(hn::Max(x, hn::Set(df, -4.0f)), hn::Set(df, 4.0f));
  const VF x2 = hn::Mul(x, x);
  VF p = hn::Set(df, -2.72614225801306e-10f);
  p = hn::MulAdd(p, x2, hn::Set(df, 2.77068142495902e-08f));
  p = hn::MulAdd(p, x2, hn::Set(df, -2.10102402082508e-06f));
  p = hn::MulAdd(p, x2, hn::Set(df, -5.69250639462346e-05f));
  p = hn::MulAdd(p, x2, hn::Set(df, -7.34990630326855e-04f));
  p = hn::MulAdd(p, x2, hn::Set(df, -2.95459980854025e-03f));
  p = hn::MulAdd(p, x2, hn::Set(df, -1.60960333262415e-02f));
  p = hn::Mul(p, x);
  VF q = hn::Set(df, -1.45660718464996e-05f);
  q = hn::MulAdd(q, x2, hn::Set(df, -2.13374055278905e-04f));
  q = hn::MulAdd(q, x2, hn::Set(df, -1.68282697438203e-03f));
  q = hn::MulAdd(q, x2, hn::Set(df, -7.37332916720468e-03f));
  q = hn::MulAdd(q, x2, hn::Set(df, -1.42647390514189e-02f));
  return hn::Div(p, q);
}

void GeluErfImpl(ThreadPool* pool, float* x, int64_t n) {
  ForRanges(*pool, static_cast<size_t>(n), [&](size_t begin, size_t end) {
    const DF df;
    const VF half = hn::Set(df, 0.5f);
    const VF one = hn::Set(df, 1.0f);
    const VF inv_sqrt2 = hn::Set(df, 0.70710678118654752f);
    MapInPlace(x, begin, end, [&](VF v) {
      return hn::Mul(hn::Mul(half, v), hn::Add(one, Erf(df, hn::Mul(v, inv_sqrt2))));
    });
  });
}

void SiluMulImpl(ThreadPool* pool, float* gate, const float* up, int64_t n) {
  ForRanges(*pool, static_cast<size_t>(n), [&](size_t begin, size_t end) {
    const DF df;
    Map2InPlace(gate, up, begin, end,
                [&](VF g, VF u) { return hn::Mul(hn::Mul(g, Sigmoid(df, g)), u); });
  });
}

void SiluMulRowsImpl(ThreadPool* pool, float* x, int64_t rows, int64_t n, int64_t ldx) {
  ForRows(*pool, static_cast<size_t>(rows), 2 * static_cast<size_t>(n), [&](size_t r) {
    const DF df;
    float* row = x + r * static_cast<size_t>(ldx);
    Map2InPlace(row, row + n, 0, static_cast<size_t>(n),
                [&](VF g, VF u) { return hn::Mul(hn::Mul(g, Sigmoid(df, g)), u); });
  });
}

void RopeRotateHalfImpl(ThreadPool* pool, float* x, int64_t rows, int64_t ldx, int heads,
                        int head_dim, const float* cos, const float* sin) {
  const size_t half = static_cast<size_t>(head_dim / 2);
  ForRows(*pool, static_cast<size_t>(rows), static_cast<size_t>(heads) * head_dim, [&](size_t r) {
    const float* cr = cos + r * half;
    const float* sr = sin + r * half;
    const DF df;
    for (int h = 0; h < heads; ++h) {
      float* a = x + r * static_cast<size_t>(ldx) + static_cast<size_t>(h) * head_dim;
      float* b = a + half;
      size_t j = 0;
      for (; j + kLanes <= half; j += kLanes) {
        const VF va = hn::LoadU(df, a + j), vb = hn::LoadU(df, b + j);
        const VF vc = hn::LoadU(df, cr + j), vs = hn::LoadU(df, sr + j);
        hn::StoreU(hn::NegMulAdd(vb, vs, hn::Mul(va, vc)), df, a + j);
        hn::StoreU(hn::MulAdd(va, vs, hn::Mul(vb, vc)), df, b + j);
      }
      for (; j < half; ++j) {
        const float va = a[j], vb = b[j];
        a[j] = va * cr[j] - vb * sr[j];
        b[j] = vb * cr[j] + va * sr[j];
      }
    }
  });
}

void SoftmaxImpl(ThreadPool* pool, float* x, int64_t rows, int64_t n, int64_t ld) {
  const size_t len = static_cast<size_t>(n);
  ForRows(*pool, static_cast<size_t>(rows), len, [&](size_t r) {
    float* row = x + r * static_cast<size_t>(ld);
    float max = -INFINITY;
    for (size_t i = 0; i < len; ++i) max = std::max(max, row[i]);
    const DF df;
    const VF vmax = hn::Set(df, max);
    VF acc = hn::Zero(df);
    size_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      const VF e = hn::Exp(df, hn::Sub(hn::LoadU(df, row + i), vmax));
      hn::StoreU(e, df, row + i);
      acc = hn::Add(acc, e);
    }
    float sum = hn::GetLane(hn::SumOfLanes(df, acc));
    for (; i < len; ++i) {
      row[i] = std::exp(row[i] - max);
      sum += row[i];
    }
    const VF vinv = hn::Set(df, 1.0f / sum);
    for (i = 0; i + kLanes <= len; i += kLanes) {
      hn::StoreU(hn::Mul(hn::LoadU(df, row + i), vinv), df, row + i);
    }
    for (; i < len; ++i) row[i] *= 1.0f / sum;
  });
}

template <class TW>
void GatherTyped(ThreadPool& pool, const MatrixView& table, const int32_t* ids, size_t n, float* y,
                 size_t ldy) {
  const size_t cols = static_cast<size_t>(table.cols);
  ForRows(pool, n, cols, [&](size_t i) {
    const TW* src = static_cast<const TW*>(table.data) + static_cast<size_t>(ids[i]) * cols;
    float* dst = y + i * ldy;
    const DF df;
    size_t c = 0;
    for (; c + kLanes <= cols; c += kLanes) {
      if constexpr (std::is_same_v<TW, float>) {
        hn::StoreU(hn::LoadU(df, src + c), df, dst + c);
      } else {
        const hn::Rebind<TW, DF> dw;
        hn::StoreU(hn::PromoteTo(df, hn::LoadU(dw, src + c)), df, dst + c);
      }
    }
    for (; c < cols; ++c) {
      uint16_t bits = 0;
      if constexpr (std::is_same_v<TW, float>) {
        dst[c] = src[c];
      } else if constexpr (std::is_same_v<TW, hwy::bfloat16_t>) {
        std::memcpy(&bits, src + c, 2);
        dst[c] = Bf16ToF32(bits);
      } else {
        std::memcpy(&bits, src + c, 2);
        dst[c] = F16ToF32(bits);
      }
    }
  });
}

void GatherRowsImpl(ThreadPool* pool, const MatrixView* table, const int32_t* ids, int64_t n,
                    float* y, int64_t ldy) {
  const auto count = static_cast<size_t>(n);
  const auto ly = static_cast<size_t>(ldy);
  switch (table->dtype) {
    case DType::kBF16:
      return GatherTyped<hwy::bfloat16_t>(*pool, *table, ids, count, y, ly);
    case DType::kF16:
      return GatherTyped<hwy::float16_t>(*pool, *table, ids, count, y, ly);
    default:
      return GatherTyped<float>(*pool, *table, ids, count, y, ly);
  }
}

}  // namespace mineru::ops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru::ops {

HWY_EXPORT(RmsNormImpl);
HWY_EXPORT(LayerNormImpl);
HWY_EXPORT(QuickGeluImpl);
HWY_EXPORT(GeluErfImpl);
HWY_EXPORT(SiluMulImpl);
HWY_EXPORT(SiluMulRowsImpl);
HWY_EXPORT(RopeRotateHalfImpl);
HWY_EXPORT(SoftmaxImpl);
HWY_EXPORT(GatherRowsImpl);

void RmsNorm(ThreadPool& pool, const float* x, int64_t rows, int64_t dim, int64_t ldx,
             const float* weight, float eps, float* y, int64_t ldy) {
  HWY_DYNAMIC_DISPATCH(RmsNormImpl)(&pool, x, rows, dim, ldx, weight, eps, y, ldy);
}

void LayerNorm(ThreadPool& pool, const float* x, int64_t rows, int64_t dim, int64_t ldx,
               const float* weight, const float* bias, float eps, float* y, int64_t ldy) {
  HWY_DYNAMIC_DISPATCH(LayerNormImpl)(&pool, x, rows, dim, ldx, weight, bias, eps, y, ldy);
}

void QuickGelu(ThreadPool& pool, float* x, int64_t n) {
  HWY_DYNAMIC_DISPATCH(QuickGeluImpl)(&pool, x, n);
}

void GeluErf(ThreadPool& pool, float* x, int64_t n) {
  HWY_DYNAMIC_DISPATCH(GeluErfImpl)(&pool, x, n);
}

void SiluMul(ThreadPool& pool, float* gate, const float* up, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SiluMulImpl)(&pool, gate, up, n);
}

void SiluMulRows(ThreadPool& pool, float* x, int64_t rows, int64_t n, int64_t ldx) {
  HWY_DYNAMIC_DISPATCH(SiluMulRowsImpl)(&pool, x, rows, n, ldx);
}

void RopeRotateHalf(ThreadPool& pool, float* x, int64_t rows, int64_t ldx, int heads, int head_dim,
                    const float* cos, const float* sin) {
  HWY_DYNAMIC_DISPATCH(RopeRotateHalfImpl)(&pool, x, rows, ldx, heads, head_dim, cos, sin);
}

void Softmax(ThreadPool& pool, float* x, int64_t rows, int64_t n, int64_t ld) {
  HWY_DYNAMIC_DISPATCH(SoftmaxImpl)(&pool, x, rows, n, ld);
}

void GatherRows(ThreadPool& pool, const MatrixView& table, const int32_t* ids, int64_t n, float* y,
                int64_t ldy) {
  MINERU_CHECK(IsKernelDType(table.dtype), "GatherRows: dtype {}", DTypeName(table.dtype));
  HWY_DYNAMIC_DISPATCH(GatherRowsImpl)(&pool, &table, ids, n, y, ldy);
}

int64_t ArgMax(const float* x, int64_t n) {
  int64_t best = 0;
  float best_value = -INFINITY;
  bool found = false;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] > best_value || (!found && !std::isnan(x[i]))) {
      best = i;
      best_value = x[i];
      found = true;
    }
  }
  return best;
}

}  // namespace mineru::ops
#endif  // HWY_ONCE
