// SPDX-License-Identifier: Apache-2.0
#include "apps/bench_peaks.h"

#include <fmt/format.h>

#include <cstdio>

#include "ops/machine_peak.h"

namespace mineru::apps {

ComputePeaks ComputePeaks::Measure(ThreadPool& pool) {
  ComputePeaks peaks;
  peaks.fma_gflops = ops::MeasureFmaPeakGflops(pool);
  peaks.bf16_dot_gflops = ops::MeasureBf16DotPeakGflops(pool);
  peaks.int8_dot_gops = ops::MeasureInt8DotPeakGops(pool);
  return peaks;
}

double ComputePeaks::Of(ComputePeak peak) const {
  switch (peak) {
    case ComputePeak::kFma:
      return fma_gflops;
    case ComputePeak::kBf16Dot:
      return bf16_dot_gflops;
    case ComputePeak::kInt8Dot:
      return int8_dot_gops;
  }
  return 0;
}

const char* PeakName(ComputePeak peak) {
  switch (peak) {
    case ComputePeak::kFma:
      return "FMA peak";
    case ComputePeak::kBf16Dot:
      return "bf16-dot peak";
    case ComputePeak::kInt8Dot:
      return "int8-dot peak";
  }
  return "";
}

const char* PeakJsonKey(ComputePeak peak) {
  switch (peak) {
    case ComputePeak::kFma:
      return "fma_peak_gflops";
    case ComputePeak::kBf16Dot:
      return "bf16_dot_peak_gflops";
    case ComputePeak::kInt8Dot:
      return "int8_dot_peak_gops";
  }
  return "";
}

void PrintComputePeaks(const ComputePeaks& peaks) {
  std::printf("  float32 FMA peak     %8.1f GFLOP/s (measured)\n", peaks.fma_gflops);
  if (peaks.bf16_dot_gflops > 0) {
    std::printf("  bf16 dot peak        %8.1f GFLOP/s (measured: AVX-512 BF16 vdpbf16ps)\n",
                peaks.bf16_dot_gflops);
  } else {
    std::printf("  bf16 dot peak        not available on this CPU (no AVX-512 BF16)\n");
  }
  if (peaks.int8_dot_gops > 0) {
    std::printf("  int8 dot peak        %8.1f GOP/s (measured: %s)\n", peaks.int8_dot_gops,
                ops::Int8DotPeakInstructions());
  } else {
    std::printf("  int8 dot peak        not available on this CPU (no AVX-512 VNNI or AVX2)\n");
  }
}

void AddComputePeaks(const ComputePeaks& peaks, Json& report) {
  for (ComputePeak peak : {ComputePeak::kFma, ComputePeak::kBf16Dot, ComputePeak::kInt8Dot}) {
    report[PeakJsonKey(peak)] = peaks.Of(peak);
  }
}

std::string PercentOfPeak(double rate, const ComputePeaks& peaks, ComputePeak peak) {
  const double ceiling = peaks.Of(peak);
  if (ceiling <= 0) return fmt::format(" ({} not available on this CPU)", PeakName(peak));
  return fmt::format(" = {:.1f}% of {}", 100 * rate / ceiling, PeakName(peak));
}

void SetFractionOfPeak(Json& figure, double rate, const ComputePeaks& peaks, ComputePeak peak) {
  const double ceiling = peaks.Of(peak);
  figure["fraction_of_peak"] = ceiling > 0 ? Json(rate / ceiling) : Json(nullptr);
  figure["peak"] = PeakJsonKey(peak);
}

}  // namespace mineru::apps
