// SPDX-License-Identifier: Apache-2.0
// The Pro client's page post-processing (mineru-vl-utils 1.2.1 post_process/__init__.py):
// TV-35 (the whole chain on one page, formula wrapping on) and each step's rules.
#include "pipeline/post_process_pro.h"

#include <gtest/gtest.h>

namespace mineru::pipeline {
namespace {

ContentBlock Block(BlockType type, std::array<double, 4> bbox, std::optional<std::string> content,
                   std::optional<bool> merge_prev = std::nullopt) {
  ContentBlock b;
  b.type = type;
  b.bbox = bbox;
  b.angle = 0;
  b.content = std::move(content);
  b.merge_prev = merge_prev;
  return b;
}

PostProcessOptions MineruOptions() {
  PostProcessOptions o;
  o.table_formula_eq_wrap = true;
  return o;
}

TEST(PostProcessProTest, Tv35FullPostProcess) {
  std::vector<ContentBlock> in = {
      Block(BlockType::kHeader, {0.1, 0.01, 0.9, 0.03}, "[Non-Text]"),
      Block(BlockType::kPageNumber, {0.45, 0.97, 0.55, 0.99}, " [Non-Text] "),
      Block(BlockType::kText, {0.1, 0.05, 0.9, 0.1},
            "Energy \\[E=mc^2\\] and \\( a \\toB \\) with \\( x ___ y \\)", false),
      Block(BlockType::kListItem, {0.1, 0.11, 0.9, 0.13}, "- item"),
      Block(BlockType::kImage, {0.1, 0.2, 0.5, 0.5},
            "<|class_start|>pure_table<|class_end|><|caption_start|>t<|caption_end|><|content_"
            "start|>| a | b |\n| --- | --- |\n| 1 | 2 |<|content_end|>"),
      Block(BlockType::kChart, {0.5, 0.2, 0.9, 0.5},
            "<|class_start|>natural_image<|class_end|><|sub_class_start|>photo<|sub_class_end|><|"
            "caption_start|>A red car.<|caption_end|><|content_start|><|content_end|>"),
      Block(BlockType::kEquation, {0.1, 0.55, 0.9, 0.6}, "\\[ x \\coloneqq 1 \\]"),
      Block(BlockType::kTable, {0.1, 0.6, 0.9, 0.9}, "<fcel>\\(a<b\\)<fcel>[ KT7Z ]<nl>"),
      Block(BlockType::kImage, {0.2, 0.62, 0.3, 0.7}, std::nullopt),
  };
  in[7].table_image_tokens = {{"[KT7Z]", "data:image/jpeg;base64,/9j/"}};
  in[8].absorbed_by_table = true;

  std::vector<ContentBlock> want = {
      Block(BlockType::kHeader, {0.1, 0.01, 0.9, 0.03}, ""),
      Block(BlockType::kText, {0.1, 0.05, 0.9, 0.1},
            "Energy \\(E=mc^2\\) and \\( a \\to B \\) with \\( x \\) ___ \\( y \\)", false),
      Block(BlockType::kText, {0.1, 0.11, 0.9, 0.13}, "- item", false),
      Block(BlockType::kTable, {0.1, 0.2, 0.5, 0.5},
            "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"),
      Block(BlockType::kImage, {0.5, 0.2, 0.9, 0.5}, "A red car."),
      Block(BlockType::kEquation, {0.1, 0.55, 0.9, 0.6}, "\\[\nx := 1\n\\]"),
      Block(BlockType::kTable, {0.1, 0.6, 0.9, 0.9},
            "<table><tr><td><eq>a&lt;b</eq></td><td><img "
            "src=\"data:image/jpeg;base64,/9j/\"/></td></tr></table>"),
  };
  want[4].sub_type = "natural_image";
  std::vector<std::string> warnings;
  EXPECT_EQ(PostProcessPro(in, MineruOptions(), &warnings), want);
  EXPECT_TRUE(warnings.empty());
}

TEST(PostProcessProTest, ImageAnalysisRetypesByClass) {
  auto analysed = [](BlockType type, std::string content, bool wrap = true) {
    ContentBlock b = Block(type, {0.1, 0.1, 0.5, 0.5}, std::move(content));
    ApplyImageAnalysis(b, wrap);
    return b;
  };
  // Chart: type chart, sub_type = the sub-class, content = the repaired table.
  ContentBlock chart =
      analysed(BlockType::kImage,
               "<|class_start|>Chart<|class_end|><|sub_class_start|>Bar_Chart<|sub_"
               "class_end|><|caption_start|>Sales<|caption_end|><|content_start|>\n|"
               " Year | Sales |\n| --- | --- |\n| 2020 | 10 |\n<|content_end|>");
  EXPECT_EQ(chart.type, BlockType::kChart);
  EXPECT_EQ(chart.sub_type, "bar_chart");
  EXPECT_EQ(chart.content, "| Year | Sales |\n| --- | --- |\n| 2020 | 10 |");
  // pure_formula: an equation with the analysis' content.
  ContentBlock formula =
      analysed(BlockType::kChart,
               "<|class_start|>pure_formula<|class_end|><|content_start|>E=mc^2<|content_end|>");
  EXPECT_EQ(formula.type, BlockType::kEquation);
  EXPECT_FALSE(formula.sub_type);
  EXPECT_EQ(formula.content, "E=mc^2");
  // A chemical structure keeps its caption (its content is dropped).
  ContentBlock chemical = analysed(BlockType::kImage,
                                   "<|class_start|>chemical<|class_end|><|caption_start|>Benzene<|"
                                   "caption_end|><|content_start|>C1=CC=CC=C1<|content_end|>");
  EXPECT_EQ(chemical.type, BlockType::kImage);
  EXPECT_EQ(chemical.sub_type, "chemical");
  EXPECT_EQ(chemical.content, "Benzene");
  // An untagged answer (what 2509 would write): image, sub_type "", content "".
  ContentBlock plain = analysed(BlockType::kImage, "a photo of a cat");
  EXPECT_EQ(plain.type, BlockType::kImage);
  EXPECT_EQ(plain.sub_type, "");
  EXPECT_EQ(plain.content, "");
  // A pure table whose content is no table: an empty table.
  ContentBlock empty_table = analysed(
      BlockType::kImage,
      "<|class_start|>pure_table<|class_end|><|content_start|>| a | b |\n| --- | --- |\n| 1 |<|"
      "content_end|>");
  EXPECT_EQ(empty_table.type, BlockType::kTable);
  EXPECT_EQ(empty_table.content, "");
  // Formula wrapping follows the option.
  ContentBlock unwrapped =
      analysed(BlockType::kImage,
               "<|class_start|>pure_table<|class_end|><|content_start|><table><tr><td>\\(x\\)</"
               "td></tr></table><|content_end|>",
               false);
  EXPECT_EQ(unwrapped.content, "<table><tr><td>\\(x\\)</td></tr></table>");
}

TEST(PostProcessProTest, NonTextPlaceholderByType) {
  std::vector<ContentBlock> in;
  for (BlockType t : {BlockType::kFooter, BlockType::kTitle, BlockType::kEquation, BlockType::kList,
                      BlockType::kImageBlock, BlockType::kAsideText}) {
    in.push_back(Block(t, {0.1, 0.1, 0.2, 0.2}, "[Non-Text]"));
  }
  in.push_back(Block(BlockType::kText, {0.1, 0.1, 0.2, 0.2}, std::nullopt));
  PostProcessOptions options = MineruOptions();
  options.simple_post_process = true;  // keeps the equation's content as it is
  const std::vector<ContentBlock> out = PostProcessPro(in, options, nullptr);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].type, BlockType::kFooter);
  EXPECT_EQ(out[0].content, "");
  EXPECT_EQ(out[1].type, BlockType::kEquation);
  EXPECT_EQ(out[1].content, "[Non-Text]");
  EXPECT_EQ(out[2].type, BlockType::kList);
  EXPECT_EQ(out[3].type, BlockType::kImageBlock);
  EXPECT_EQ(out[4].type, BlockType::kText);  // null content is always kept
}

TEST(PostProcessProTest, SimplePostProcessStillDropsAbsorbedImagesAndPrivateFields) {
  std::vector<ContentBlock> in = {
      Block(BlockType::kTable, {0, 0, 1, 1}, "<fcel>[AC2G]<nl>"),
      Block(BlockType::kImage, {0.1, 0.1, 0.2, 0.2}, std::nullopt),
      Block(BlockType::kText, {0, 0, 1, 1}, "\\[x\\]"),
  };
  in[0].table_image_tokens = {{"[AC2G]", "data:image/jpeg;base64,QUJD"}};
  in[1].absorbed_by_table = true;
  PostProcessOptions options;
  options.simple_post_process = true;
  const std::vector<ContentBlock> out = PostProcessPro(in, options, nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].content,
            "<table><tr><td><img src=\"data:image/jpeg;base64,QUJD\"/></td></tr></table>");
  EXPECT_TRUE(out[0].table_image_tokens.empty());
  EXPECT_EQ(out[1].content, "\\[x\\]");  // the text chain did not run
}

TEST(PostProcessProTest, EquationBlocksMergeAndDropAsIn2509) {
  std::vector<ContentBlock> in = {
      Block(BlockType::kEquationBlock, {0.1, 0.1, 0.9, 0.5}, std::nullopt),
      Block(BlockType::kEquation, {0.12, 0.12, 0.88, 0.2}, "\\[a=b\\]"),
      Block(BlockType::kEquation, {0.12, 0.3, 0.88, 0.4}, "c=d"),
  };
  const std::vector<ContentBlock> out = PostProcessPro(in, MineruOptions(), nullptr);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, BlockType::kEquation);
  EXPECT_EQ(out[0].content, "\\[\n\\begin{array}{l} a=b \\\\ c=d \\\\ \\end{array}\n\\]");
}

TEST(PostProcessProTest, AFailingStepReturnsTheBlocksLessAbsorbedImages) {
  // An equation without content inside an equation_block fails the merge (as in the client).
  std::vector<ContentBlock> in = {
      Block(BlockType::kEquationBlock, {0.1, 0.1, 0.9, 0.5}, std::nullopt),
      Block(BlockType::kEquation, {0.12, 0.12, 0.88, 0.2}, std::nullopt),
      Block(BlockType::kEquation, {0.12, 0.3, 0.88, 0.4}, "c=d"),
      Block(BlockType::kImage, {0.5, 0.6, 0.6, 0.7}, std::nullopt),
  };
  in[3].absorbed_by_table = true;
  std::vector<std::string> warnings;
  const std::vector<ContentBlock> out = PostProcessPro(in, MineruOptions(), &warnings);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].content, "c=d");
  EXPECT_EQ(warnings.size(), 1u);
}

}  // namespace
}  // namespace mineru::pipeline
