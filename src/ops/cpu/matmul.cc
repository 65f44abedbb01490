// SPDX-License-Identifier: Apache-2.0
// MatMul for every SIMD target (Highway dynamic dispatch).
//
// Many rows: the Goto/BLIS scheme. Weights are packed per (column block, depth block) into
// float32 panels of kNR output columns ([k][kNR]); activations are packed per row block into
// panels of kMR rows ([k][kMR]); a register-blocked kernel keeps a kMR x kNR tile of sums in
// registers and does kMR * 2 fused multiply-adds per depth step from 2 vector loads and kMR
// broadcasts. Packing costs O(n * k) per column block and is amortised over all m rows.
//
// Few rows (decode): every weight row is streamed once, widened in registers and dotted with
// all rows of x; the product is bounded by memory bandwidth, not arithmetic.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/matmul.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "ops/matmul.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::ops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Targets with 32 vector registers hold a 12 x 2-vector tile (24 accumulators); 16-register
// targets a 6 x 2-vector tile (12 accumulators). Both leave room for the 2 loaded weight
// vectors and a broadcast.
#undef MINERU_FOR_ROWS
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_ARCH_ARM_A64
constexpr size_t kMR = 12;
constexpr size_t kStreamRowsPerPass = 4;
#define MINERU_FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#else
constexpr size_t kMR = 6;
constexpr size_t kStreamRowsPerPass = 2;
#define MINERU_FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#endif
constexpr size_t kLanes = hn::MaxLanes(DF());
constexpr size_t kNR = 2 * kLanes;
// Depth block: a kMR x kKC activation panel (12 KiB on AVX-512) and a kKC x kNR weight panel
// (32 KiB) stay in L1 while the kernel runs; kNC columns of packed weights (512 KiB) in L2.
constexpr size_t kKC = 1024;
constexpr size_t kNC = 512;
// Rows of x per task (a multiple of kMR): the kernel sweeps them for each weight panel.
constexpr size_t kMC = kMR * 8;

template <class TW>
HWY_INLINE VF LoadWeights(DF df, const TW* HWY_RESTRICT p) {
  if constexpr (std::is_same_v<TW, float>) {
    return hn::LoadU(df, p);
  } else {
    const hn::Rebind<TW, DF> dw;
    return hn::PromoteTo(df, hn::LoadU(dw, p));
  }
}

template <class TW>
HWY_INLINE float LoadWeight(const TW* p) {
  if constexpr (std::is_same_v<TW, float>) {
    return *p;
  } else if constexpr (std::is_same_v<TW, hwy::bfloat16_t>) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return Bf16ToF32(bits);
  } else {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return F16ToF32(bits);
  }
}

// Widens w[row, k0 .. k0 + kc) to float32.
template <class TW>
HWY_INLINE void WidenRow(const TW* HWY_RESTRICT src, size_t kc, float* HWY_RESTRICT dst) {
  const DF df;
  size_t k = 0;
  for (; k + kLanes <= kc; k += kLanes) hn::StoreU(LoadWeights(df, src + k), df, dst + k);
  for (; k < kc; ++k) dst[k] = LoadWeight(src + k);
}

// Packs weight rows [n0, n0 + nr) x depth [k0, k0 + kc) into a [kc][kNR] panel, zero-filling
// columns nr .. kNR.
template <class TW>
void PackWeightPanel(const MatrixView& w, size_t n0, size_t nr, size_t k0, size_t kc,
                     float* HWY_RESTRICT panel) {
  HWY_ALIGN float row[kKC];
  const TW* base = static_cast<const TW*>(w.data);
  for (size_t j = 0; j < kNR; ++j) {
    if (j < nr) {
      WidenRow(base + (n0 + j) * static_cast<size_t>(w.cols) + k0, kc, row);
      for (size_t k = 0; k < kc; ++k) panel[k * kNR + j] = row[k];
    } else {
      for (size_t k = 0; k < kc; ++k) panel[k * kNR + j] = 0.0f;
    }
  }
}

// Packs rows [i0, i0 + mr) x depth [k0, k0 + kc) of x into a [kc][kMR] panel (rows past mr 0).
void PackActivationPanel(const float* HWY_RESTRICT x, size_t ldx, size_t i0, size_t mr, size_t k0,
                         size_t kc, float* HWY_RESTRICT panel) {
  for (size_t r = 0; r < kMR; ++r) {
    if (r < mr) {
      const float* src = x + (i0 + r) * ldx + k0;
      for (size_t k = 0; k < kc; ++k) panel[k * kMR + r] = src[k];
    } else {
      for (size_t k = 0; k < kc; ++k) panel[k * kMR + r] = 0.0f;
    }
  }
}

// acc = A_panel . B_panel over kc; then C = (load_c ? C : 0) + acc (+ bias) for the valid
// mr x nr corner of the tile. The 2 * kMR accumulators are named variables (not an array) so
// the compiler keeps every one in a register.
HWY_NOINLINE void MicroKernel(size_t kc, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                              float* HWY_RESTRICT c, size_t ldc, size_t mr, size_t nr, bool load_c,
                              const float* HWY_RESTRICT bias) {
  const DF df;
#define MINERU_DECLARE(r) VF acc##r##_0 = hn::Zero(df), acc##r##_1 = hn::Zero(df);
#define MINERU_FMA(r)                            \
  {                                              \
    const VF av = hn::Set(df, ak[r]);            \
    acc##r##_0 = hn::MulAdd(av, b0, acc##r##_0); \
    acc##r##_1 = hn::MulAdd(av, b1, acc##r##_1); \
  }
#define MINERU_STORE(r)                      \
  hn::Store(acc##r##_0, df, tile + (r)*kNR); \
  hn::Store(acc##r##_1, df, tile + (r)*kNR + kLanes);
  MINERU_FOR_ROWS(MINERU_DECLARE)
  for (size_t k = 0; k < kc; ++k) {
    const VF b0 = hn::Load(df, b + k * kNR);
    const VF b1 = hn::Load(df, b + k * kNR + kLanes);
    const float* ak = a + k * kMR;
    MINERU_FOR_ROWS(MINERU_FMA)
  }
  HWY_ALIGN float tile[kMR * kNR];
  MINERU_FOR_ROWS(MINERU_STORE)
#undef MINERU_DECLARE
#undef MINERU_FMA
#undef MINERU_STORE
  if (mr == kMR && nr == kNR) {
    const VF bias0 = bias ? hn::LoadU(df, bias) : hn::Zero(df);
    const VF bias1 = bias ? hn::LoadU(df, bias + kLanes) : hn::Zero(df);
    for (size_t r = 0; r < kMR; ++r) {
      float* cr = c + r * ldc;
      VF out0 = hn::Add(hn::Load(df, tile + r * kNR), bias0);
      VF out1 = hn::Add(hn::Load(df, tile + r * kNR + kLanes), bias1);
      if (load_c) {
        out0 = hn::Add(hn::LoadU(df, cr), out0);
        out1 = hn::Add(hn::LoadU(df, cr + kLanes), out1);
      }
      hn::StoreU(out0, df, cr);
      hn::StoreU(out1, df, cr + kLanes);
    }
    return;
  }
  for (size_t r = 0; r < mr; ++r) {
    for (size_t j = 0; j < nr; ++j) {
      float value = tile[r * kNR + j] + (bias ? bias[j] : 0.0f);
      if (load_c) value = c[r * ldc + j] + value;
      c[r * ldc + j] = value;
    }
  }
}

template <class TW>
void MatMulPacked(ThreadPool& pool, const float* x, size_t m, size_t ldx, const MatrixView& w,
                  const float* bias, float* y, size_t ldy, bool accumulate) {
  const size_t n = static_cast<size_t>(w.rows);
  const size_t k_total = static_cast<size_t>(w.cols);
  const size_t num_threads = static_cast<size_t>(pool.num_threads());
  const size_t row_panels = (m + kMR - 1) / kMR;
  const size_t row_blocks = (m + kMC - 1) / kMC;
  auto weight_panels = hwy::AllocateAligned<float>(kKC * kNC);
  // All rows of x for one depth block, packed once and reused by every column block.
  auto act_panels = hwy::AllocateAligned<float>(row_panels * kKC * kMR);

  for (size_t k0 = 0; k0 < k_total; k0 += kKC) {
    const size_t kc = std::min(kKC, k_total - k0);
    const bool first = k0 == 0;
    pool.ParallelFor((row_panels + 7) / 8, [&](size_t task, int) {
      for (size_t rp = task * 8; rp < std::min(row_panels, task * 8 + 8); ++rp) {
        PackActivationPanel(x, ldx, rp * kMR, std::min(kMR, m - rp * kMR), k0, kc,
                            act_panels.get() + rp * kKC * kMR);
      }
    });
    for (size_t j0 = 0; j0 < n; j0 += kNC) {
      const size_t nc = std::min(kNC, n - j0);
      const size_t panels = (nc + kNR - 1) / kNR;
      // With few row blocks, split the columns too so every thread has work.
      const size_t col_splits =
          std::min(panels, std::max<size_t>(1, (2 * num_threads + row_blocks - 1) / row_blocks));
      const size_t panels_per_split = (panels + col_splits - 1) / col_splits;
      pool.ParallelFor(panels, [&](size_t p, int) {
        const size_t nr = std::min(kNR, nc - p * kNR);
        PackWeightPanel<TW>(w, j0 + p * kNR, nr, k0, kc, weight_panels.get() + p * kKC * kNR);
      });
      pool.ParallelFor(row_blocks * col_splits, [&](size_t task, int) {
        const size_t i0 = (task / col_splits) * kMC;
        const size_t mc = std::min(kMC, m - i0);
        const size_t p_begin = (task % col_splits) * panels_per_split;
        const size_t p_end = std::min(panels, p_begin + panels_per_split);
        for (size_t p = p_begin; p < p_end; ++p) {
          const size_t col = j0 + p * kNR;
          const size_t nr = std::min(kNR, nc - p * kNR);
          const float* panel = weight_panels.get() + p * kKC * kNR;
          for (size_t r0 = 0; r0 < mc; r0 += kMR) {
            MicroKernel(kc, act_panels.get() + ((i0 + r0) / kMR) * kKC * kMR, panel,
                        y + (i0 + r0) * ldy + col, ldy, std::min(kMR, mc - r0), nr,
                        accumulate || !first, first && bias ? bias + col : nullptr);
          }
        }
      });
    }
  }
}

// Dot products of kStreamRowsPerPass rows of x with 4 weight rows at a time.
template <class TW, size_t kRows>
HWY_INLINE void StreamBlock(const float* HWY_RESTRICT x, size_t ldx, const TW* HWY_RESTRICT w,
                            size_t k_total, float* sums /* [kRows][4] */) {
  const DF df;
  VF acc[kRows][4];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < 4; ++j) acc[r][j] = hn::Zero(df);
  }
  size_t k = 0;
  for (; k + kLanes <= k_total; k += kLanes) {
    VF wv[4];
    for (size_t j = 0; j < 4; ++j) wv[j] = LoadWeights(df, w + j * k_total + k);
    for (size_t r = 0; r < kRows; ++r) {
      const VF xv = hn::LoadU(df, x + r * ldx + k);
      for (size_t j = 0; j < 4; ++j) acc[r][j] = hn::MulAdd(xv, wv[j], acc[r][j]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < 4; ++j) {
      float sum = hn::GetLane(hn::SumOfLanes(df, acc[r][j]));
      for (size_t kk = k; kk < k_total; ++kk)
        sum += x[r * ldx + kk] * LoadWeight(w + j * k_total + kk);
      sums[r * 4 + j] = sum;
    }
  }
}

// One row of x against weight rows [j_begin, j_end), each row read front to back (a purely
// sequential stream for the prefetchers, helped by a software prefetch), 4 independent partial
// sums per row. Batch-1 decode spends nearly all its time here.
template <class TW>
HWY_INLINE void StreamOneRow(const float* HWY_RESTRICT x, const TW* HWY_RESTRICT w, size_t k_total,
                             size_t j_begin, size_t j_end, const float* bias, float* HWY_RESTRICT y,
                             bool accumulate) {
  const DF df;
  for (size_t j = j_begin; j < j_end; ++j) {
    const TW* wr = w + j * k_total;
    VF a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
    size_t k = 0;
    for (; k + 4 * kLanes <= k_total; k += 4 * kLanes) {
      // Each step reads 4 vectors of weights; fetch the lines 1024 elements ahead.
      hwy::Prefetch(wr + k + 1024);
      hwy::Prefetch(wr + k + 1024 + 2 * kLanes);
      a0 = hn::MulAdd(hn::LoadU(df, x + k), LoadWeights(df, wr + k), a0);
      a1 = hn::MulAdd(hn::LoadU(df, x + k + kLanes), LoadWeights(df, wr + k + kLanes), a1);
      a2 = hn::MulAdd(hn::LoadU(df, x + k + 2 * kLanes), LoadWeights(df, wr + k + 2 * kLanes), a2);
      a3 = hn::MulAdd(hn::LoadU(df, x + k + 3 * kLanes), LoadWeights(df, wr + k + 3 * kLanes), a3);
    }
    for (; k + kLanes <= k_total; k += kLanes) {
      a0 = hn::MulAdd(hn::LoadU(df, x + k), LoadWeights(df, wr + k), a0);
    }
    float sum = hn::GetLane(hn::SumOfLanes(df, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
    for (; k < k_total; ++k) sum += x[k] * LoadWeight(wr + k);
    if (bias) sum += bias[j];
    y[j] = accumulate ? y[j] + sum : sum;
  }
}

template <class TW>
void MatMulStreaming(ThreadPool& pool, const float* x, size_t m, size_t ldx, const MatrixView& w,
                     const float* bias, float* y, size_t ldy, bool accumulate) {
  const size_t n = static_cast<size_t>(w.rows);
  const size_t k_total = static_cast<size_t>(w.cols);
  const TW* base = static_cast<const TW*>(w.data);
  // Long contiguous runs of weight rows per task (about 8 tasks per thread, each a multiple of
  // 4 rows): the hardware prefetchers ramp up once per run instead of once per small task.
  const size_t threads = static_cast<size_t>(pool.num_threads());
  const size_t kRowsPerTask =
      std::max<size_t>(4, (n + 8 * threads - 1) / (8 * threads) + 3) / 4 * 4;
  const size_t tasks = (n + kRowsPerTask - 1) / kRowsPerTask;
  pool.ParallelFor(tasks, [&](size_t task, int) {
    const size_t j_begin = task * kRowsPerTask;
    const size_t j_end = std::min(n, j_begin + kRowsPerTask);
    if (m == 1) return StreamOneRow(x, base, k_total, j_begin, j_end, bias, y, accumulate);
    for (size_t j0 = j_begin; j0 < j_end; j0 += 4) {
      const size_t nj = std::min<size_t>(4, j_end - j0);
      if (nj < 4) {  // tail: one weight row at a time through the scalar-safe path below
        for (size_t j = j0; j < j_end; ++j) {
          const TW* wr = base + j * k_total;
          for (size_t i = 0; i < m; ++i) {
            const DF df;
            VF acc = hn::Zero(df);
            size_t k = 0;
            for (; k + kLanes <= k_total; k += kLanes) {
              acc = hn::MulAdd(hn::LoadU(df, x + i * ldx + k), LoadWeights(df, wr + k), acc);
            }
            float sum = hn::GetLane(hn::SumOfLanes(df, acc));
            for (; k < k_total; ++k) sum += x[i * ldx + k] * LoadWeight(wr + k);
            if (bias) sum += bias[j];
            y[i * ldy + j] = accumulate ? y[i * ldy + j] + sum : sum;
          }
        }
        break;
      }
      float sums[kStreamRowsPerPass * 4];
      for (size_t i0 = 0; i0 < m; i0 += kStreamRowsPerPass) {
        const size_t rows = std::min(kStreamRowsPerPass, m - i0);
        const float* xr = x + i0 * ldx;
        const TW* wr = base + j0 * k_total;
        if (rows == kStreamRowsPerPass) {
          StreamBlock<TW, kStreamRowsPerPass>(xr, ldx, wr, k_total, sums);
        } else {
          for (size_t r = 0; r < rows; ++r)
            StreamBlock<TW, 1>(xr + r * ldx, ldx, wr, k_total, sums + r * 4);
        }
        for (size_t r = 0; r < rows; ++r) {
          for (size_t j = 0; j < 4; ++j) {
            float sum = sums[r * 4 + j] + (bias ? bias[j0 + j] : 0.0f);
            float& out = y[(i0 + r) * ldy + j0 + j];
            out = accumulate ? out + sum : sum;
          }
        }
      }
    }
  });
}

template <class TW>
void MatMulTyped(ThreadPool& pool, const float* x, size_t m, size_t ldx, const MatrixView& w,
                 const float* bias, float* y, size_t ldy, bool accumulate) {
  if (m <= static_cast<size_t>(kMatMulStreamingMaxRows)) {
    MatMulStreaming<TW>(pool, x, m, ldx, w, bias, y, ldy, accumulate);
  } else {
    MatMulPacked<TW>(pool, x, m, ldx, w, bias, y, ldy, accumulate);
  }
}

void MatMulImpl(ThreadPool* pool, const float* x, int64_t m, int64_t ldx, const MatrixView* w,
                const float* bias, float* y, int64_t ldy, bool accumulate) {
  const auto mm = static_cast<size_t>(m);
  const auto lx = static_cast<size_t>(ldx);
  const auto ly = static_cast<size_t>(ldy);
  switch (w->dtype) {
    case DType::kBF16:
      return MatMulTyped<hwy::bfloat16_t>(*pool, x, mm, lx, *w, bias, y, ly, accumulate);
    case DType::kF16:
      return MatMulTyped<hwy::float16_t>(*pool, x, mm, lx, *w, bias, y, ly, accumulate);
    default:
      return MatMulTyped<float>(*pool, x, mm, lx, *w, bias, y, ly, accumulate);
  }
}

}  // namespace mineru::ops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru::ops {

HWY_EXPORT(MatMulImpl);

void MatMul(ThreadPool& pool, const float* x, int64_t m, int64_t ldx, const MatrixView& w,
            const float* bias, float* y, int64_t ldy, bool accumulate) {
  MINERU_CHECK(IsKernelDType(w.dtype), "MatMul: weight dtype {}", DTypeName(w.dtype));
  if (m <= 0 || w.rows <= 0) return;
  HWY_DYNAMIC_DISPATCH(MatMulImpl)(&pool, x, m, ldx, &w, bias, y, ldy, accumulate);
}

}  // namespace mineru::ops
#endif  // HWY_ONCE
