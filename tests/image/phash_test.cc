// SPDX-License-Identifier: Apache-2.0
// The perceptual hash against a plain reference (box average and DCT-II written out from
// their definitions, on an image whose size the grid divides), and its behaviour: stable across
// resolution and JPEG re-encoding, far apart for different pages, a hint only.
#include "image/phash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "image/decode.h"
#include "image/encode.h"
#include "image/resize.h"

namespace mineru::image {
namespace {

// A "page": dark text-like bars of varying length on white, seeded by `variant`; odd variants
// also carry a dark figure over the upper left quarter.
RgbImage Page(int64_t width, int64_t height, int variant) {
  RgbImage page;
  page.width = width;
  page.height = height;
  page.pixels.assign(static_cast<size_t>(width * height * 3), 255);
  const int64_t line = std::max<int64_t>(2, height / 40);
  for (int64_t y = height / 10; y + line < height * 9 / 10; y += 2 * line) {
    const int64_t len = width / 2 + ((y / line) * 37 + variant * 101) % (width * 4 / 10);
    for (int64_t yy = y; yy < y + line; ++yy) {
      for (int64_t x = width / 10; x < std::min(width * 9 / 10, len); ++x) {
        uint8_t* p = page.row(yy) + x * 3;
        p[0] = p[1] = p[2] = 30;
      }
    }
  }
  if (variant % 2 == 1) {
    for (int64_t y = height / 10; y < height / 2; ++y) {
      for (int64_t x = width / 10; x < width / 2; ++x) {
        uint8_t* p = page.row(y) + x * 3;
        p[0] = 60;
        p[1] = 90;
        p[2] = 120;
      }
    }
  }
  return page;
}

// The definition, directly: cell means (each cell s x s pixels), the full 2-D DCT-II sum for
// each of the 64 low coefficients, median of the 63 AC ones.
uint64_t ReferenceHash(const RgbImage& image) {
  const int n = 32;
  const int64_t s = image.width / n;
  std::vector<double> grid(n * n, 0);
  for (int cy = 0; cy < n; ++cy) {
    for (int cx = 0; cx < n; ++cx) {
      double sum = 0;
      for (int64_t y = cy * s; y < (cy + 1) * s; ++y) {
        for (int64_t x = cx * s; x < (cx + 1) * s; ++x) {
          const uint8_t* p = image.row(y) + x * 3;
          sum += 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
        }
      }
      grid[static_cast<size_t>(cy * n + cx)] = sum / static_cast<double>(s * s);
    }
  }
  std::vector<double> c(64);
  for (int v = 0; v < 8; ++v) {
    for (int u = 0; u < 8; ++u) {
      double sum = 0;
      for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
          sum += grid[static_cast<size_t>(y * n + x)] *
                 std::cos(std::numbers::pi / n * (x + 0.5) * u) *
                 std::cos(std::numbers::pi / n * (y + 0.5) * v);
        }
      }
      c[static_cast<size_t>(v * 8 + u)] = sum;
    }
  }
  std::vector<double> ac(c.begin() + 1, c.end());
  std::sort(ac.begin(), ac.end());
  const double median = ac[ac.size() / 2];
  const double noise = 1e-9 * (std::abs(c[0]) + 1.0);
  uint64_t hash = 0;
  for (int i = 0; i < 64; ++i) {
    if (c[static_cast<size_t>(i)] > median + noise) hash |= uint64_t{1} << (63 - i);
  }
  return hash;
}

TEST(PerceptualHashTest, EqualsTheDefinitionWrittenOut) {
  for (int variant = 0; variant < 5; ++variant) {
    const RgbImage page = Page(256, 256, variant);  // 8 x 8 pixels per grid cell
    EXPECT_EQ(PerceptualHash(page), ReferenceHash(page)) << "variant " << variant;
  }
}

TEST(PerceptualHashTest, SamePageAtAnotherResolutionOrAsJpegIsNear) {
  const RgbImage page = Page(850, 1100, 3);
  const uint64_t h = PerceptualHash(page);
  auto smaller = ResizeBicubic(page, 425, 550);
  ASSERT_TRUE(smaller);
  EXPECT_LE(HammingDistance(h, PerceptualHash(*smaller)), 4);
  auto jpeg = EncodeJpeg(page);
  ASSERT_TRUE(jpeg);
  auto decoded = DecodeImage(*jpeg);
  ASSERT_TRUE(decoded);
  EXPECT_LE(HammingDistance(h, PerceptualHash(decoded->image)), 4);
}

TEST(PerceptualHashTest, DifferentPagesAreFarApart) {
  const uint64_t a = PerceptualHash(Page(850, 1100, 0));
  const uint64_t b = PerceptualHash(Page(850, 1100, 7));
  EXPECT_GT(HammingDistance(a, b), kNearDuplicateDistance);
  RgbImage blank;
  blank.width = 10;
  blank.height = 10;
  blank.pixels.assign(300, 255);
  // A uniform page: every AC coefficient is 0, the median too, so only DC is above it.
  EXPECT_EQ(PerceptualHash(blank), uint64_t{1} << 63);
  EXPECT_EQ(PerceptualHash(RgbImage{}), 0u);
  EXPECT_EQ(HammingDistance(0, ~uint64_t{0}), 64);
}

}  // namespace
}  // namespace mineru::image
