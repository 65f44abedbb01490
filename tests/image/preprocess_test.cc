// SPDX-License-Identifier: Apache-2.0
// Qwen2-VL preprocessing against Hugging Face transformers' own outputs (tests/data/qwen2vl-tiny):
// smart_resize on every golden case (half-to-even ties, both branches, the error messages), and
// pixel_values / image_grid_thw bit for bit for every golden image. Plus the config reader.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/npy.h"
#include "base/thread_pool.h"
#include "image/decode.h"
#include "image/qwen2vl_preprocess.h"
#include "image_test_util.h"

namespace mineru::image {
namespace {

TEST(SmartResizeTest, EveryGoldenCase) {
  auto cases = ReadJsonFile(testing::kGoldenImages + "/smart_resize_cases.json", 1 << 20);
  ASSERT_TRUE(cases) << cases.error().ToString();
  ASSERT_EQ(cases->size(), 54u);
  int errors = 0;
  for (const Json& c : *cases) {
    SCOPED_TRACE(c.dump());
    auto got = SmartResize(c["h"], c["w"], 28, c["min_pixels"], c["max_pixels"]);
    if (c.contains("error")) {
      ++errors;
      ASSERT_FALSE(got);
      EXPECT_EQ(got.error().code, ErrorCode::kInvalidArgument);
      EXPECT_EQ(got.error().message, c["error"].get<std::string>());
    } else {
      ASSERT_TRUE(got) << got.error().ToString();
      EXPECT_EQ(got->height, c["out_h"].get<int64_t>());
      EXPECT_EQ(got->width, c["out_w"].get<int64_t>());
    }
  }
  EXPECT_EQ(errors, 9);
}

TEST(SmartResizeTest, HalfToEvenAndTheLayoutSize) {
  // 42 / 28 = 1.5 rounds to 2, 70 / 28 = 2.5 rounds to 2.
  auto tie = SmartResize(42, 70, 28, 56 * 56, 28 * 28 * 1280);
  ASSERT_TRUE(tie);
  EXPECT_EQ(tie->height, 56);
  EXPECT_EQ(tie->width, 56);
  // MinerU's layout image passes unchanged (1036 = 37 x 28) under its own bounds.
  auto layout = SmartResize(1036, 1036, 28, 50176, 1605632);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->height, 1036);
  EXPECT_EQ(layout->width, 1036);
  // A max_pixels below one block leaves nothing: an error, not an empty image.
  auto nothing = SmartResize(28, 5000, 28, 1, 100);
  ASSERT_FALSE(nothing);
}

struct Golden {
  const char* name;
  int64_t t, h, w;
};

TEST(PreprocessTest, PixelValuesBitExactForEveryGoldenImage) {
  auto config = ReadImageProcessorConfig(testing::kModelDir);
  ASSERT_TRUE(config) << config.error().ToString();
  ThreadPool pool(3);
  for (const Golden& g : {Golden{"doc_400x300", 1, 22, 28}, Golden{"odd_333x517", 1, 36, 24},
                          Golden{"tiny_50x40", 1, 4, 6}}) {
    SCOPED_TRACE(g.name);
    const std::string base = testing::kGoldenImages + "/" + g.name;
    auto image = DecodeImageFile(base + ".png");
    ASSERT_TRUE(image) << image.error().ToString();
    auto want = ReadNpy(base + ".pixel_values.npy");
    auto grid = ReadNpy(base + ".image_grid_thw.npy");
    ASSERT_TRUE(want && grid);
    auto want_values = want->ToF32();
    auto want_grid = grid->ToI64();
    ASSERT_TRUE(want_values && want_grid);
    EXPECT_EQ(*want_grid, (std::vector<int64_t>{g.t, g.h, g.w}));
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      auto got = PreprocessImage(image->image, *config, p);
      ASSERT_TRUE(got) << got.error().ToString();
      EXPECT_EQ(got->grid.t, g.t);
      EXPECT_EQ(got->grid.h, g.h);
      EXPECT_EQ(got->grid.w, g.w);
      EXPECT_EQ(got->rows, g.t * g.h * g.w);
      EXPECT_EQ(got->cols, 1176);
      EXPECT_EQ(want->shape, (std::vector<int64_t>{got->rows, got->cols}));
      ASSERT_EQ(got->values.size(), want_values->size());
      size_t mismatches = 0;
      for (size_t i = 0; i < got->values.size(); ++i) {
        mismatches += std::memcmp(&got->values[i], &(*want_values)[i], sizeof(float)) != 0;
      }
      EXPECT_EQ(mismatches, 0u) << "of " << got->values.size();
    }
  }
}

// The layout of one row, from first principles: a pixel's value encodes its position.
TEST(PreprocessTest, PatchesComeInMergeWindowOrder) {
  ImageProcessorConfig c;
  c.do_rescale = false;
  c.do_normalize = false;
  RgbImage image;
  image.width = 56;
  image.height = 84;
  image.pixels.resize(56 * 84 * 3);
  for (int64_t y = 0; y < 84; ++y) {
    for (int64_t x = 0; x < 56; ++x) {
      for (int ch = 0; ch < 3; ++ch)
        image.row(y)[x * 3 + ch] = static_cast<uint8_t>((x + 2 * y + 50 * ch) % 251);
    }
  }
  auto out = Patchify(image, c);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->grid.h, 6);
  EXPECT_EQ(out->grid.w, 4);
  const int64_t m = 2, p = 14, t = 2;
  for (int64_t row = 0; row < out->rows; ++row) {
    // row = ((bh * (gw / m) + bw) * m + dh) * m + dw
    const int64_t dw = row % m, dh = (row / m) % m, bw = (row / (m * m)) % 2,
                  bh = row / (m * m * 2);
    const int64_t py0 = (bh * m + dh) * p, px0 = (bw * m + dw) * p;
    for (int64_t col = 0; col < out->cols; col += 37) {
      const int64_t px = col % p, py = (col / p) % p, ch = col / (p * p * t);
      const float want = static_cast<float>(((px0 + px) + 2 * (py0 + py) + 50 * ch) % 251);
      ASSERT_EQ(out->values[row * out->cols + col], want) << row << "," << col;
    }
  }
  // Sizes that are not multiples of 28 are refused.
  image.width = 55;
  EXPECT_FALSE(Patchify(image, c));
}

Result<ImageProcessorConfig> Parse(const std::string& text) {
  auto json = ParseJson(text, "preprocessor_config.json");
  if (!json) return tl::unexpected(json.error());
  return ParseImageProcessorConfig(*json, "preprocessor_config.json");
}

TEST(ImageProcessorConfigTest, ReadsTheCheckpointFile) {
  auto c = ReadImageProcessorConfig(testing::kModelDir);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->min_pixels, 3136);
  EXPECT_EQ(c->max_pixels, 1003520);
  EXPECT_EQ(c->patch_size, 14);
  EXPECT_EQ(c->temporal_patch_size, 2);
  EXPECT_EQ(c->merge_size, 2);
  EXPECT_EQ(c->factor(), 28);
  EXPECT_EQ(c->patch_dim(), 1176);
  EXPECT_EQ(c->image_mean[1], 0.4578275);
  EXPECT_EQ(c->image_std[2], 0.27577711);
  EXPECT_EQ(c->rescale_factor, 0.00392156862745098);
}

TEST(ImageProcessorConfigTest, PixelBoundsFromEveryLayout) {
  auto defaults = Parse("{}");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->min_pixels, kDefaultMinPixels);
  EXPECT_EQ(defaults->max_pixels, kDefaultMaxPixels);
  auto size = Parse(R"({"size": {"min_pixels": 50176, "max_pixels": 1605632}})");
  ASSERT_TRUE(size);
  EXPECT_EQ(size->min_pixels, 50176);
  EXPECT_EQ(size->max_pixels, 1605632);
  auto edges = Parse(R"({"size": {"shortest_edge": 100, "longest_edge": 200}})");
  ASSERT_TRUE(edges);
  EXPECT_EQ(edges->min_pixels, 100);
  EXPECT_EQ(edges->max_pixels, 200);
  auto top = Parse(R"({"min_pixels": 7, "max_pixels": 9, "size": {"shortest_edge": 1,
                       "longest_edge": 2}})");
  ASSERT_TRUE(top);
  EXPECT_EQ(top->min_pixels, 7);
  EXPECT_EQ(top->max_pixels, 9);
  auto scalar_mean = Parse(R"({"image_mean": 0.5, "image_std": [1, 2, 3]})");
  ASSERT_TRUE(scalar_mean);
  EXPECT_EQ(scalar_mean->image_mean[2], 0.5);
  EXPECT_EQ(scalar_mean->image_std[2], 3.0);
}

TEST(ImageProcessorConfigTest, BadFieldsAreNamed) {
  struct Bad {
    const char* json;
    ErrorCode code;
    const char* needle;
  };
  for (const Bad& b : {
           Bad{R"([1])", ErrorCode::kCorrupt, "expected a JSON object"},
           Bad{R"({"patch_size": "14"})", ErrorCode::kCorrupt, "'patch_size'"},
           Bad{R"({"patch_size": 0})", ErrorCode::kCorrupt, "'patch_size' = 0"},
           Bad{R"({"merge_size": 65})", ErrorCode::kCorrupt, "'merge_size'"},
           Bad{R"({"max_pixels": 0})", ErrorCode::kCorrupt, "'max_pixels'"},
           Bad{R"({"max_pixels": 67108865})", ErrorCode::kCorrupt, "'max_pixels'"},
           Bad{R"({"min_pixels": -1})", ErrorCode::kCorrupt, "'min_pixels'"},
           Bad{R"({"resample": 2})", ErrorCode::kUnsupported, "BICUBIC"},
           Bad{R"({"image_mean": [1, 2]})", ErrorCode::kCorrupt, "'image_mean'"},
           Bad{R"({"image_std": [1, 0, 1]})", ErrorCode::kCorrupt, "'image_std'"},
           Bad{R"({"rescale_factor": -1})", ErrorCode::kCorrupt, "'rescale_factor'"},
           Bad{R"({"do_resize": 1})", ErrorCode::kCorrupt, "'do_resize'"},
           Bad{R"({"size": 5})", ErrorCode::kCorrupt, "'size'"},
           Bad{R"({"image_processor_type": "SiglipImageProcessor"})", ErrorCode::kUnsupported,
               "SiglipImageProcessor"},
       }) {
    SCOPED_TRACE(b.json);
    auto c = Parse(b.json);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, b.code) << c.error().ToString();
    EXPECT_NE(c.error().message.find(b.needle), std::string::npos) << c.error().ToString();
    EXPECT_NE(c.error().message.find("preprocessor_config.json"), std::string::npos);
  }
  // 2^26 pixels is the largest accepted.
  EXPECT_TRUE(Parse(R"({"max_pixels": 67108864})"));
}

TEST(ImageProcessorConfigTest, MissingFileNamesThePath) {
  auto c = ReadImageProcessorConfig(::testing::TempDir() + "/no_model_here");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("preprocessor_config.json"), std::string::npos);
}

}  // namespace
}  // namespace mineru::image
