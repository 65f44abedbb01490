// SPDX-License-Identifier: Apache-2.0
// The harness behind every compute peak of ops/machine_peak.h, shared by the Highway kernels
// (machine_peak.cc) and the raw-intrinsic ones (machine_peak_x86.cc).
#pragma once

#include <cstddef>
#include <functional>

#include "base/thread_pool.h"

namespace mineru::ops::internal {

// Runs `chains(iterations, task)` (independent dependency chains; returns the operations it did)
// once per pool thread, with `iterations` calibrated on one thread so that each run lasts about
// `seconds`, and returns the best of three runs in G operations per second.
double BestChainRate(ThreadPool& pool, double seconds,
                     const std::function<double(size_t iterations, size_t task)>& chains);

}  // namespace mineru::ops::internal
