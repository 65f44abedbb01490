// SPDX-License-Identifier: Apache-2.0
#include "base/cpu_features.h"

namespace mineru {

#if defined(__x86_64__)
namespace {
// The compiler's runtime check reads CPUID and, for AVX-512 features, the OS-enabled state in
// XCR0. Initialising it first makes the answers valid even from static constructors.
bool HasAvx512Base() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
}  // namespace

bool CpuHasAvx512Bf16() { return HasAvx512Base() && __builtin_cpu_supports("avx512bf16"); }
bool CpuHasAvx512Vnni() { return HasAvx512Base() && __builtin_cpu_supports("avx512vnni"); }
// libgcc's answers for AVX and above already require the OS-enabled YMM state in XCR0.
bool CpuHasAvx2Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
bool CpuHasAvx512Bf16() { return false; }
bool CpuHasAvx512Vnni() { return false; }
bool CpuHasAvx2Fma() { return false; }
#endif

}  // namespace mineru
