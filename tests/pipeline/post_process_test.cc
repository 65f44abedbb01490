// SPDX-License-Identifier: Apache-2.0
// Post-processing of a page's blocks (mineru-vl-utils 0.1.22 post_process/__init__.py, its steps
// 1-7 in order).
#include "pipeline/post_process.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mineru::pipeline {
namespace {

ContentBlock Block(BlockType type, std::array<double, 4> bbox, std::optional<std::string> content,
                   std::optional<int> angle = 0) {
  ContentBlock block;
  block.type = type;
  block.bbox = bbox;
  block.angle = angle;
  block.content = std::move(content);
  return block;
}

ContentBlock Equation(std::array<double, 4> bbox, std::string latex) {
  return Block(BlockType::kEquation, bbox, std::move(latex));
}

ContentBlock EquationBlock(std::array<double, 4> bbox, std::optional<int> angle = 0) {
  return Block(BlockType::kEquationBlock, bbox, std::nullopt, angle);
}

TEST(PostProcessTest, TableOtslBecomesHtml) {
  std::vector<std::string> warnings;
  auto out =
      PostProcess({Block(BlockType::kTable, {0, 0, 1, 1}, "<fcel>a<fcel>b<nl>")}, {}, &warnings);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].content, "<table><tr><td>a</td><td>b</td></tr></table>");
  EXPECT_TRUE(warnings.empty());
}

TEST(PostProcessTest, TableAlreadyHtmlKept) {
  const std::string html = "<table border=\"1\"><tr><td>a & b</td></tr></table>";
  auto out = PostProcess({Block(BlockType::kTable, {0, 0, 1, 1}, html)}, {}, nullptr);
  EXPECT_EQ(out[0].content, html);
  // Only content that both starts with "<table" and ends with "</table>" counts as HTML.
  auto partial =
      PostProcess({Block(BlockType::kTable, {0, 0, 1, 1}, "<fcel>x<nl></table>")}, {}, nullptr);
  EXPECT_EQ(partial[0].content, "<table><tr><td>x</td></tr></table>");
}

TEST(PostProcessTest, TableWithoutContentUntouched) {
  auto out = PostProcess({Block(BlockType::kTable, {0, 0, 1, 1}, std::nullopt),
                          Block(BlockType::kTable, {0, 0, 1, 1}, "")},
                         {}, nullptr);
  EXPECT_EQ(out[0].content, std::nullopt);
  EXPECT_EQ(out[1].content, "");
}

TEST(PostProcessTest, FailedTableKeepsRawTextWithWarning) {
  std::string otsl;
  for (int i = 0; i < 2100; ++i) otsl += "<fcel>x<nl>";
  for (int i = 0; i < 2100; ++i) otsl += "<ecel>";
  std::vector<std::string> warnings;
  auto out = PostProcess({Block(BlockType::kTable, {0, 0, 1, 1}, otsl)}, {}, &warnings);
  EXPECT_EQ(out[0].content, otsl);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("table block 0"), std::string::npos);
}

TEST(PostProcessTest, EquationFixedAndWrapped) {
  auto out = PostProcess({Equation({0, 0, 1, 1}, "  x<y  ")}, {}, nullptr);
  EXPECT_EQ(out[0].content, "\\[\nx< y\n\\]");
}

TEST(PostProcessTest, WrappingIsIdempotent) {
  auto once = PostProcess({Equation({0, 0, 1, 1}, "x^{2}")}, {}, nullptr);
  EXPECT_EQ(once[0].content, "\\[\nx^{2}\n\\]");
  auto twice = PostProcess(once, {}, nullptr);
  EXPECT_EQ(twice, once);
  // Each end is checked on its own.
  auto half = PostProcess({Equation({0, 0, 1, 1}, " \\[ a")}, {}, nullptr);
  EXPECT_EQ(half[0].content, "\\[ a\n\\]");
  auto other = PostProcess({Equation({0, 0, 1, 1}, "a \\]")}, {}, nullptr);
  EXPECT_EQ(other[0].content, "\\[\na \\]");
}

TEST(PostProcessTest, EmptyEquationNotWrapped) {
  auto out = PostProcess({Equation({0, 0, 1, 1}, ""), Equation({0, 0, 1, 1}, " \n")}, {}, nullptr);
  EXPECT_EQ(out[0].content, "");
  EXPECT_EQ(out[1].content, "\\[\n\n\\]");  // non-empty before trimming
}

TEST(PostProcessTest, TwoEquationsInBlockMerge) {
  std::vector<ContentBlock> in = {
      Block(BlockType::kText, {0, 0, 1, 0.1}, "intro"),
      Equation({0.1, 0.2, 0.9, 0.3}, "a=1"),
      Equation({0.1, 0.3, 0.9, 0.4}, "b<2"),
      EquationBlock({0.05, 0.15, 0.95, 0.45}, 90),
      Block(BlockType::kText, {0, 0.5, 1, 0.6}, "outro"),
  };
  auto out = PostProcess(in, {}, nullptr);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].content, "intro");
  EXPECT_EQ(out[1].type, BlockType::kEquation);
  EXPECT_EQ(out[1].bbox, (std::array<double, 4>{0.05, 0.15, 0.95, 0.45}));
  EXPECT_EQ(out[1].angle, 90);
  EXPECT_EQ(out[1].content, "\\[\n\\begin{array}{l} a=1 \\\\ b< 2 \\\\ \\end{array}\n\\]");
  EXPECT_EQ(out[2].content, "outro");
}

TEST(PostProcessTest, SingleEquationInBlockStays) {
  std::vector<ContentBlock> in = {EquationBlock({0, 0, 1, 1}), Equation({0.1, 0.1, 0.9, 0.9}, "a")};
  auto out = PostProcess(in, {}, nullptr);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, BlockType::kEquation);
  EXPECT_EQ(out[0].bbox, (std::array<double, 4>{0.1, 0.1, 0.9, 0.9}));
  EXPECT_EQ(out[0].content, "\\[\na\n\\]");
}

TEST(PostProcessTest, CoverRatioMustExceedNinetyPercent) {
  // Each equation is the unit square; the block covers exactly 90% (1 - 0.1 == 0.9 in binary).
  std::vector<ContentBlock> at_boundary = {
      EquationBlock({0.1, 0, 1, 1}), Equation({0, 0, 1, 1}, "a"), Equation({0, 0, 1, 1}, "b")};
  auto out = PostProcess(at_boundary, {}, nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].content, "\\[\na\n\\]");
  EXPECT_EQ(out[1].content, "\\[\nb\n\\]");

  std::vector<ContentBlock> above = {EquationBlock({0.09, 0, 1, 1}), Equation({0, 0, 1, 1}, "a"),
                                     Equation({0, 0, 1, 1}, "b")};
  out = PostProcess(above, {}, nullptr);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].content, "\\[\n\\begin{array}{l} a \\\\ b \\\\ \\end{array}\n\\]");
}

TEST(PostProcessTest, ZeroAreaEquationNeverCovered) {
  std::vector<ContentBlock> in = {EquationBlock({0, 0, 1, 1}), Equation({0.5, 0.5, 0.5, 0.6}, "a"),
                                  Equation({0.1, 0.1, 0.2, 0.2}, "b")};
  auto out = PostProcess(in, {}, nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].content, "\\[\na\n\\]");
}

TEST(PostProcessTest, SeveralTagsBecomeParentheses) {
  std::vector<ContentBlock> in = {EquationBlock({0, 0, 1, 1}),
                                  Equation({0, 0, 1, 0.5}, "a \\tag{1}"),
                                  Equation({0, 0.5, 1, 1}, "b \\tag {2.1}")};
  auto out = PostProcess(in, {}, nullptr);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].content, "\\[\n\\begin{array}{l} a (1) \\\\ b (2.1) \\\\ \\end{array}\n\\]");
}

TEST(PostProcessTest, SingleTagKept) {
  std::vector<ContentBlock> in = {EquationBlock({0, 0, 1, 1}),
                                  Equation({0, 0, 1, 0.5}, "a \\tag{1}"),
                                  Equation({0, 0.5, 1, 1}, "b")};
  auto out = PostProcess(in, {}, nullptr);
  EXPECT_EQ(out[0].content, "\\[\n\\begin{array}{l} a \\tag{1} \\\\ b \\\\ \\end{array}\n\\]");
}

TEST(PostProcessTest, EquationInTwoBlocksJoinsBoth) {
  std::vector<ContentBlock> in = {EquationBlock({0, 0, 1, 1}), EquationBlock({0, 0, 1, 1}),
                                  Equation({0, 0, 1, 0.5}, "a"), Equation({0, 0.5, 1, 1}, "b")};
  auto out = PostProcess(in, {}, nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].content, out[1].content);
}

TEST(PostProcessTest, EquationBlocksRemovedWithoutMerging) {
  PostProcessOptions options;
  options.handle_equation_block = false;
  std::vector<ContentBlock> in = {EquationBlock({0, 0, 1, 1}), Equation({0, 0, 1, 0.5}, "a"),
                                  Equation({0, 0.5, 1, 1}, "b")};
  auto out = PostProcess(in, options, nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].content, "\\[\na\n\\]");
  EXPECT_EQ(out[1].content, "\\[\nb\n\\]");
}

TEST(PostProcessTest, SimplePostProcessOnlyConvertsTables) {
  PostProcessOptions options;
  options.simple_post_process = true;
  std::vector<ContentBlock> in = {Block(BlockType::kTable, {0, 0, 1, 1}, "<fcel>a<nl>"),
                                  EquationBlock({0, 0, 1, 1}), Equation({0, 0, 1, 0.5}, "a<b"),
                                  Equation({0, 0.5, 1, 1}, "c")};
  auto out = PostProcess(in, options, nullptr);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].content, "<table><tr><td>a</td></tr></table>");
  EXPECT_EQ(out[1], in[1]);
  EXPECT_EQ(out[2], in[2]);
  EXPECT_EQ(out[3], in[3]);
}

TEST(PostProcessTest, OptionalDrops) {
  std::vector<ContentBlock> in;
  for (BlockType type : {BlockType::kList, BlockType::kHeader, BlockType::kFooter,
                         BlockType::kPageNumber, BlockType::kAsideText, BlockType::kPageFootnote,
                         BlockType::kUnknown, BlockType::kText, BlockType::kTitle}) {
    in.push_back(Block(type, {0, 0, 1, 1}, "x"));
  }
  EXPECT_EQ(PostProcess(in, {}, nullptr).size(), in.size());  // both off by default

  PostProcessOptions options;
  options.abandon_list = true;
  auto out = PostProcess(in, options, nullptr);
  ASSERT_EQ(out.size(), in.size() - 1);
  EXPECT_EQ(out[0].type, BlockType::kHeader);

  options.abandon_list = false;
  options.abandon_paratext = true;
  out = PostProcess(in, options, nullptr);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].type, BlockType::kList);
  EXPECT_EQ(out[1].type, BlockType::kText);
  EXPECT_EQ(out[2].type, BlockType::kTitle);
}

TEST(PostProcessTest, FailureReturnsBlocksUnprocessed) {
  // A merge group holding an equation that was never recognised fails the whole page.
  std::vector<ContentBlock> in = {
      Block(BlockType::kTable, {0, 0, 1, 1}, "<fcel>a<nl>"), EquationBlock({0, 0, 1, 1}),
      Block(BlockType::kEquation, {0, 0, 1, 0.5}, std::nullopt), Equation({0, 0.5, 1, 1}, "b<c")};
  std::vector<std::string> warnings;
  auto out = PostProcess(in, {}, &warnings);
  EXPECT_EQ(out, in);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("unprocessed"), std::string::npos);

  Result<std::vector<ContentBlock>> tried = TryPostProcess(in, {}, nullptr);
  ASSERT_FALSE(tried);
  EXPECT_EQ(tried.error().code, ErrorCode::kInvalidArgument);
}

TEST(PostProcessTest, UnrecognisedEquationOutsideGroupIsFine) {
  std::vector<ContentBlock> in = {Block(BlockType::kEquation, {0, 0, 1, 1}, std::nullopt)};
  auto out = PostProcess(in, {}, nullptr);
  EXPECT_EQ(out, in);
}

TEST(PostProcessTest, OtherBlocksUntouched) {
  std::vector<ContentBlock> in = {
      Block(BlockType::kText, {0, 0, 1, 1}, " a<b {"),
      Block(BlockType::kImage, {0, 0, 1, 1}, std::nullopt, std::nullopt),
      Block(BlockType::kCode, {0, 0, 1, 1}, "<fcel>x<nl>")};
  EXPECT_EQ(PostProcess(in, {}, nullptr), in);
}

}  // namespace
}  // namespace mineru::pipeline
