// SPDX-License-Identifier: Apache-2.0
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cpu/machine_peak.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "ops/cpu/chain_peak.h"
#include "ops/machine_peak.h"

HWY_BEFORE_NAMESPACE();
namespace mineru::ops::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// 12 independent chains cover FMA latency (4-5 cycles) times 2 FMA pipes on current cores, and
// with the two operands they fit AVX2's 16 vector registers: 16 chains would spill there, and
// the loads and stores would cap the figure at about two thirds of the real peak.
// Returns FLOPs done.
constexpr int kFmaChains = 12;

double FmaChains(size_t iterations, float seed, float* sink) {
  const DF df;
  const VF m = hn::Set(df, 0.999999f);
  const VF a = hn::Set(df, 1e-7f);
  VF acc[kFmaChains];
  for (int i = 0; i < kFmaChains; ++i) acc[i] = hn::Set(df, seed + static_cast<float>(i));
  for (size_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < kFmaChains; ++i) acc[i] = hn::MulAdd(acc[i], m, a);
  }
  VF total = acc[0];
  for (int i = 1; i < kFmaChains; ++i) total = hn::Add(total, acc[i]);
  *sink = hn::GetLane(total);  // keeps the chains alive
  return static_cast<double>(iterations) * kFmaChains * static_cast<double>(hn::Lanes(df)) * 2.0;
}

float SumRange(const float* HWY_RESTRICT p, size_t n) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  VF acc0 = hn::Zero(df), acc1 = hn::Zero(df), acc2 = hn::Zero(df), acc3 = hn::Zero(df);
  size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    // Same software prefetch distance as the weight-streaming kernel (2 KiB ahead).
    hwy::Prefetch(p + i + 512);
    acc0 = hn::Add(acc0, hn::Load(df, p + i));
    acc1 = hn::Add(acc1, hn::Load(df, p + i + lanes));
    acc2 = hn::Add(acc2, hn::Load(df, p + i + 2 * lanes));
    acc3 = hn::Add(acc3, hn::Load(df, p + i + 3 * lanes));
  }
  float sum = hn::GetLane(hn::SumOfLanes(df, hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3))));
  for (; i < n; ++i) sum += p[i];
  return sum;
}

}  // namespace mineru::ops::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mineru::ops {

HWY_EXPORT(FmaChains);
HWY_EXPORT(SumRange);

namespace {
double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

namespace internal {

double BestChainRate(ThreadPool& pool, double seconds,
                     const std::function<double(size_t iterations, size_t task)>& chains) {
  const int threads = pool.num_threads();
  // Calibrate the iteration count on one thread.
  size_t iterations = 1 << 16;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    chains(iterations, 0);
    if (Seconds(start) > seconds / 4 || iterations > (size_t{1} << 34)) break;
    iterations *= 2;
  }
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    std::atomic<double> ops{0};
    const auto start = std::chrono::steady_clock::now();
    pool.ParallelFor(static_cast<size_t>(threads), [&](size_t task, int) {
      const double done = chains(iterations * 4, task);
      double expected = ops.load();
      while (!ops.compare_exchange_weak(expected, expected + done)) {
      }
    });
    best = std::max(best, ops.load() / Seconds(start) / 1e9);
  }
  return best;
}

}  // namespace internal

double MeasureFmaPeakGflops(ThreadPool& pool, double seconds) {
  std::vector<float> sinks(static_cast<size_t>(pool.num_threads()) * 16);
  return internal::BestChainRate(pool, seconds, [&](size_t iterations, size_t task) {
    return HWY_DYNAMIC_DISPATCH(FmaChains)(iterations, static_cast<float>(task),
                                           sinks.data() + task * 16);
  });
}

double MeasureReadBandwidthGBps(ThreadPool& pool, std::span<const uint8_t> memory, int repeats) {
  // Whole 64-byte-aligned floats only; the content does not matter (NaNs included).
  const auto begin_address = (reinterpret_cast<uintptr_t>(memory.data()) + 63) / 64 * 64;
  const auto end_address = (reinterpret_cast<uintptr_t>(memory.data() + memory.size())) / 64 * 64;
  if (end_address <= begin_address) return 0;
  const float* data = reinterpret_cast<const float*>(begin_address);
  const size_t n = (end_address - begin_address) / sizeof(float);
  // Many slices, claimed dynamically: a thread that wakes late still gets its share, so the
  // figure is what all threads together can stream.
  constexpr size_t kSlices = 64;
  const size_t per_slice = (n / kSlices + 63) / 64 * 64;
  std::vector<float> sums(kSlices);
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pool.ParallelFor(kSlices, [&](size_t slice, int) {
      const size_t begin = std::min(n, slice * per_slice);
      const size_t end = std::min(n, begin + per_slice);
      sums[slice] = HWY_DYNAMIC_DISPATCH(SumRange)(data + begin, end - begin);
    });
    best = std::max(best, static_cast<double>(n * sizeof(float)) / Seconds(start) / 1e9);
  }
  return best;
}

double MeasureReadBandwidthGBps(ThreadPool& pool, size_t bytes, int repeats) {
  const size_t n = bytes / sizeof(float);
  auto buffer = hwy::AllocateAligned<float>(n);
  // Touch every page with real values (untouched pages would read the shared zero page).
  constexpr size_t kSlices = 64;
  const size_t per_slice = (n / kSlices + 63) / 64 * 64;
  pool.ParallelFor(kSlices, [&](size_t slice, int) {
    const size_t begin = std::min(n, slice * per_slice);
    const size_t end = std::min(n, begin + per_slice);
    for (size_t i = begin; i < end; ++i) buffer[i] = static_cast<float>(i & 1023);
  });
  return MeasureReadBandwidthGBps(
      pool, std::span(reinterpret_cast<const uint8_t*>(buffer.get()), n * sizeof(float)), repeats);
}

}  // namespace mineru::ops
#endif  // HWY_ONCE
