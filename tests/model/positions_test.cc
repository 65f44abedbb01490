// SPDX-License-Identifier: Apache-2.0
// get_rope_index rules beyond the golden cases (which hold one image per sequence): several
// images in one sequence, text-only prompts, and prompts that disagree with their grids.
#include "model/positions.h"

#include <gtest/gtest.h>

#include "base/json.h"
#include "devtools/random_checkpoint.h"
#include "model/config.h"

namespace mineru::model {
namespace {

using devtools::TinyModelConfig;
ModelConfig TinyConfig() {
  auto config = ParseModelConfig(TinyModelConfig(), "tiny");
  EXPECT_TRUE(config) << config.error().ToString();
  return *config;
}

constexpr int32_t kText = 100;

TEST(PositionsTest, TwoImagesInOneSequence) {
  const ModelConfig config = TinyConfig();
  const auto vs = static_cast<int32_t>(config.vision_start_token_id);
  const auto ve = static_cast<int32_t>(config.vision_end_token_id);
  const auto img = static_cast<int32_t>(config.image_token_id);
  // text text VS [2x2 image tokens] VE text VS [2x3 image tokens] VE text
  std::vector<int32_t> ids = {kText, kText, vs};
  ids.insert(ids.end(), 4, img);
  ids.insert(ids.end(), {ve, kText, vs});
  ids.insert(ids.end(), 6, img);
  ids.insert(ids.end(), {ve, kText});
  const ImageGrid grids[] = {{1, 4, 4}, {1, 4, 6}};
  auto positions = ComputeRopePositions(ids, grids, config);
  ASSERT_TRUE(positions) << positions.error().ToString();
  using P = std::array<int32_t, 3>;
  const std::vector<P> expected = {
      {0, 0, 0},    {1, 1, 1},    {2, 2, 2},              // text, text, VS
      {3, 3, 3},    {3, 3, 4},    {3, 4, 3},  {3, 4, 4},  // image 1 starts at 3, 2 x 2 tokens
      {5, 5, 5},    {6, 6, 6},    {7, 7, 7},              // VE = 3 + max(1, 2, 2), text, VS
      {8, 8, 8},    {8, 8, 9},    {8, 8, 10}, {8, 9, 8}, {8, 9, 9}, {8, 9, 10},  // image 2: 2 x 3
      {11, 11, 11}, {12, 12, 12},  // VE = 8 + max(1, 2, 3), text
  };
  EXPECT_EQ(positions->positions, expected);
  EXPECT_EQ(positions->next_position, 13);
}

TEST(PositionsTest, TextOnlyIsOneDimensional) {
  const ModelConfig config = TinyConfig();
  const std::vector<int32_t> ids = {kText, kText, kText, kText};
  auto positions = ComputeRopePositions(ids, {}, config);
  ASSERT_TRUE(positions);
  for (int32_t i = 0; i < 4; ++i)
    EXPECT_EQ(positions->positions[i], (std::array<int32_t, 3>{i, i, i}));
  EXPECT_EQ(positions->next_position, 4);
}

TEST(PositionsTest, PromptsThatDisagreeWithGridsAreErrors) {
  const ModelConfig config = TinyConfig();
  const auto img = static_cast<int32_t>(config.image_token_id);
  const std::vector<int32_t> three = {kText, img, img, img, kText};
  const ImageGrid two_by_two[] = {{1, 4, 4}};  // needs 4 image tokens
  auto too_few = ComputeRopePositions(three, two_by_two, config);
  ASSERT_FALSE(too_few);
  EXPECT_EQ(too_few.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(too_few.error().message.find("needs 4 consecutive image tokens"), std::string::npos);

  const ImageGrid one_by_one[] = {{1, 2, 2}};  // 1 token: two are left over
  auto left_over = ComputeRopePositions(three, one_by_one, config);
  ASSERT_FALSE(left_over);
  EXPECT_NE(left_over.error().message.find("more image tokens"), std::string::npos);

  const std::vector<int32_t> text = {kText, kText};
  EXPECT_FALSE(ComputeRopePositions(text, one_by_one, config));  // image given, no tokens

  const ImageGrid odd[] = {{1, 3, 4}};  // not a multiple of the merge size
  EXPECT_FALSE(ComputeRopePositions(three, odd, config));

  const std::vector<int32_t> video = {kText, static_cast<int32_t>(config.video_token_id)};
  auto unsupported = ComputeRopePositions(video, {}, config);
  ASSERT_FALSE(unsupported);
  EXPECT_EQ(unsupported.error().code, ErrorCode::kUnsupported);
}

TEST(PositionsTest, VisionAnglesFollowMergeWindows) {
  VisionConfig config = TinyConfig().vision;  // head_dim 16: 4 row + 4 column angles per patch
  const ImageGrid grid[] = {{1, 2, 4}};
  const std::vector<float> angles = VisionRotaryAngles(grid, config);
  ASSERT_EQ(angles.size(), 8u * 8u);
  // Patch order: window (0,0): (0,0) (0,1) (1,0) (1,1); window (0,1): (0,2) (0,3) (1,2) (1,3).
  const int rows[] = {0, 0, 1, 1, 0, 0, 1, 1};
  const int cols[] = {0, 1, 0, 1, 2, 3, 2, 3};
  for (int p = 0; p < 8; ++p) {
    EXPECT_EQ(angles[p * 8 + 0], static_cast<float>(rows[p])) << p;  // inv_freq[0] = 1
    EXPECT_EQ(angles[p * 8 + 4], static_cast<float>(cols[p])) << p;
  }
}

}  // namespace
}  // namespace mineru::model
