// SPDX-License-Identifier: Apache-2.0
// Bicubic resize against Pillow 9.4 (every pair pillow_reference.py writes: random sizes up and
// down, edge cases, 28-multiples as smart_resize makes them), the scalar twin against the SIMD
// kernels on every compiled target, with and without threads, and the int32 overflow bound.
#include "image/resize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>

#include "base/thread_pool.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

using testing::Reference;

RgbImage FromReference(const Reference& ref, const Json& size, const Json& pixels) {
  RgbImage image;
  image.width = size[0];
  image.height = size[1];
  image.pixels = ref.Copy(pixels);
  return image;
}

TEST(ResizeTest, ScalarTwinMatchesPillow) {
  const Reference& ref = Reference::Get("resize");
  ASSERT_GE(ref.cases().size(), 200u);
  int exact = 0;
  for (const Json& c : ref.cases()) {
    SCOPED_TRACE(c["src"].dump() + " -> " + c["dst"].dump());
    const RgbImage src = FromReference(ref, c["src"], c["src_pixels"]);
    const RgbImage want = FromReference(ref, c["dst"], c["dst_pixels"]);
    auto got = ResizeBicubicScalar(src, want.width, want.height);
    ASSERT_TRUE(got) << got.error().ToString();
    const std::string diff = testing::FirstDifference(*got, want);
    EXPECT_EQ(diff, "");
    exact += diff.empty();
  }
  std::printf("scalar twin: %d of %zu Pillow resizes bit-exact\n", exact, ref.cases().size());
}

TEST(ResizeTest, SimdMatchesPillowOnEveryTargetWithAndWithoutThreads) {
  const Reference& ref = Reference::Get("resize");
  ThreadPool pool(3);
  int targets = 0;
  testing::ForEachTarget([&] {
    ++targets;
    int exact = 0;
    for (const Json& c : ref.cases()) {
      SCOPED_TRACE(c["src"].dump() + " -> " + c["dst"].dump());
      const RgbImage src = FromReference(ref, c["src"], c["src_pixels"]);
      const RgbImage want = FromReference(ref, c["dst"], c["dst_pixels"]);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        auto got = ResizeBicubic(src, want.width, want.height, p);
        ASSERT_TRUE(got) << got.error().ToString();
        const std::string diff = testing::FirstDifference(*got, want);
        EXPECT_EQ(diff, "") << (p != nullptr ? "3 threads" : "1 thread");
        exact += diff.empty();
      }
    }
    std::printf("%s: %d of %zu Pillow resizes bit-exact (1 and 3 threads)\n",
                CurrentSimdTargetName().c_str(), exact, 2 * ref.cases().size());
  });
  EXPECT_GE(targets, 2);  // at least one SIMD target besides the baseline
}

// Larger random pairs (no Pillow here): every target equals the scalar twin.
TEST(ResizeTest, SimdEqualsScalarOnLargerImages) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  for (int i = 0; i < 12; ++i) {
    const int64_t sw = 200 + rng() % 1400, sh = 200 + rng() % 1400;
    const int64_t tw = 1 + rng() % 1600, th = 1 + rng() % 1600;
    SCOPED_TRACE(std::to_string(sw) + "x" + std::to_string(sh) + " -> " + std::to_string(tw) + "x" +
                 std::to_string(th));
    const RgbImage src = testing::NoiseImage(sw, sh, 100 + i);
    auto scalar = ResizeBicubicScalar(src, tw, th);
    ASSERT_TRUE(scalar);
    testing::ForEachTarget([&] {
      auto simd = ResizeBicubic(src, tw, th, &pool);
      ASSERT_TRUE(simd);
      EXPECT_EQ(testing::FirstDifference(*simd, *scalar), "");
    });
  }
}

TEST(ResizeTest, SameSizeIsACopy) {
  const RgbImage src = testing::NoiseImage(31, 17, 3);
  auto out = ResizeBicubic(src, 31, 17);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->pixels, src.pixels);
}

TEST(ResizeTest, BadSizesAreErrors) {
  const RgbImage src = testing::NoiseImage(8, 8, 1);
  for (auto [w, h] : {std::pair<int64_t, int64_t>{0, 5}, {5, 0}, {-1, 5}, {kMaxImageSide + 1, 1}}) {
    auto out = ResizeBicubic(src, w, h);
    ASSERT_FALSE(out) << w << "x" << h;
    EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
    EXPECT_FALSE(ResizeBicubicScalar(src, w, h));
  }
  EXPECT_FALSE(ResizeBicubic(RgbImage{}, 4, 4));
}

// resize.h's claim: the absolute weights of one output sum to at most 1.27 (times 2^22), so
// 255 times that plus the rounding half stays far below 2^31.
TEST(ResizeTest, FixedPointWeightsCannotOverflowInt32) {
  double worst = 0;
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 130; ++n) sizes.push_back(n);
  for (int64_t n : {255, 256, 333, 517, 1000, 1036, 1700, 2200, 3500, 9999}) sizes.push_back(n);
  for (int64_t in : sizes) {
    for (int64_t out : sizes) {
      const auto c = internal::ComputeCoefficients(in, out);
      for (int64_t i = 0; i < out; ++i) {
        int64_t sum = 0, abs_sum = 0;
        for (int k = 0; k < c.count[i]; ++k) {
          sum += c.kk[i * c.ksize + k];
          abs_sum += std::abs(int64_t{c.kk[i * c.ksize + k]});
        }
        ASSERT_LE(std::abs(sum - (int64_t{1} << 22)), c.ksize) << in << " -> " << out;
        worst = std::max(worst, static_cast<double>(abs_sum) / (1 << 22));
      }
    }
  }
  EXPECT_LE(worst, 1.27);
  EXPECT_LT((1 << 21) + 255.0 * worst * (1 << 22), 2147483647.0);
}

}  // namespace
}  // namespace mineru::image
