// SPDX-License-Identifier: Apache-2.0
// The bf16 and int8 dot-product peaks of ops/machine_peak.h. Highway has no target for AVX-512
// BF16 or VNNI (nor for AVX2's byte dot products as the int8 kernels use them), so these chains
// are raw intrinsics in functions compiled for just those extensions and called only when the
// CPU reports them; the rest of the project's code never assumes them.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/cpu_features.h"
#include "ops/cpu/chain_peak.h"
#include "ops/machine_peak.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mineru::ops {
namespace {

#if defined(__x86_64__)

// Independent accumulators per chain loop. vdpbf16ps and vpdpbusd take about 5-8 cycles of
// latency on current cores and issue at up to 2 a cycle; 24 covers latency x issue rate and
// leaves 8 of the 32 vector registers for the operands.
constexpr int kChains = 24;
// Each thread's sink: one vector of 16 lanes, so no two threads' final stores share a cache line.
constexpr size_t kSinkStride = 16;

// Returns FLOPs done: 64 per instruction (32 bf16 pairs, multiply and add each).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) double Bf16DotChains(
    size_t iterations, float seed, float* sink) {
  // Small normal operands: the sums grow slowly and never reach infinities or denormals.
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(3e-3f), _mm512_set1_ps(1e-3f));
  // Fully unrolled so that every accumulator lives in a register, not on the stack.
  __m512 acc[kChains];
#pragma GCC unroll 24
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(seed + static_cast<float>(i));
  for (size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  __m512 total = acc[0];
#pragma GCC unroll 24
  for (int i = 1; i < kChains; ++i) total = _mm512_add_ps(total, acc[i]);
  _mm512_storeu_ps(sink, total);  // keeps the chains alive
  return static_cast<double>(iterations) * kChains * 64.0;
}

// Returns operations done: 128 per instruction (64 byte pairs, multiply and add each).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) double Int8DotChains(
    size_t iterations, int seed, int32_t* sink) {
  // Each step adds 4 * 1 * 1 to every lane; int32 wraps (defined for the instruction), and
  // the value is only a sink.
  const __m512i a = _mm512_set1_epi8(1);
  const __m512i b = _mm512_set1_epi8(1);
  __m512i acc[kChains];
#pragma GCC unroll 24
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(seed + i);
  for (size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  }
  __m512i total = acc[0];
#pragma GCC unroll 24
  for (int i = 1; i < kChains; ++i) total = _mm512_add_epi32(total, acc[i]);
  _mm512_storeu_si512(sink, total);  // keeps the chains alive
  return static_cast<double>(iterations) * kChains * 128.0;
}

// AVX2: 16 registers, so 10 chains (vpmaddubsw and vpmaddwd take 3-5 cycles each on current
// cores and issue at up to 2 a cycle) with the operands and temporaries. Returns operations
// done: 64 per vpmaddubsw + vpmaddwd + vpaddd sequence (32 byte pairs, multiply and add each).
constexpr int kAvx2Chains = 10;

__attribute__((target("avx2,fma"))) double Int8DotChainsAvx2(size_t iterations, int seed,
                                                             int32_t* sink) {
  const __m256i a = _mm256_set1_epi8(1);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i b = _mm256_set1_epi8(1);
  __m256i acc[kAvx2Chains];
#pragma GCC unroll 10
  for (int i = 0; i < kAvx2Chains; ++i) acc[i] = _mm256_set1_epi32(seed + i);
  for (size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 10
    for (int i = 0; i < kAvx2Chains; ++i) {
      // An empty asm the compiler must assume changes b: every chain multiplies afresh instead
      // of reusing one hoisted product. It emits no instruction.
      __asm__("" : "+x"(b));
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
    }
  }
  __m256i total = acc[0];
#pragma GCC unroll 10
  for (int i = 1; i < kAvx2Chains; ++i) total = _mm256_add_epi32(total, acc[i]);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink), total);  // keeps the chains alive
  return static_cast<double>(iterations) * kAvx2Chains * 64.0;
}

#endif  // __x86_64__

}  // namespace

double MeasureBf16DotPeakGflops(ThreadPool& pool, double seconds) {
#if defined(__x86_64__)
  if (!CpuHasAvx512Bf16()) return 0;
  std::vector<float> sinks(static_cast<size_t>(pool.num_threads()) * kSinkStride);
  return internal::BestChainRate(pool, seconds, [&](size_t iterations, size_t task) {
    return Bf16DotChains(iterations, static_cast<float>(task), sinks.data() + task * kSinkStride);
  });
#else
  (void)pool;
  (void)seconds;
  return 0;
#endif
}

double MeasureInt8DotPeakGops(ThreadPool& pool, double seconds) {
#if defined(__x86_64__)
  const bool vnni = CpuHasAvx512Vnni();
  if (!vnni && !CpuHasAvx2Fma()) return 0;
  std::vector<int32_t> sinks(static_cast<size_t>(pool.num_threads()) * kSinkStride);
  return internal::BestChainRate(pool, seconds, [&](size_t iterations, size_t task) {
    int32_t* sink = sinks.data() + task * kSinkStride;
    return vnni ? Int8DotChains(iterations, static_cast<int>(task), sink)
                : Int8DotChainsAvx2(iterations, static_cast<int>(task), sink);
  });
#else
  (void)pool;
  (void)seconds;
  return 0;
#endif
}

const char* Int8DotPeakInstructions() {
  if (CpuHasAvx512Vnni()) return "AVX-512 VNNI vpdpbusd";
  if (CpuHasAvx2Fma()) return "AVX2 vpmaddubsw + vpmaddwd";
  return "";
}

}  // namespace mineru::ops
