// SPDX-License-Identifier: Apache-2.0
// The compute ceilings of mineru-cpp bench (ops/machine_peak.h): float32 FMA, bf16 dot and int8
// dot, printed in its header and its JSON, and the helpers that print a figure beside the
// ceiling of the arithmetic it runs (a float32 product against the FMA peak, a bf16-dot product
// against the bf16-dot peak, ...).
#pragma once

#include <string>

#include "base/json.h"
#include "base/thread_pool.h"

namespace mineru::apps {

enum class ComputePeak { kFma, kBf16Dot, kInt8Dot };

struct ComputePeaks {
  double fma_gflops = 0;
  double bf16_dot_gflops = 0;  // 0: the CPU has no AVX-512 BF16
  double int8_dot_gops = 0;    // 0: the CPU has no AVX-512 VNNI

  // All three with the pool's threads.
  static ComputePeaks Measure(ThreadPool& pool);
  // The ceiling in G operations per second; 0 when not available on this CPU.
  double Of(ComputePeak peak) const;
};

// As printed after a figure: "FMA peak", "bf16-dot peak", "int8-dot peak".
const char* PeakName(ComputePeak peak);
// The report's top-level key of that ceiling: "fma_peak_gflops", "bf16_dot_peak_gflops",
// "int8_dot_peak_gops".
const char* PeakJsonKey(ComputePeak peak);

// The header's three lines, each "measured" or "not available on this CPU".
void PrintComputePeaks(const ComputePeaks& peaks);
// Adds the three ceilings to the report under PeakJsonKey (0 where not available).
void AddComputePeaks(const ComputePeaks& peaks, Json& report);

// " = 78.4% of FMA peak" for `rate` (G operations per second) against `peak`, or
// " (bf16-dot peak not available on this CPU)".
std::string PercentOfPeak(double rate, const ComputePeaks& peaks, ComputePeak peak);
// figure["fraction_of_peak"]: `rate` over `peak` (null when not available), and figure["peak"]:
// the PeakJsonKey it is taken against.
void SetFractionOfPeak(Json& figure, double rate, const ComputePeaks& peaks, ComputePeak peak);

}  // namespace mineru::apps
