// SPDX-License-Identifier: Apache-2.0
// The bf16 product of ops/bf16_matmul.h: AVX-512 BF16 intrinsics where the CPU has them
// (Debian's Highway has no target with vdpbf16ps, hence plain intrinsics in functions compiled
// for that instruction set and chosen at run time), the scalar twin's per-output loop elsewhere.
//
// Shape of the work. Activations are rounded to bf16 once per call into a per-thread buffer,
// rows padded with zeros to a multiple of 32. A register tile is R <= 4 rows x 4 weight rows:
// 16 accumulators, 4 weight loads and R activation loads per 32 depths, each accumulator one
// output's 16 lanes; the 4 accumulators of a row are then reduced together (Reduce4) along the
// documented tree. Missing rows or columns of an edge tile are never mixed into the valid ones:
// a missing weight row repeats the last valid one and its sums are dropped.
// Tasks are (row block, column block) pairs. A row block (<= 256 rows, about 768 KiB of bf16
// activations) stays in L2 while its task walks groups of 4 weight rows, each group (4 K bf16,
// at most 40 KiB for K = 5120) in L1 while the block's row tiles sweep it. With one row block
// (decode, short prefill chunks) the columns are split into about 8 tasks per thread, and every
// weight is read from memory once.
#include "ops/bf16_matmul.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "base/cpu_features.h"
#include "base/dtype.h"
#include "base/status.h"
#include "ops/cpu/bf16_intrinsics.h"
#include "ops/reference.h"

namespace mineru::ops {
namespace {

constexpr int64_t kChunk = 32;     // depths per vdpbf16ps (16 lanes x 2)
constexpr int64_t kGroupCols = 4;  // weight rows of one tile, reduced together
constexpr int64_t kMaxTileRows = 4;
constexpr int64_t kMaxRowBlock = 256;
constexpr int64_t kRowBlockBytes = 768 * 1024;
constexpr int64_t kTasksPerThread = 8;
constexpr int64_t kKeptActivationElems = int64_t{4} << 20;  // 8 MiB of bf16 per thread

std::atomic<bool> g_force_portable{false};

const uint16_t* WeightRow(std::span<const Bf16RowPart> parts, int64_t k, int64_t j) {
  size_t p = parts.size() - 1;
  while (p > 0 && parts[p].begin > j) --p;
  return parts[p].data + (j - parts[p].begin) * k;
}

// The contract's update of one output.
inline void Store(float* out, float dot, const float* bias, int64_t j, bool accumulate) {
  const float value = dot + (bias != nullptr ? bias[j] : 0.0f);
  *out = accumulate ? *out + value : value;
}

// Tile arguments: R activation rows (bf16, stride ldx16, zero-padded to kp) and 4 weight rows.
struct Tile {
  const uint16_t* x;
  int64_t ldx16;
  const uint16_t* w[kGroupCols];
  int64_t k;  // valid depths of the weight rows
};

void PortableTile(const Tile& t, int64_t rows, int64_t kp, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < kGroupCols; ++c) {
      out[r * kGroupCols + c] = reference::Bf16Dot(t.x + r * t.ldx16, t.w[c], t.k, kp);
    }
  }
}

#if defined(__x86_64__)
using bf16::Dot2;

// The documented tree for four accumulators at once; lane l of the result is output l.
//   ab = [a[l] + a[l+8] (l < 8) | b[l] + b[l+8]], the same for cd     (h of each)
//   u  = blocks [h_a[0..3] + h_a[4..7] | ... b, c, d]                 (q of each)
//   v  = u + swap of 64-bit halves: lanes 0, 1 of each block = q0 + q2, q1 + q3
//   s  = v + swap of neighbours: lane 0 of each block = (q0 + q2) + (q1 + q3)
MINERU_BF16_TARGET inline __m128 Reduce4(__m512 a, __m512 b, __m512 c, __m512 d) {
  const __m512 ab =
      _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
  const __m512 cd =
      _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
  const __m512 u =
      _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
  const __m512 v = _mm512_add_ps(u, _mm512_permute_ps(u, 0x4E));
  const __m512 s = _mm512_add_ps(v, _mm512_permute_ps(v, 0xB1));
  return _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, s));
}

template <int R>
MINERU_BF16_TARGET void NativeTile(const Tile& t, float* out) {
  __m512 acc[R][kGroupCols];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < kGroupCols; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  int64_t kk = 0;
  for (; kk + kChunk <= t.k; kk += kChunk) {
    __m512i w[kGroupCols];
    for (int c = 0; c < kGroupCols; ++c) {
      _mm_prefetch(reinterpret_cast<const char*>(t.w[c] + kk) + 1024, _MM_HINT_T0);
      w[c] = _mm512_loadu_si512(t.w[c] + kk);
    }
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_loadu_si512(t.x + r * t.ldx16 + kk);
      for (int c = 0; c < kGroupCols; ++c) acc[r][c] = Dot2(acc[r][c], xv, w[c]);
    }
  }
  if (kk < t.k) {  // the last, partial chunk: weights masked, activations already zero-padded
    const auto mask = static_cast<__mmask32>((uint64_t{1} << (t.k - kk)) - 1);
    __m512i w[kGroupCols];
    for (int c = 0; c < kGroupCols; ++c) w[c] = _mm512_maskz_loadu_epi16(mask, t.w[c] + kk);
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_loadu_si512(t.x + r * t.ldx16 + kk);
      for (int c = 0; c < kGroupCols; ++c) acc[r][c] = Dot2(acc[r][c], xv, w[c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm_storeu_ps(out + r * kGroupCols, Reduce4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
  }
}

using NativeTileFn = void (*)(const Tile&, float*);
constexpr NativeTileFn kNativeTiles[kMaxTileRows] = {&NativeTile<1>, &NativeTile<2>, &NativeTile<3>,
                                                     &NativeTile<4>};
#endif

bool UseNative() { return CpuHasAvx512Bf16() && !g_force_portable.load(std::memory_order_relaxed); }

// Activations rounded to bf16, rows padded with zeros to kp: one buffer per calling thread,
// grown as needed and kept, up to kKeptActivationElems.
std::vector<uint16_t>& ActivationBuffer() {
  thread_local std::vector<uint16_t> buffer;
  return buffer;
}

}  // namespace

bool Bf16DotIsNative() { return UseNative(); }

void ForceBf16Portable(bool portable) {
  g_force_portable.store(portable, std::memory_order_relaxed);
}

void MatMulBf16(ThreadPool& pool, const float* x, int64_t m, int64_t ldx,
                std::span<const Bf16RowPart> parts, int64_t n, int64_t k, const float* bias,
                float* y, int64_t ldy, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  MINERU_CHECK(!parts.empty() && parts[0].begin == 0, "MatMulBf16: parts must start at row 0");
  const int64_t kp = (k + kChunk - 1) / kChunk * kChunk;
  // Decode and prefill chunks reuse the thread's buffer; a vision pass's (tens of MB) is
  // freed when the call ends rather than kept for the process's life.
  std::vector<uint16_t> large;
  std::vector<uint16_t>& x16 = m * kp <= kKeptActivationElems ? ActivationBuffer() : large;
  if (static_cast<int64_t>(x16.size()) < m * kp) x16.resize(static_cast<size_t>(m * kp));
  constexpr int64_t kConvertRows = 16;
  pool.ParallelFor(static_cast<size_t>((m + kConvertRows - 1) / kConvertRows), [&](size_t b, int) {
    const int64_t i_end = std::min(m, static_cast<int64_t>(b + 1) * kConvertRows);
    for (int64_t i = static_cast<int64_t>(b) * kConvertRows; i < i_end; ++i) {
      uint16_t* row = x16.data() + i * kp;
      const float* src = x + i * ldx;
      for (int64_t c = 0; c < k; ++c) row[c] = F32ToBf16(src[c]);
      std::fill(row + k, row + kp, uint16_t{0});
    }
  });

  const bool native = UseNative();
  const int64_t threads = pool.num_threads();
  const int64_t block_rows = std::clamp<int64_t>(
      kRowBlockBytes / (2 * std::max<int64_t>(kp, 1)) / kMaxTileRows * kMaxTileRows, kMaxTileRows,
      kMaxRowBlock);
  const int64_t row_blocks = (m + block_rows - 1) / block_rows;
  const int64_t groups = (n + kGroupCols - 1) / kGroupCols;
  const int64_t groups_per_task =
      row_blocks == 1 ? std::max<int64_t>(1, (groups + kTasksPerThread * threads - 1) /
                                                 (kTasksPerThread * threads))
                      : 16;
  const int64_t col_blocks = (groups + groups_per_task - 1) / groups_per_task;
  pool.ParallelFor(static_cast<size_t>(row_blocks * col_blocks), [&](size_t task, int) {
    const int64_t rb = static_cast<int64_t>(task) / col_blocks;
    const int64_t cb = static_cast<int64_t>(task) % col_blocks;
    const int64_t i_begin = rb * block_rows, i_end = std::min(m, i_begin + block_rows);
    const int64_t g_end = std::min(groups, (cb + 1) * groups_per_task);
    float out[kMaxTileRows * kGroupCols];
    for (int64_t g = cb * groups_per_task; g < g_end; ++g) {
      const int64_t j0 = g * kGroupCols;
      const int64_t cols = std::min(kGroupCols, n - j0);
      Tile t{};
      t.ldx16 = kp;
      t.k = k;
      for (int64_t c = 0; c < kGroupCols; ++c) {
        t.w[c] = WeightRow(parts, k, j0 + std::min(c, cols - 1));
      }
      for (int64_t i0 = i_begin; i0 < i_end; i0 += kMaxTileRows) {
        const int64_t rows = std::min(kMaxTileRows, i_end - i0);
        t.x = x16.data() + i0 * kp;
#if defined(__x86_64__)
        if (native) {
          kNativeTiles[rows - 1](t, out);
        } else {
          PortableTile(t, rows, kp, out);
        }
#else
        (void)native;
        PortableTile(t, rows, kp, out);
#endif
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) {
            Store(y + (i0 + r) * ldy + j0 + c, out[r * kGroupCols + c], bias, j0 + c, accumulate);
          }
        }
      }
    }
  });
}

}  // namespace mineru::ops
