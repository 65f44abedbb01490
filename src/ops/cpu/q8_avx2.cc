// SPDX-License-Identifier: Apache-2.0
// The int8 product's AVX2 kernels (cpu/q8_kernels.h): for x86-64 CPUs without AVX-512 VNNI —
// most servers before 2020 and many cloud machines today. The file is compiled for the
// baseline; only functions marked Q8_AVX2_TARGET use AVX2 and FMA, called after a run-time check.
//
// The group dot without vpdpbusd. vpmaddubsw multiplies unsigned by signed bytes and adds pairs
// into int16 with saturation; over the stored bytes u = q + 128 (up to 255) a pair could reach
// 2 x 255 x 127 and saturate. So each weight vector is first made signed (w = u ^ 0x80 = u - 128,
// in [-128, 127]) and split into |w| (as an unsigned byte, 0..128) and its sign, which moves onto
// the activations (vpsignb: p * sign(w), p in [-127, 127] never overflows). A pair is then at
// most 2 x 128 x 127 = 32,512 < 32,767: no saturation for any stored bytes, and vpmaddwd by ones
// widens the pairs into int32 lanes of 4 depths each. The group sum is sum_t (u - 128) p, the
// contract's integer, with no correction term; the float epilogue is the contract's.
//
// A 64-byte step of a panel (16 columns x 4 depths) is two 256-bit halves, columns 0..7 and
// 8..15. A tile of R rows x C panels runs each group half by half: R x C int32 accumulators for
// the half, and 2 R C float accumulators for the whole depth, within 16 vector registers with the
// weight, |w|, broadcast and product temporaries (R x C = 1 x 3, 2 x 2, 3 x 1, 4 x 1).
#include <algorithm>
#include <cstring>

#include "base/cpu_features.h"
#include "ops/cpu/q8_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define Q8_AVX2_TARGET __attribute__((target("avx2,fma")))
#endif

namespace mineru::ops::q8 {

#if defined(__x86_64__)
namespace {

constexpr std::array<size_t, kMaxTileRows> kPanelsForRows = {3, 2, 1, 1};

// Horizontal max and sum of 8 lanes.
Q8_AVX2_TARGET inline float MaxOf(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}
Q8_AVX2_TARGET inline int32_t SumOf(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// The contract's group quantization, 8 lanes at a time, giving the portable quantizer's bytes:
// the max is taken as std::max(amax, |v|) does (a NaN lane is skipped, so the maximum of the
// rest is order independent and exact), the division is IEEE, vcvtps2dq rounds to nearest even
// (the default mode, as nearbyint) and a NaN quotient converts to INT_MIN, which the clamp
// turns into -127 as RoundClamp does. A partial last group takes the portable quantizer.
Q8_AVX2_TARGET void QuantizeRowAvx2(const float* x, size_t depth, size_t groups, int8_t* q,
                                    float* s, int32_t* c) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (size_t g = 0; g < groups; ++g) {
    const size_t k0 = g * kGroup;
    if (depth - k0 < kGroup) {
      QuantizeRowPortable(x + k0, depth - k0, 1, q + k0, s + g, c + g);
      continue;
    }
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int h = 0; h < 4; ++h) {
      v[h] = _mm256_loadu_ps(x + k0 + 8 * h);
      amax = _mm256_max_ps(_mm256_andnot_ps(sign, v[h]), amax);  // NaN lanes keep amax
    }
    const float scale = MaxOf(amax) / 127.0f;
    s[g] = scale;
    if (scale == 0.0f) {
      std::memset(q + k0, 0, kGroup);
      c[g] = 0;
      continue;
    }
    const __m256 sv = _mm256_set1_ps(scale);
    __m256i r[4];
    for (int h = 0; h < 4; ++h) {
      r[h] =
          _mm256_min_epi32(_mm256_max_epi32(_mm256_cvtps_epi32(_mm256_div_ps(v[h], sv)), lo), hi);
    }
    c[g] =
        -128 * SumOf(_mm256_add_epi32(_mm256_add_epi32(r[0], r[1]), _mm256_add_epi32(r[2], r[3])));
    // The packs work within 128-bit lanes: the dwords come out as depths 0-3, 8-11, 16-19,
    // 24-27 | 4-7, 12-15, 20-23, 28-31; the permutation restores ascending order. The values
    // are already in [-127, 127], so the saturating packs change none.
    const __m256i bytes =
        _mm256_packs_epi16(_mm256_packs_epi32(r[0], r[1]), _mm256_packs_epi32(r[2], r[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + k0),
                        _mm256_permutevar8x32_epi32(bytes, order));
  }
}

// R rows x C panels over the whole depth, then the contract's epilogue. The accumulator arrays
// are indexed only by constants of fully unrolled loops, so they live in registers.
template <size_t R, size_t C>
Q8_AVX2_TARGET void TileAvx2(const Job& job, size_t i0, size_t p0) {
  const QuantizedRows& x = *job.x;
  const size_t groups = x.groups;
  const uint8_t* wp[C];
#pragma GCC unroll 8
  for (size_t c = 0; c < C; ++c) wp[c] = job.panels + (p0 + c) * job.panel_bytes;
  const int8_t* qx[R];
  const float* sx[R];
#pragma GCC unroll 4
  for (size_t r = 0; r < R; ++r) {
    qx[r] = x.q.get() + (i0 + r) * x.kp;
    sx[r] = x.s.get() + (i0 + r) * groups;
  }
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[R][C][2];
#pragma GCC unroll 4
  for (size_t r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (size_t c = 0; c < C; ++c) acc[r][c][0] = acc[r][c][1] = _mm256_setzero_ps();
  }
  for (size_t g = 0; g < groups; ++g) {
    const size_t off = g * kBlockBytes;
#pragma GCC unroll 2
    for (size_t h = 0; h < 2; ++h) {
      __m256i dot[R][C];
#pragma GCC unroll 4
      for (size_t r = 0; r < R; ++r) {
#pragma GCC unroll 8
        for (size_t c = 0; c < C; ++c) dot[r][c] = _mm256_setzero_si256();
      }
#pragma GCC unroll 8
      for (size_t s = 0; s < 8; ++s) {
#pragma GCC unroll 8
        for (size_t c = 0; c < C; ++c) {
          const __m256i u =
              _mm256_load_si256(reinterpret_cast<const __m256i*>(wp[c] + off + 64 * s + 32 * h));
          const __m256i w = _mm256_xor_si256(u, flip);   // u - 128, signed
          const __m256i magnitude = _mm256_abs_epi8(w);  // |w|; -128 stays 0x80 = 128 unsigned
#pragma GCC unroll 4
          for (size_t r = 0; r < R; ++r) {
            int32_t four;
            std::memcpy(&four, qx[r] + g * kGroup + 4 * s, 4);
            const __m256i signed_p = _mm256_sign_epi8(_mm256_set1_epi32(four), w);
            const __m256i pairs = _mm256_maddubs_epi16(magnitude, signed_p);
            dot[r][c] = _mm256_add_epi32(dot[r][c], _mm256_madd_epi16(pairs, ones));
          }
        }
      }
#pragma GCC unroll 8
      for (size_t c = 0; c < C; ++c) {
        const __m256 d =
            _mm256_load_ps(reinterpret_cast<const float*>(wp[c] + off + kScaleOffset) + 8 * h);
#pragma GCC unroll 4
        for (size_t r = 0; r < R; ++r) {  // acc = fma(float(dot), d * s, acc)
          acc[r][c][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[r][c]),
                                         _mm256_mul_ps(d, _mm256_set1_ps(sx[r][g])), acc[r][c][h]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (size_t c = 0; c < C; ++c) {
#pragma GCC unroll 2
    for (size_t h = 0; h < 2; ++h) {
      const size_t col = (p0 + c) * kPanel + 8 * h;
      if (col >= job.n) continue;
      const size_t valid = std::min<size_t>(8, job.n - col);
      const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid)),
                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      const __m256 b =
          job.bias != nullptr ? _mm256_maskload_ps(job.bias + col, mask) : _mm256_setzero_ps();
#pragma GCC unroll 4
      for (size_t r = 0; r < R; ++r) {
        float* out = job.y + (i0 + r) * job.ldy + col;
        __m256 value = _mm256_add_ps(acc[r][c][h], b);  // acc + b
        if (job.accumulate) value = _mm256_add_ps(_mm256_maskload_ps(out, mask), value);
        _mm256_maskstore_ps(out, mask, value);
      }
    }
  }
}

struct Avx2Tiles {
  static constexpr std::array<size_t, kMaxTileRows> kPanelsForRows = q8::kPanelsForRows;
  template <size_t R, size_t C>
  static constexpr TileFn kTile = &TileAvx2<R, C>;
};

}  // namespace

const KernelSet* Avx2Kernels() {
  static const KernelSet set = MakeKernelSet<Avx2Tiles>("avx2", &QuantizeRowAvx2);
  static const bool has = CpuHasAvx2Fma();
  return has ? &set : nullptr;
}

#else

const KernelSet* Avx2Kernels() { return nullptr; }

#endif  // __x86_64__

}  // namespace mineru::ops::q8
