// SPDX-License-Identifier: Apache-2.0
// mineru-vl-utils 1.2.1 post_process/json2markdown.py json2md: TV-27 and the merge rules.
#include "pipeline/json2md.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace mineru::pipeline {
namespace {

ContentBlock Block(BlockType type, std::optional<std::string> content,
                   std::optional<bool> merge_prev = std::nullopt) {
  ContentBlock block;
  block.type = type;
  block.content = std::move(content);
  block.merge_prev = merge_prev;
  return block;
}

TEST(Json2MarkdownTest, Tv27MergesAcrossNonTextBlocks) {
  const std::vector<ContentBlock> blocks = {
      Block(BlockType::kText, "The quick brown", false),
      Block(BlockType::kImage, std::nullopt),
      Block(BlockType::kText, "fox jumps", true),
      Block(BlockType::kTitle, "# T"),
      Block(BlockType::kText, "\u7ee7\u7eed\u4e2d\u6587", true),
      Block(BlockType::kText, "", true),
      Block(BlockType::kText, "x", true),
  };
  EXPECT_EQ(Json2Markdown(blocks), "The quick brown fox jumps\u7ee7\u7eed\u4e2d\u6587 x\n\n# T");
}

TEST(Json2MarkdownTest, EmptyAndSkippedBlocks) {
  EXPECT_EQ(Json2Markdown({}), "");
  EXPECT_EQ(Json2Markdown({Block(BlockType::kText, ""), Block(BlockType::kImage, std::nullopt)}),
            "");
  EXPECT_EQ(Json2Markdown({Block(BlockType::kTitle, "# A"), Block(BlockType::kTable, "<table>")}),
            "# A\n\n<table>");
}

TEST(Json2MarkdownTest, MergeNeedsAnEarlierTextBlock) {
  // Before any text block (a title does not count) a merge_prev block stands on its own, and
  // then becomes the anchor itself.
  EXPECT_EQ(Json2Markdown({Block(BlockType::kTitle, "# T"), Block(BlockType::kText, "a", true),
                           Block(BlockType::kText, "b", true)}),
            "# T\n\na b");
  // The anchor moves to every text block emitted on its own, not to merged ones.
  EXPECT_EQ(Json2Markdown({Block(BlockType::kText, "a", false), Block(BlockType::kText, "b"),
                           Block(BlockType::kText, "c", true)}),
            "a\n\nb c");
  // merge_prev is honoured on any type, as the client reads the key wherever it is.
  EXPECT_EQ(Json2Markdown({Block(BlockType::kText, "a"), Block(BlockType::kTitle, "t", true)}),
            "a t");
}

TEST(Json2MarkdownTest, CjkDecidesTheSeparator) {
  auto merged = [](std::string second) {
    return Json2Markdown({Block(BlockType::kText, "a"), Block(BlockType::kText, second, true)});
  };
  EXPECT_EQ(merged("\u4e00"), "a\u4e00");
  EXPECT_EQ(merged("x\u9fff"), "ax\u9fff");
  EXPECT_EQ(merged("\u3400"), "a\u3400");  // extension A
  EXPECT_EQ(merged("\u4dbf"), "a\u4dbf");
  EXPECT_EQ(merged("\u3042"), "a \u3042");          // kana is not in the ranges
  EXPECT_EQ(merged("\U00020000"), "a \U00020000");  // extension B neither
  EXPECT_EQ(merged("\xe4\xb8"), "a \xe4\xb8");      // truncated U+4E00 bytes
  EXPECT_TRUE(ContainsCjkIdeograph("\xff\u4e2d"));
  EXPECT_FALSE(ContainsCjkIdeograph(""));
}

}  // namespace
}  // namespace mineru::pipeline
