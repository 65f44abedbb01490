// SPDX-License-Identifier: Apache-2.0
// Runs a test body once for every SIMD target the kernels were compiled for and this CPU
// supports, so each optimized kernel is checked against its scalar twin on every target.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "base/simd_targets.h"

namespace mineru::testing_support {

template <class Body>
void ForEachTarget(const Body& body) {
  for (int64_t target : SimdTargets()) {
    ForceSimdTarget(target);
    SCOPED_TRACE("target " + SimdTargetName(target));
    ASSERT_EQ(CurrentSimdTargetName(), SimdTargetName(target));
    body();
  }
  ForceSimdTarget(0);
}

}  // namespace mineru::testing_support
