// SPDX-License-Identifier: Apache-2.0
// MaskTableImages against hand-derived geometry (mineru-vl-utils 1.2.1
// mask_and_encode_table_image): which pixels are filled, with which colour, where the token ink
// lands, what the token map holds, for every table angle.
#include "image/table_mask.h"

#include <gtest/gtest.h>

#include <array>
#include <regex>
#include <set>

#include "image/decode.h"
#include "image/transform.h"

namespace mineru::image {
namespace {

RgbImage Solid(int64_t w, int64_t h, std::array<uint8_t, 3> rgb) {
  RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<size_t>(w * h * 3));
  for (size_t i = 0; i < img.pixels.size(); i += 3) {
    img.pixels[i] = rgb[0];
    img.pixels[i + 1] = rgb[1];
    img.pixels[i + 2] = rgb[2];
  }
  return img;
}

void FillRect(RgbImage& img, int64_t x0, int64_t y0, int64_t x1, int64_t y1,
              std::array<uint8_t, 3> rgb) {
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t x = x0; x < x1; ++x) {
      uint8_t* p = img.row(y) + x * 3;
      p[0] = rgb[0];
      p[1] = rgb[1];
      p[2] = rgb[2];
    }
  }
}

std::array<uint8_t, 3> At(const RgbImage& img, int64_t x, int64_t y) {
  const uint8_t* p = img.row(y) + x * 3;
  return {p[0], p[1], p[2]};
}

// A 1000 x 1000 page: a light grey table at (100, 200)-(900, 600) with a red 100 x 80 picture at
// page (300, 300)-(400, 380).
struct Fixture {
  RgbImage page = Solid(1000, 1000, {255, 255, 255});
  std::array<double, 4> table = {0.1, 0.2, 0.9, 0.6};
  std::array<double, 4> picture = {0.3, 0.3, 0.4, 0.38};
  Fixture() {
    FillRect(page, 100, 200, 900, 600, {200, 200, 200});
    FillRect(page, 300, 300, 400, 380, {255, 0, 0});
  }
  RgbImage TableCrop() const { return *Crop(page, 100, 200, 900, 600); }
};

TEST(TableMaskTest, UprightTableFillsTheInclusiveBoxAndLabelsIt) {
  Fixture f;
  const std::array<std::array<double, 4>, 1> images = {f.picture};
  auto masked = MaskTableImages(f.page, f.TableCrop(), f.table, 0, images, 42);
  ASSERT_TRUE(masked) << masked.error().ToString();
  ASSERT_EQ(masked->image.width, 800);
  ASSERT_EQ(masked->image.height, 400);
  ASSERT_EQ(masked->images.size(), 1u);
  EXPECT_TRUE(std::regex_match(masked->images[0].first, std::regex(R"(\[[ACDGHKTWXYZ2-8]{4}\])")))
      << masked->images[0].first;
  // Relative box (200, 100, 300, 180): filled inclusively with the mean of the 8 grey points
  // around it; no red survives anywhere.
  for (int64_t y = 0; y < 400; ++y) {
    for (int64_t x = 0; x < 800; ++x)
      ASSERT_NE(At(masked->image, x, y)[0] - At(masked->image, x, y)[1], 255);
  }
  EXPECT_EQ(At(masked->image, 200, 100), (std::array<uint8_t, 3>{200, 200, 200}));
  EXPECT_EQ(At(masked->image, 300, 180), (std::array<uint8_t, 3>{200, 200, 200}));
  // The token is drawn in black near the box's centre; outside the box nothing changed.
  int dark = 0;
  for (int64_t y = 100; y <= 180; ++y) {
    for (int64_t x = 200; x <= 300; ++x) dark += At(masked->image, x, y)[0] < 100;
  }
  EXPECT_GT(dark, 50);
  EXPECT_EQ(At(masked->image, 150, 50), (std::array<uint8_t, 3>{200, 200, 200}));
  // The token's image is the red picture, as a JPEG of the truncated page box.
  auto decoded = DecodeImage(masked->images[0].second, {});
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->image.width, 100);
  EXPECT_EQ(decoded->image.height, 80);
  const auto centre = At(decoded->image, 50, 40);
  EXPECT_GT(centre[0], 240);
  EXPECT_LT(centre[1], 20);
}

TEST(TableMaskTest, WhiteTokenOnADarkFill) {
  Fixture f;
  FillRect(f.page, 100, 200, 900, 600, {20, 20, 60});
  FillRect(f.page, 300, 300, 400, 380, {255, 255, 0});
  const std::array<std::array<double, 4>, 1> images = {f.picture};
  auto masked = MaskTableImages(f.page, f.TableCrop(), f.table, 0, images, 1);
  ASSERT_TRUE(masked);
  int light = 0;
  for (int64_t y = 100; y <= 180; ++y) {
    for (int64_t x = 200; x <= 300; ++x) light += At(masked->image, x, y)[0] > 150;
  }
  EXPECT_GT(light, 50);
}

TEST(TableMaskTest, TurnedTablesMapTheBoxIntoTheTurnedCrop) {
  Fixture f;
  const std::array<std::array<double, 4>, 1> images = {f.picture};
  // Relative box (200, 100, 300, 180) in an 800 x 400 crop.
  struct Case {
    int angle;
    std::array<int64_t, 4> box;  // inclusive, in the turned crop
  };
  for (const Case& c : {Case{90, {100, 500, 180, 600}}, Case{180, {500, 220, 600, 300}},
                        Case{270, {220, 200, 300, 300}}}) {
    auto masked = MaskTableImages(f.page, f.TableCrop(), f.table, c.angle, images, 7);
    ASSERT_TRUE(masked) << c.angle;
    const bool sideways = c.angle != 180;
    EXPECT_EQ(masked->image.width, sideways ? 400 : 800) << c.angle;
    const auto& b = c.box;
    // Corners of the filled box carry the grey fill, one pixel outside is untouched grey too,
    // and no red remains.
    EXPECT_EQ(At(masked->image, b[0], b[1]), (std::array<uint8_t, 3>{200, 200, 200})) << c.angle;
    EXPECT_EQ(At(masked->image, b[2], b[3]), (std::array<uint8_t, 3>{200, 200, 200})) << c.angle;
    for (int64_t y = 0; y < masked->image.height; ++y) {
      for (int64_t x = 0; x < masked->image.width; ++x) {
        ASSERT_FALSE(At(masked->image, x, y)[0] == 255 && At(masked->image, x, y)[1] == 0)
            << c.angle << " red left at " << x << "," << y;
      }
    }
    auto decoded = DecodeImage(masked->images[0].second, {});
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->image.width, sideways ? 80 : 100) << c.angle;
  }
}

TEST(TableMaskTest, TokensAreUniqueAndFollowTheSeed) {
  Fixture f;
  std::vector<std::array<double, 4>> images;
  for (int i = 0; i < 40; ++i) {
    const double x = 0.11 + 0.019 * i;
    images.push_back({x, 0.25, x + 0.015, 0.27});
  }
  auto a = MaskTableImages(f.page, f.TableCrop(), f.table, 0, images, 99);
  auto b = MaskTableImages(f.page, f.TableCrop(), f.table, 0, images, 99);
  auto c = MaskTableImages(f.page, f.TableCrop(), f.table, 0, images, 100);
  ASSERT_TRUE(a && b && c);
  ASSERT_EQ(a->images.size(), 40u);
  std::set<std::string> tokens;
  for (size_t i = 0; i < a->images.size(); ++i) {
    tokens.insert(a->images[i].first);
    EXPECT_EQ(a->images[i].first, b->images[i].first);
  }
  EXPECT_EQ(tokens.size(), 40u);
  EXPECT_EQ(a->image.pixels, b->image.pixels);
  EXPECT_NE(a->images[0].first + a->images[1].first, c->images[0].first + c->images[1].first);
}

TEST(TableMaskTest, EmptyAndOutsideBoxesAreSkipped) {
  Fixture f;
  const std::vector<std::array<double, 4>> images = {
      {0.95, 0.7, 0.99, 0.8},    // outside the table: relative box empty
      {0.3, 0.3, 0.3, 0.38},     // zero width
      {0.3, 0.3, 0.3005, 0.38},  // under one pixel on the page
  };
  auto masked = MaskTableImages(f.page, f.TableCrop(), f.table, 0, images, 3);
  ASSERT_TRUE(masked);
  EXPECT_TRUE(masked->images.empty());
  EXPECT_EQ(masked->image.pixels, f.TableCrop().pixels);
}

}  // namespace
}  // namespace mineru::image
