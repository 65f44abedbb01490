// SPDX-License-Identifier: Apache-2.0
// The machine's compute ceilings: sane numbers, and 0 exactly where the CPU lacks the
// instruction. Never compared with each other or with a time: they are measurements.
#include "ops/machine_peak.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/cpu_features.h"

namespace mineru::ops {
namespace {

// Short runs: the figures only need to exist, not to be accurate.
constexpr double kSeconds = 0.02;

TEST(MachinePeakTest, FmaPeakIsPositive) {
  ThreadPool pool(2);
  const double peak = MeasureFmaPeakGflops(pool, kSeconds);
  EXPECT_TRUE(std::isfinite(peak));
  EXPECT_GT(peak, 0);
}

TEST(MachinePeakTest, Bf16DotPeakIsPositiveExactlyWhereSupported) {
  ThreadPool pool(2);
  const double peak = MeasureBf16DotPeakGflops(pool, kSeconds);
  EXPECT_TRUE(std::isfinite(peak));
  if (CpuHasAvx512Bf16()) {
    EXPECT_GT(peak, 0);
  } else {
    EXPECT_EQ(peak, 0);
  }
}

TEST(MachinePeakTest, Int8DotPeakIsPositiveExactlyWhereSupported) {
  ThreadPool pool(2);
  const double peak = MeasureInt8DotPeakGops(pool, kSeconds);
  EXPECT_TRUE(std::isfinite(peak));
  if (CpuHasAvx512Vnni()) {
    EXPECT_GT(peak, 0);
    EXPECT_STREQ(Int8DotPeakInstructions(), "AVX-512 VNNI vpdpbusd");
  } else if (CpuHasAvx2Fma()) {
    EXPECT_GT(peak, 0);
    EXPECT_STREQ(Int8DotPeakInstructions(), "AVX2 vpmaddubsw + vpmaddwd");
  } else {
    EXPECT_EQ(peak, 0);
    EXPECT_STREQ(Int8DotPeakInstructions(), "");
  }
}

TEST(MachinePeakTest, OneThreadWorks) {
  ThreadPool pool(1);
  EXPECT_GE(MeasureBf16DotPeakGflops(pool, kSeconds), 0);
  EXPECT_GE(MeasureInt8DotPeakGops(pool, kSeconds), 0);
  EXPECT_GT(MeasureFmaPeakGflops(pool, kSeconds), 0);
}

#if !defined(__x86_64__)
TEST(MachinePeakTest, NoDotFeaturesOffX86) {
  EXPECT_FALSE(CpuHasAvx512Bf16());
  EXPECT_FALSE(CpuHasAvx512Vnni());
  EXPECT_FALSE(CpuHasAvx2Fma());
}
#endif

}  // namespace
}  // namespace mineru::ops
