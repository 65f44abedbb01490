// SPDX-License-Identifier: Apache-2.0
// Measures this machine's ceilings, so benchmarks can print each figure beside them:
// float32 fused multiply-add throughput and DRAM read bandwidth with the pool's threads.
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

// GB/s of streaming reads of a fresh `bytes` buffer (far larger than the caches) split across
// the pool's threads, best of `repeats` passes.
double MeasureReadBandwidthGBps(ThreadPool& pool, size_t bytes = size_t{1} << 30, int repeats = 10);

// The same over existing memory (for instance a checkpoint's mapped weights, to measure the
// pages decode actually streams), best of `repeats` passes.
double MeasureReadBandwidthGBps(ThreadPool& pool, std::span<const uint8_t> memory, int repeats);

}  // namespace mineru::ops
