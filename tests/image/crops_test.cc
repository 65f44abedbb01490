// SPDX-License-Identifier: Apache-2.0
// MinerU's image rules on real pages (the committed 200-DPI renders) against Pillow running
// MinerU's own code: the 1036 x 1036 layout image, and block crops rotated and passed through
// resize_by_need (both its ceil and its round variant), bit for bit. Plus the rules' boundaries
// and the pixel moves (crop, rotate, paste) on their own.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/thread_pool.h"
#include "image/decode.h"
#include "image/mineru_crops.h"
#include "image/transform.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

using testing::Reference;

TEST(CropsTest, LayoutAndBlocksMatchPillowOnRealPages) {
  const Reference& ref = Reference::Get("crops");
  ThreadPool pool(2);
  int layouts = 0, blocks = 0, skipped = 0;
  for (const Json& page : ref.cases()) {
    const std::string path = testing::kData + "/" + page["file"].get<std::string>();
    SCOPED_TRACE(path);
    auto decoded = DecodeImageFile(path);
    ASSERT_TRUE(decoded) << decoded.error().ToString();
    const RgbImage& image = decoded->image;
    testing::ForEachTarget([&] {
      auto layout = PrepareLayoutImage(image, &pool);
      ASSERT_TRUE(layout) << layout.error().ToString();
      RgbImage want;
      want.width = want.height = kLayoutImageSize;
      want.pixels = ref.Copy(page["layout"]);
      EXPECT_EQ(testing::FirstDifference(*layout, want), "");
      ++layouts;
    });
    for (const Json& block : page["blocks"]) {
      SCOPED_TRACE(block["bbox"].dump() + " angle " + block["angle"].dump());
      const std::array<double, 4> bbox = {block["bbox"][0], block["bbox"][1], block["bbox"][2],
                                          block["bbox"][3]};
      const int angle = block["angle"].is_null() ? -1 : block["angle"].get<int>();
      for (auto [key, rounding] : {std::pair{"ceil", UpscaleRounding::kCeil},
                                   std::pair{"round", UpscaleRounding::kRound}}) {
        CropRules rules;
        rules.rounding = rounding;
        auto out = PrepareBlockImage(image, bbox, angle, rules, &pool);
        ASSERT_TRUE(out) << out.error().ToString();
        if (block.value("skipped", false)) {
          EXPECT_FALSE(out->has_value());
          ++skipped;
          continue;
        }
        ASSERT_TRUE(out->has_value());
        RgbImage want;
        want.width = block[key]["size"][0];
        want.height = block[key]["size"][1];
        want.pixels = ref.Copy(block[key]["pixels"]);
        EXPECT_EQ(testing::FirstDifference(**out, want), "") << key;
        ++blocks;
      }
    }
  }
  std::printf(
      "MinerU rules bit-exact with Pillow: %d layout images (per SIMD target), %d block "
      "crops, %d empty crops skipped\n",
      layouts, blocks, skipped);
  EXPECT_GE(blocks, 150);
}

TEST(CropsTest, ResizeByNeedBoundaries) {
  auto size_of = [](int64_t w, int64_t h, UpscaleRounding rounding = UpscaleRounding::kCeil) {
    CropRules rules;
    rules.rounding = rounding;
    auto out = ResizeByNeed(testing::NoiseImage(w, h, 1), rules);
    EXPECT_TRUE(out);
    return out ? std::pair<int64_t, int64_t>{out->width, out->height}
               : std::pair<int64_t, int64_t>{};
  };
  // Exactly 50:1 stays; one more pixel pads to 50:1 (short side ceil(long / 50)).
  EXPECT_EQ(size_of(1400, 28), (std::pair<int64_t, int64_t>{1400, 28}));
  EXPECT_EQ(size_of(1401, 28), (std::pair<int64_t, int64_t>{1401, 29}));
  EXPECT_EQ(size_of(28, 1401), (std::pair<int64_t, int64_t>{29, 1401}));
  // A short side of 28 stays; 27 is scaled up to 28.
  EXPECT_EQ(size_of(100, 28), (std::pair<int64_t, int64_t>{100, 28}));
  EXPECT_EQ(size_of(100, 27), (std::pair<int64_t, int64_t>{104, 28}));
  // 1 x 3: scale 28, both rounding rules agree; 3 x 7 at scale 28 / 3 differs (65.33).
  EXPECT_EQ(size_of(1, 3), (std::pair<int64_t, int64_t>{28, 84}));
  EXPECT_EQ(size_of(7, 3), (std::pair<int64_t, int64_t>{66, 28}));
  EXPECT_EQ(size_of(7, 3, UpscaleRounding::kRound), (std::pair<int64_t, int64_t>{65, 28}));
  // The pad is white and the crop sits centred, offset int((new - old) / 2).
  auto padded = ResizeByNeed(testing::NoiseImage(200, 1, 3));
  ASSERT_TRUE(padded);
  ASSERT_EQ(padded->height, 28);  // 200 x 4 after padding, then scaled by 7
  EXPECT_FALSE(ResizeByNeed(RgbImage{}));
}

TEST(TransformTest, CropOutsideTheImageIsBlackAndRoundsHalfToEven) {
  const RgbImage image = testing::NoiseImage(4, 3, 2);
  auto crop = Crop(image, -1, -1, 2, 1);
  ASSERT_TRUE(crop);
  EXPECT_EQ(crop->width, 3);
  EXPECT_EQ(crop->height, 2);
  EXPECT_EQ(crop->row(0)[0], 0);                          // outside
  EXPECT_EQ(crop->row(1)[3], image.row(0)[0]);            // (1, 1) is source (0, 0)
  EXPECT_FALSE(Crop(image, 3, 0, 2, 1));                  // right < left
  auto rounded = CropRounded(image, 0.5, 1.5, 2.5, 2.5);  // -> (0, 2, 2, 2)
  ASSERT_TRUE(rounded);
  EXPECT_EQ(rounded->width, 2);
  EXPECT_EQ(rounded->height, 0);
  EXPECT_FALSE(CropRounded(image, NAN, 0, 1, 1));
}

TEST(TransformTest, QuarterTurnsComposeAndRoundTrip) {
  const RgbImage image = testing::NoiseImage(5, 3, 4);
  auto r90 = RotateQuarterTurns(image, 90);
  auto r270 = RotateQuarterTurns(*r90, 270);
  auto r180 = RotateQuarterTurns(image, 180);
  auto twice = RotateQuarterTurns(*RotateQuarterTurns(image, 90), 90);
  ASSERT_TRUE(r90 && r270 && r180 && twice);
  EXPECT_EQ(r90->width, 3);
  EXPECT_EQ(r270->pixels, image.pixels);
  EXPECT_EQ(twice->pixels, r180->pixels);
  // Counter-clockwise: the top-right corner comes to the top-left.
  EXPECT_EQ(0, std::memcmp(r90->row(0), image.row(0) + 4 * 3, 3));
  EXPECT_EQ(RotateQuarterTurns(image, -90)->pixels, RotateQuarterTurns(image, 270)->pixels);
  EXPECT_FALSE(RotateQuarterTurns(image, 45));
  // Transposes: each is its own inverse, or the inverse of its partner.
  for (Transpose op : {Transpose::kFlipLeftRight, Transpose::kFlipTopBottom, Transpose::kRotate180,
                       Transpose::kTranspose, Transpose::kTransverse}) {
    EXPECT_EQ(TransposeImage(TransposeImage(image, op), op).pixels, image.pixels);
  }
}

}  // namespace
}  // namespace mineru::image
