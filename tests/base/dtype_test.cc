// SPDX-License-Identifier: Apache-2.0
#include "base/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mineru {
namespace {

TEST(DTypeTest, NamesRoundTrip) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kBool}) {
    EXPECT_EQ(DTypeFromName(DTypeName(d)), d);
  }
  EXPECT_FALSE(DTypeFromName("F8_E4M3").has_value());
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kI64), 8u);
}

TEST(DTypeTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1.0078125: ties to even (1.0).
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3*2^-8 is halfway between 1.0078125 (odd) and 1.015625 (even): rounds up.
  EXPECT_EQ(F32ToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(Bf16ToF32(0xc040), -3.0f);
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DTypeTest, F16AllValuesRoundTrip) {
  // Every finite binary16 value converts to float32 and back unchanged.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0) continue;  // NaN payloads
    ASSERT_EQ(F32ToF16(F16ToF32(bits)), bits) << "h=" << h;
  }
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(F32ToF16(65519.0f), 0x7bff);  // largest finite
}

}  // namespace
}  // namespace mineru
