// SPDX-License-Identifier: Apache-2.0
// Step 2 of the Pro client (mineru-vl-utils 1.2.1 prepare_for_extract): TV-44 and the rules
// around it.
#include "pipeline/block_requests_pro.h"

#include <gtest/gtest.h>

#include <regex>

namespace mineru::pipeline {
namespace {

image::RgbImage Page(int64_t w, int64_t h) {
  image::RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.assign(static_cast<size_t>(w * h * 3), 230);
  return img;
}

ContentBlock Block(BlockType type, std::array<double, 4> bbox, int angle = 0) {
  ContentBlock b;
  b.type = type;
  b.bbox = bbox;
  b.angle = angle;
  return b;
}

TEST(BlockRequestsProTest, Tv44StepTwoSelection) {
  std::vector<ContentBlock> blocks = {
      Block(BlockType::kTable, {0.1, 0.1, 0.9, 0.5}),             // 0
      Block(BlockType::kImage, {0.12, 0.12, 0.3, 0.2}),           // 1 inside the table
      Block(BlockType::kImage, {0.1, 0.6, 0.15, 0.62}),           // 2 too small
      Block(BlockType::kImage, {0.1, 0.6, 0.5, 0.7}),             // 3 eligible by area
      Block(BlockType::kImageBlock, {0.5, 0.6, 0.95, 0.95}),      // 4 container
      Block(BlockType::kChart, {0.55, 0.65, 0.9, 0.9}),           // 5 inside the image_block
      Block(BlockType::kImageCaption, {0.55, 0.91, 0.9, 0.94}),   // 6 deleted
      Block(BlockType::kEquationBlock, {0.1, 0.75, 0.45, 0.85}),  // 7
      Block(BlockType::kList, {0.1, 0.86, 0.45, 0.95}),           // 8
      Block(BlockType::kText, {0.1, 0.96, 0.9, 0.99}, 90),        // 9
  };
  std::vector<std::string> warnings;
  const std::vector<BlockRequest> requests =
      PrepareProRequests(Page(1000, 1400), blocks, {.image_analysis = true}, &warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(blocks.size(), 9u);  // the internal caption is gone
  EXPECT_EQ(blocks[6].type, BlockType::kEquationBlock);
  EXPECT_TRUE(blocks[1].absorbed_by_table);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i != 1) EXPECT_FALSE(blocks[i].absorbed_by_table) << i;
  }
  ASSERT_EQ(requests.size(), 3u);

  EXPECT_EQ(requests[0].block, 0u);
  EXPECT_EQ(requests[0].prompt, "\nTable Recognition:");
  EXPECT_EQ(requests[0].image.width, 800);
  EXPECT_EQ(requests[0].image.height, 560);
  EXPECT_FLOAT_EQ(requests[0].sampling.presence_penalty, 1.0f);
  EXPECT_FLOAT_EQ(requests[0].sampling.frequency_penalty, 0.005f);
  ASSERT_EQ(blocks[0].table_image_tokens.size(), 1u);
  EXPECT_TRUE(std::regex_match(blocks[0].table_image_tokens[0].first,
                               std::regex(R"(\[[ACDGHKTWXYZ2-8]{4}\])")));
  EXPECT_TRUE(blocks[0].table_image_tokens[0].second.starts_with("data:image/jpeg;base64,/9j/"));

  EXPECT_EQ(requests[1].block, 3u);
  EXPECT_EQ(requests[1].prompt, "\nImage Analysis:");
  EXPECT_EQ(requests[1].image.width, 400);
  EXPECT_EQ(requests[1].image.height, 140);
  EXPECT_FLOAT_EQ(requests[1].sampling.frequency_penalty, 0.05f);

  EXPECT_EQ(requests[2].block, 8u);
  EXPECT_EQ(requests[2].prompt, "\nText Recognition:");
  EXPECT_EQ(requests[2].image.width, 42);  // 800 x 42 turned upright
  EXPECT_EQ(requests[2].image.height, 800);
}

TEST(BlockRequestsProTest, ImageAnalysisOffSkipsImagesAndCharts) {
  std::vector<ContentBlock> blocks = {Block(BlockType::kImage, {0.1, 0.1, 0.5, 0.5}),
                                      Block(BlockType::kChart, {0.5, 0.5, 0.9, 0.9}),
                                      Block(BlockType::kText, {0.1, 0.6, 0.4, 0.7})};
  const auto requests =
      PrepareProRequests(Page(500, 500), blocks, {.image_analysis = false}, nullptr);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].block, 2u);
}

TEST(BlockRequestsProTest, EligibilityBoundaries) {
  // w > 0.1 and h > 0.1, or w * h > 0.01.
  std::vector<ContentBlock> blocks = {
      Block(BlockType::kImage, {0.0, 0.0, 0.11, 0.11}),  // both sides over 0.1
      Block(BlockType::kChart, {0.0, 0.2, 0.05, 0.45}),  // w*h = 0.0125
      Block(BlockType::kImage, {0.0, 0.5, 0.1, 0.6}),    // w*h about 0.01, sides not over 0.1
      Block(BlockType::kImage, {0.5, 0.0, 0.55, 0.1}),   // 0.005
  };
  const auto requests = PrepareProRequests(Page(1000, 1000), blocks, {}, nullptr);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].block, 0u);
  EXPECT_EQ(requests[1].block, 1u);
}

TEST(BlockRequestsProTest, ImagesGoToTheTableCoveringThemMostThenTheSmaller) {
  std::vector<ContentBlock> blocks = {
      Block(BlockType::kTable, {0.0, 0.0, 1.0, 1.0}),
      Block(BlockType::kTable, {0.1, 0.1, 0.6, 0.6}),
      Block(BlockType::kImage, {0.4, 0.4, 0.5, 0.5}),    // fully inside both: the smaller table
      Block(BlockType::kImage, {0.2, 0.15, 0.3, 0.2}),   // likewise, above the first: sorted first
      Block(BlockType::kChart, {0.2, 0.3, 0.35, 0.45}),  // charts are never absorbed
      Block(BlockType::kImage, {0.55, 0.55, 0.7, 0.7}),  // 11 % inside the small one: the big
  };
  const auto requests = PrepareProRequests(Page(1000, 1000), blocks, {}, nullptr);
  EXPECT_TRUE(blocks[2].absorbed_by_table);
  EXPECT_TRUE(blocks[3].absorbed_by_table);
  EXPECT_FALSE(blocks[4].absorbed_by_table);
  EXPECT_TRUE(blocks[5].absorbed_by_table);
  EXPECT_EQ(blocks[0].table_image_tokens.size(), 1u);
  EXPECT_EQ(blocks[1].table_image_tokens.size(), 2u);
  // Tables and the chart are requested; absorbed images are not.
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[2].block, 4u);
}

TEST(BlockRequestsProTest, TableRecognitionOffAbsorbsNothing) {
  std::vector<ContentBlock> blocks = {Block(BlockType::kTable, {0.0, 0.0, 1.0, 1.0}),
                                      Block(BlockType::kImage, {0.2, 0.2, 0.5, 0.5})};
  const auto requests =
      PrepareProRequests(Page(200, 200), blocks, {.not_extract = {BlockType::kTable}}, nullptr);
  EXPECT_FALSE(blocks[1].absorbed_by_table);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].block, 1u);
}

TEST(BlockRequestsProTest, PromptsAndSamplingByType) {
  EXPECT_EQ(RecognitionPromptPro(BlockType::kChart), "\nImage Analysis:");
  EXPECT_EQ(RecognitionPromptPro(BlockType::kEquation), "\nFormula Recognition:");
  EXPECT_EQ(RecognitionPromptPro(BlockType::kDocTitle), "\nText Recognition:");
  EXPECT_EQ(RecognitionPromptPro(BlockType::kListItem), "\nText Recognition:");
  EXPECT_FLOAT_EQ(RecognitionSamplingPro(BlockType::kImage).frequency_penalty, 0.05f);
  EXPECT_FLOAT_EQ(RecognitionSamplingPro(BlockType::kTable).frequency_penalty, 0.005f);
}

}  // namespace
}  // namespace mineru::pipeline
