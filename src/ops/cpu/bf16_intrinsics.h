// SPDX-License-Identifier: Apache-2.0
// What the AVX-512 BF16 kernels (cpu/bf16_matmul.cc, cpu/bf16_attention.cc) share: the target
// their functions are compiled for, and the one instruction they are built on. Callers check
// CpuHasAvx512Bf16() (base/cpu_features.h) before calling any such function. x86-64 only.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

// GCC 12's AVX-512 headers build "undefined" vectors by self-initialization (__m512 __Y = __Y),
// which -W(maybe-)uninitialized reports at every inlined use; the value is never read. For the
// rest of the kernel file that includes this header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#define MINERU_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

namespace mineru::ops::bf16 {

// acc[l] += a[2l + 1] * b[2l + 1], then += a[2l] * b[2l]: each lane's pair of bf16 products
// (exact in float32), each addition rounded, denormals as zero (vdpbf16ps).
MINERU_BF16_TARGET inline __m512 Dot2(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(a), reinterpret_cast<__m512bh>(b));
}

}  // namespace mineru::ops::bf16
#endif
