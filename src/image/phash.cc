// SPDX-License-Identifier: Apache-2.0
#include "image/phash.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numbers>
#include <vector>

namespace mineru::image {
namespace {

constexpr int kGrid = 32;  // luma grid the DCT runs on
constexpr int kLow = 8;    // low frequencies kept per axis

// Mean luma of each of kGrid x kGrid equal areas. Area edges fall between pixels in general:
// a pixel straddling an edge counts in both areas by its overlapping fraction.
std::array<double, kGrid * kGrid> LumaGrid(const RgbImage& image) {
  std::array<double, kGrid * kGrid> sum{};
  std::array<double, kGrid * kGrid> weight{};
  const double sx = static_cast<double>(kGrid) / static_cast<double>(image.width);
  const double sy = static_cast<double>(kGrid) / static_cast<double>(image.height);
  for (int64_t y = 0; y < image.height; ++y) {
    const double gy0 = y * sy, gy1 = (y + 1) * sy;
    const int cy0 = std::min(kGrid - 1, static_cast<int>(gy0));
    const int cy1 = std::min(kGrid - 1, static_cast<int>(std::ceil(gy1) - 1));
    const uint8_t* row = image.row(y);
    for (int64_t x = 0; x < image.width; ++x) {
      const uint8_t* p = row + x * 3;
      const double luma = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
      const double gx0 = x * sx, gx1 = (x + 1) * sx;
      const int cx0 = std::min(kGrid - 1, static_cast<int>(gx0));
      const int cx1 = std::min(kGrid - 1, static_cast<int>(std::ceil(gx1) - 1));
      for (int cy = cy0; cy <= cy1; ++cy) {
        const double wy = std::min(gy1, cy + 1.0) - std::max(gy0, static_cast<double>(cy));
        for (int cx = cx0; cx <= cx1; ++cx) {
          const double wx = std::min(gx1, cx + 1.0) - std::max(gx0, static_cast<double>(cx));
          const double w = wx * wy;
          if (w <= 0) continue;
          sum[static_cast<size_t>(cy * kGrid + cx)] += luma * w;
          weight[static_cast<size_t>(cy * kGrid + cx)] += w;
        }
      }
    }
  }
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = weight[i] > 0 ? sum[i] / weight[i] : 0;
  return sum;
}

}  // namespace

uint64_t PerceptualHash(const RgbImage& image) {
  if (image.empty()) return 0;
  const std::array<double, kGrid* kGrid> grid = LumaGrid(image);
  // DCT-II basis: cos(pi / N * (n + 1/2) * k) for the kLow lowest k.
  std::array<std::array<double, kGrid>, kLow> basis{};
  for (int k = 0; k < kLow; ++k) {
    for (int n = 0; n < kGrid; ++n) {
      basis[k][n] = std::cos(std::numbers::pi / kGrid * (n + 0.5) * k);
    }
  }
  // Rows first (kGrid x kLow), then columns (kLow x kLow).
  std::array<double, kGrid * kLow> rows{};
  for (int y = 0; y < kGrid; ++y) {
    for (int u = 0; u < kLow; ++u) {
      double s = 0;
      for (int x = 0; x < kGrid; ++x) s += grid[static_cast<size_t>(y * kGrid + x)] * basis[u][x];
      rows[static_cast<size_t>(y * kLow + u)] = s;
    }
  }
  std::array<double, kLow * kLow> coefficients{};  // (u, v) at index 8 * v + u
  for (int v = 0; v < kLow; ++v) {
    for (int u = 0; u < kLow; ++u) {
      double s = 0;
      for (int y = 0; y < kGrid; ++y) s += rows[static_cast<size_t>(y * kLow + u)] * basis[v][y];
      coefficients[static_cast<size_t>(v * kLow + u)] = s;
    }
  }
  // The median of the 63 AC coefficients (the DC term only measures brightness).
  std::vector<double> ac(coefficients.begin() + 1, coefficients.end());
  std::nth_element(ac.begin(), ac.begin() + ac.size() / 2, ac.end());
  const double median = ac[ac.size() / 2];
  // Rounding leaves coefficients that are zero in exact arithmetic (a flat image's AC terms) at
  // about 1e-13 of the DC term: "above" means by more than that noise, so such images hash
  // the same on every machine.
  const double noise = 1e-9 * (std::abs(coefficients[0]) + 1.0);
  uint64_t hash = 0;
  for (size_t i = 0; i < coefficients.size(); ++i) {
    if (coefficients[i] > median + noise) hash |= uint64_t{1} << (63 - i);
  }
  return hash;
}

int HammingDistance(uint64_t a, uint64_t b) { return std::popcount(a ^ b); }

}  // namespace mineru::image
