// SPDX-License-Identifier: Apache-2.0
// Measures this machine's ceilings, so benchmarks can print each figure beside them: float32
// fused multiply-add, bf16 and int8 dot-product throughput, and DRAM read bandwidth, with the
// pool's threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/thread_pool.h"

namespace mineru::ops {

// GFLOP/s of independent float32 FMA chains on every pool thread (2 FLOP per lane per FMA),
// best of a few runs of about `seconds` each.
double MeasureFmaPeakGflops(ThreadPool& pool, double seconds = 0.3);

// GFLOP/s of independent AVX-512 BF16 vdpbf16ps chains on every pool thread: each instruction
// multiplies 32 bf16 pairs and adds them into 16 float32 lanes, counted as 64 FLOP (2 per pair).
// Best of a few runs of about `seconds` each; 0 means not available (base/cpu_features.h:
// CpuHasAvx512Bf16() is false).
double MeasureBf16DotPeakGflops(ThreadPool& pool, double seconds = 0.3);

// G operations/s of independent int8 dot-product chains on every pool thread, with the
// instructions the int8 product (ops/q8_matrix.h) is built on here: AVX-512 VNNI vpdpbusd (u8 x
// s8 into int32; 64 byte pairs, counted as 128 operations, 2 per pair) where the CPU has it,
// else AVX2 vpmaddubsw + vpmaddwd + vpaddd (32 byte pairs into 8 int32 lanes, 64 operations; the
// kernel's sign transfer, one more instruction, is not counted, so the figure is the ceiling of
// any AVX2 int8 dot). Best of a few runs of about `seconds` each; 0 means neither is available.
double MeasureInt8DotPeakGops(ThreadPool& pool, double seconds = 0.3);
// What MeasureInt8DotPeakGops measures on this CPU, in words ("" where it returns 0).
const char* Int8DotPeakInstructions();

// GB/s of streaming reads of a fresh `bytes` buffer (far larger than the caches) split across
// the pool's threads, best of `repeats` passes.
double MeasureReadBandwidthGBps(ThreadPool& pool, size_t bytes = size_t{1} << 30, int repeats = 10);

// The same over existing memory (for instance a checkpoint's mapped weights, to measure the
// pages decode actually streams), best of `repeats` passes.
double MeasureReadBandwidthGBps(ThreadPool& pool, std::span<const uint8_t> memory, int repeats);

}  // namespace mineru::ops
