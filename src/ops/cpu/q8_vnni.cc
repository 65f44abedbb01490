// SPDX-License-Identifier: Apache-2.0
// The int8 product's AVX-512 VNNI kernels (cpu/q8_kernels.h). The file is compiled for the
// baseline; only the functions marked Q8_TARGET use AVX-512, called after a run-time check.
// Highway 1.0.3 (Debian 12's) has no VNNI target, hence raw intrinsics.
//
// A register tile multiplies R rows by C panels: per group, R x C int32 accumulators start at
// the row's correction -128 * sum(p) and take 8 vpdpbusd steps (unsigned weight bytes x the
// row's 4 signed activation bytes, broadcast); then each is converted to float and folded into
// its float accumulator with one multiply (d * s) and one fused multiply-add, as the contract
// says.
#include <algorithm>
#include <cstring>

#include "ops/cpu/q8_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
// GCC 12's AVX-512 headers build "undefined" vectors by self-initialization (__m512 __Y = __Y),
// which -Wmaybe-uninitialized reports at every inlined use; the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define Q8_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma")))
#endif

namespace mineru::ops::q8 {

#if defined(__x86_64__)
namespace {

// The group quantization of QuantizeGroup with 16-lane vectors: the same max (exact in any
// order), the same IEEE division and rounding (cvtps uses the default round to nearest even),
// the same clamp, so the same bytes.
Q8_TARGET void QuantizeRowVnni(const float* x, size_t depth, size_t groups, int8_t* q, float* s,
                               int32_t* c) {
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  for (size_t g = 0; g < groups; ++g) {
    const size_t k0 = g * kGroup, count = std::min(kGroup, depth - k0);
    const __mmask16 m0 = count >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << count) - 1);
    const __mmask16 m1 = count >= 32  ? 0xFFFF
                         : count > 16 ? static_cast<__mmask16>((1u << (count - 16)) - 1)
                                      : 0;
    const __m512 v0 = _mm512_maskz_loadu_ps(m0, x + k0);
    const __m512 v1 = _mm512_maskz_loadu_ps(m1, x + k0 + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const float scale = amax / 127.0f;
    s[g] = scale;
    if (scale == 0.0f) {
      std::memset(q + k0, 0, kGroup);
      c[g] = 0;
      continue;
    }
    const __m512 sv = _mm512_set1_ps(scale);
    const __m512i q0 =
        _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(_mm512_div_ps(v0, sv)), lo), hi);
    const __m512i q1 =
        _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(_mm512_div_ps(v1, sv)), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k0), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k0 + 16), _mm512_cvtepi32_epi8(q1));
    c[g] = -128 * _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
  }
}

// A tile of R rows takes up to kPanelsForRows[R - 1] panels, so
// that its R C int32 and R C float accumulators, the C weight vectors of a step and one
// broadcast fit the 32 vector registers (1 x 8, 2 x 5, 3 x 4, 4 x 3). Every shape has at least
// 8 independent vpdpbusd chains to cover the instruction's latency; for many rows 4 x 3 gives
// the most products per load (12 per 7).
constexpr std::array<size_t, kMaxTileRows> kPanelsForRows = {8, 5, 4, 3};

// R rows x C panels over the whole depth, then the contract's epilogue. The accumulator arrays
// are indexed only by constants of fully unrolled loops, so they live in registers.
template <size_t R, size_t C>
Q8_TARGET void TileVnni(const Job& job, size_t i0, size_t p0) {
  const QuantizedRows& x = *job.x;
  const size_t groups = x.groups;
  const uint8_t* wp[C];
#pragma GCC unroll 16
  for (size_t c = 0; c < C; ++c) wp[c] = job.panels + (p0 + c) * job.panel_bytes;
  const int8_t* qx[R];
  const float* sx[R];
  const int32_t* cx[R];
#pragma GCC unroll 16
  for (size_t r = 0; r < R; ++r) {
    qx[r] = x.q.get() + (i0 + r) * x.kp;
    sx[r] = x.s.get() + (i0 + r) * groups;
    cx[r] = x.c.get() + (i0 + r) * groups;
  }
  __m512 acc[R][C];
#pragma GCC unroll 16
  for (size_t r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (size_t c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (size_t g = 0; g < groups; ++g) {
    __m512i dot[R][C];
#pragma GCC unroll 16
    for (size_t r = 0; r < R; ++r) {
      const __m512i start = _mm512_set1_epi32(cx[r][g]);  // -128 * sum(p): undoes the + 128
#pragma GCC unroll 16
      for (size_t c = 0; c < C; ++c) dot[r][c] = start;
    }
    const size_t off = g * kBlockBytes;
#pragma GCC unroll 8
    for (size_t s = 0; s < 8; ++s) {
      __m512i w[C];
#pragma GCC unroll 16
      for (size_t c = 0; c < C; ++c) w[c] = _mm512_load_si512(wp[c] + off + 64 * s);
#pragma GCC unroll 16
      for (size_t r = 0; r < R; ++r) {
        int32_t four;
        std::memcpy(&four, qx[r] + g * kGroup + 4 * s, 4);
        const __m512i b = _mm512_set1_epi32(four);
#pragma GCC unroll 16
        for (size_t c = 0; c < C; ++c) dot[r][c] = _mm512_dpbusd_epi32(dot[r][c], w[c], b);
      }
    }
    __m512 d[C];
#pragma GCC unroll 16
    for (size_t c = 0; c < C; ++c) {
      d[c] = _mm512_load_ps(reinterpret_cast<const float*>(wp[c] + off + kScaleOffset));
    }
#pragma GCC unroll 16
    for (size_t r = 0; r < R; ++r) {
      const __m512 s = _mm512_set1_ps(sx[r][g]);
#pragma GCC unroll 16
      for (size_t c = 0; c < C; ++c) {  // acc = fma(float(dot), d * s, acc)
        acc[r][c] =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][c]), _mm512_mul_ps(d[c], s), acc[r][c]);
      }
    }
  }
#pragma GCC unroll 16
  for (size_t c = 0; c < C; ++c) {
    const size_t col = (p0 + c) * kPanel;
    if (col >= job.n) continue;  // a whole padding panel is never requested; kept for safety
    const size_t valid = std::min(kPanel, job.n - col);
    const __mmask16 mask = valid == kPanel ? 0xFFFF : static_cast<__mmask16>((1u << valid) - 1);
    const __m512 b =
        job.bias != nullptr ? _mm512_maskz_loadu_ps(mask, job.bias + col) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (size_t r = 0; r < R; ++r) {
      float* out = job.y + (i0 + r) * job.ldy + col;
      __m512 value = _mm512_add_ps(acc[r][c], b);  // acc + b
      if (job.accumulate) value = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, out), value);
      _mm512_mask_storeu_ps(out, mask, value);
    }
  }
}

struct VnniTiles {
  static constexpr std::array<size_t, kMaxTileRows> kPanelsForRows = q8::kPanelsForRows;
  template <size_t R, size_t C>
  static constexpr TileFn kTile = &TileVnni<R, C>;
};

bool CpuHasVnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma");
}

}  // namespace

const KernelSet* VnniKernels() {
  static const KernelSet set = MakeKernelSet<VnniTiles>("avx512vnni", &QuantizeRowVnni);
  static const bool has = CpuHasVnni();
  return has ? &set : nullptr;
}

#else

const KernelSet* VnniKernels() { return nullptr; }

#endif  // __x86_64__

}  // namespace mineru::ops::q8
