// SPDX-License-Identifier: Apache-2.0
// The layout parser under the Pro client's rules (mineru-vl-utils 1.2.1 parse_layout_output):
// test vectors TV-37 ... TV-43, produced by running the upstream function.
#include <gtest/gtest.h>

#include "pipeline/layout_parser.h"

namespace mineru::pipeline {
namespace {

std::vector<ContentBlock> ParsePro(std::string_view text) {
  return ParseLayout(text, LayoutRulesFor(Profile::kPro), nullptr);
}

ContentBlock Block(BlockType type, std::array<double, 4> bbox, std::optional<int> angle,
                   std::optional<bool> merge_prev = std::nullopt) {
  ContentBlock b;
  b.type = type;
  b.bbox = bbox;
  b.angle = angle;
  b.merge_prev = merge_prev;
  return b;
}

TEST(LayoutParserProTest, Tv37NewlineSeparated) {
  EXPECT_EQ(ParsePro("<|box_start|>100 050 900 120<|box_end|><|ref_start|>title<|ref_end|><|rotate_"
                     "up|>\n<|box_start|>100 130 900 400<|box_end|><|ref_start|>text<|ref_end|><|"
                     "rotate_up|>"),
            (std::vector<ContentBlock>{Block(BlockType::kTitle, {0.1, 0.05, 0.9, 0.12}, 0),
                                       Block(BlockType::kText, {0.1, 0.13, 0.9, 0.4}, 0, false)}));
}

TEST(LayoutParserProTest, Tv38SpaceSeparatedWithRotation) {
  EXPECT_EQ(
      ParsePro(
          "<|box_start|>705 112 899 146<|box_end|><|ref_start|>header<|ref_end|><|rotate_up|> "
          "<|box_start|>030 343 132 397<|box_end|><|ref_start|>text<|ref_end|><|rotate_right|>"),
      (std::vector<ContentBlock>{Block(BlockType::kHeader, {0.705, 0.112, 0.899, 0.146}, 0),
                                 Block(BlockType::kText, {0.03, 0.343, 0.132, 0.397}, 90, false)}));
}

TEST(LayoutParserProTest, Tv39ContinuationMark) {
  // Only text blocks carry merge_prev: the title's mark is ignored.
  EXPECT_EQ(
      ParsePro("<|box_start|>500 100 900 300<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|><|"
               "txt_contd_tgt|>\n<|box_start|>100 100 400 300<|box_end|><|ref_start|>title<|ref_"
               "end|><|rotate_up|><|txt_contd_tgt|>"),
      (std::vector<ContentBlock>{Block(BlockType::kText, {0.5, 0.1, 0.9, 0.3}, 0, true),
                                 Block(BlockType::kTitle, {0.1, 0.1, 0.4, 0.3}, 0)}));
}

TEST(LayoutParserProTest, Tv40RotateTokenNotAdjacent) {
  EXPECT_EQ(ParsePro("<|box_start|>100 100 400 300<|box_end|><|ref_start|>text<|ref_end|><|txt_"
                     "contd_tgt|><|rotate_left|>"),
            (std::vector<ContentBlock>{
                Block(BlockType::kText, {0.1, 0.1, 0.4, 0.3}, std::nullopt, true)}));
}

TEST(LayoutParserProTest, Tv41LabelHandling) {
  EXPECT_EQ(ParsePro("<|box_start|>100 100 400 300<|box_end|><|ref_start|>Unknown<|ref_end|><|"
                     "rotate_down|><|box_start|>100 310 400 330<|box_end|><|ref_start|>inline_"
                     "formula<|ref_end|><|rotate_up|><|box_start|>100 340 400 360<|box_end|><|ref_"
                     "start|>foo_bar<|ref_end|><|rotate_up|>"),
            (std::vector<ContentBlock>{Block(BlockType::kImage, {0.1, 0.1, 0.4, 0.3}, 180)}));
}

TEST(LayoutParserProTest, Tv42BboxValidation) {
  EXPECT_EQ(
      ParsePro("<|box_start|>900 300 100 100<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>\n<"
               "|box_start|>100 100 100 300<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>\n<|"
               "box_start|>0 0 1001 10<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>"),
      (std::vector<ContentBlock>{Block(BlockType::kText, {0.1, 0.1, 0.9, 0.3}, 0, false)}));
  EXPECT_TRUE(ParsePro("hello world").empty());
}

TEST(LayoutParserProTest, Tv43TableInternalFilter) {
  EXPECT_EQ(
      ParsePro("<|box_start|>100 100 900 500<|box_end|><|ref_start|>table<|ref_end|><|rotate_up|>"
               "\n<|box_start|>120 120 300 150<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>"
               "\n<|box_start|>120 480 300 520<|box_end|><|ref_start|>equation<|ref_end|><|rotate_"
               "up|>\n<|box_start|>120 200 300 260<|box_end|><|ref_start|>image<|ref_end|><|rotate_"
               "up|>"),
      (std::vector<ContentBlock>{Block(BlockType::kTable, {0.1, 0.1, 0.9, 0.5}, 0),
                                 Block(BlockType::kEquation, {0.12, 0.48, 0.3, 0.52}, 0),
                                 Block(BlockType::kImage, {0.12, 0.2, 0.3, 0.26}, 0)}));
}

TEST(LayoutParserProTest, EveryProTypeParsesAndThe2509RulesDropThem) {
  for (int t = kBlockTypeCount; t < kProBlockTypeCount; ++t) {
    const auto type = static_cast<BlockType>(t);
    const std::string text = "<|box_start|>1 2 3 4<|box_end|><|ref_start|>" +
                             std::string(BlockTypeName(type)) + "<|ref_end|><|rotate_up|>";
    const std::vector<ContentBlock> pro = ParsePro(text);
    ASSERT_EQ(pro.size(), 1u) << BlockTypeName(type);
    EXPECT_EQ(pro[0].type, type);
    EXPECT_FALSE(pro[0].merge_prev.has_value()) << "only text blocks carry merge_prev";
    EXPECT_TRUE(ParseLayout(text, nullptr).empty()) << BlockTypeName(type);
  }
}

TEST(LayoutParserProTest, TheMarkIsLookedForOnlyInItsOwnTail) {
  // The mark after the second region's head belongs to the second region only.
  const auto blocks = ParsePro(
      "<|box_start|>1 1 2 2<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>"
      "<|box_start|>3 3 4 4<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>txt_contd_tgt"
      "<|box_start|>5 5 6 6<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>");
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].merge_prev, false);
  EXPECT_EQ(blocks[1].merge_prev, true);
  EXPECT_EQ(blocks[2].merge_prev, false);
  // The 2509 rules never set it.
  const auto old = ParseLayout(
      "<|box_start|>1 1 2 2<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|><|txt_contd_tgt|>",
      nullptr);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_FALSE(old[0].merge_prev.has_value());
}

TEST(LayoutParserProTest, CoverRatioInDoublesAtTheBoundary) {
  // 410..510 inside 0..500 is 90 % on the integer grid, but (0.5 - 0.41) * 0.1 / (0.1 * 0.1)
  // is 0.8999999999999999 in doubles: the Pro client keeps the block, the 2509 rule drops it.
  const std::string text =
      "<|box_start|>0 0 500 500<|box_end|><|ref_start|>table<|ref_end|><|rotate_up|>"
      "<|box_start|>410 0 510 100<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>";
  EXPECT_EQ(ParsePro(text).size(), 2u);
  EXPECT_EQ(ParseLayout(text, nullptr).size(), 1u);
}

TEST(LayoutParserProTest, LongHostileAnswerIsLinear) {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "<|box_start|>1 1 2 2<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>";
    text += std::string(40, 'x');
  }
  EXPECT_EQ(ParsePro(text).size(), 20000u);
}

}  // namespace
}  // namespace mineru::pipeline
