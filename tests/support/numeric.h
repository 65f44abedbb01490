// SPDX-License-Identifier: Apache-2.0
// Comparing float arrays in tests: the largest absolute difference and the largest magnitude,
// for tolerances of the form MaxDiff(got, want) <= tol * (1 + MaxAbs(want)).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

namespace mineru::testing_support {

// max |a[i] - b[i]|, the difference taken in double (exact for two floats, so the result is the
// true distance, never rounded down under a tolerance). Arrays of different sizes fail the
// calling test and give infinity, which no tolerance passes.
inline double MaxDiff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double m = a.size() == b.size() ? 0 : std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, std::fabs(double{a[i]} - double{b[i]}));
  }
  return m;
}

// max |a[i]|; 0 for an empty array.
inline double MaxAbs(std::span<const float> a) {
  double m = 0;
  for (float x : a) m = std::max(m, double{std::fabs(x)});
  return m;
}

}  // namespace mineru::testing_support
