// SPDX-License-Identifier: Apache-2.0
// Instruction-set extensions that no Highway target of the project covers (base/simd_targets.h
// names those), so that kernels written with raw intrinsics can be chosen at run time and
// benchmarks can say which ceilings this CPU has. Each answer also requires that the operating
// system saves the register state of that width. Always false off x86-64.
#pragma once

namespace mineru {

// AVX-512 BF16 (vdpbf16ps, bf16 pair dot products into float32) with AVX-512 F/BW/VL.
bool CpuHasAvx512Bf16();
// AVX-512 VNNI (vpdpbusd, u8 x s8 quad dot products into int32) with AVX-512 F/BW/VL.
bool CpuHasAvx512Vnni();
// AVX2 with FMA (256-bit integer and float vectors), with the OS saving the 256-bit state.
bool CpuHasAvx2Fma();

}  // namespace mineru
