// SPDX-License-Identifier: Apache-2.0
// The client's cross-page table detection and merge prompt (mineru-vl-utils 1.2.1
// post_process/cross_page_table.py): TV-28, TV-28b and the edges around them.
#include "pipeline/cross_page_tables.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace mineru::pipeline {
namespace {

ContentBlock Block(BlockType type, std::string content = "",
                   std::array<double, 4> bbox = {0.1, 0.1, 0.9, 0.9}) {
  ContentBlock block;
  block.type = type;
  block.bbox = bbox;
  if (!content.empty()) block.content = std::move(content);
  return block;
}
ContentBlock Table(std::string html, std::array<double, 4> bbox = {0.1, 0.1, 0.9, 0.9}) {
  return Block(BlockType::kTable, std::move(html), bbox);
}
ContentBlock Text(std::string text = "body text") { return Block(BlockType::kText, text); }

// TV-28's first pair.
const char kT1[] =
    "<table><tr><td>合计</td><td>--</td><td>49,031.73</td><td>50,199.76</td><td>7,973.94</td>"
    "<td>30,191.52</td><td>--</td><td>--</td><td>3,207.97</td><td>--</td><td>--</td></tr>"
    "<tr><td>分项目说明未达到计划进度、预计收益的情况和原因(含</td><td colspan=\"10\">不适用</td>"
    "</tr></table>";
const char kT2[] =
    "<table><tr><td>“是否达到预计效益”选择“不适用”的原因)</td><td></td></tr>"
    "<tr><td>项目可行性发生重大变化的情况说明</td><td>无</td></tr></table>";
const char kTv28Prompt[] =
    "Please merge the next two tables.\n\n## Table 1 (Previous Page - Last Table)\n\n"
    "**Caption:** (No caption)\n**Last Row(s) Data:**\n"
    "[['分项目说明未达到计划进度、预计收益的情况和原因(含', '不适用']]\n\n---\n\n"
    "## Table 2 (Current Page - First Table)\n\n**Caption:** (No caption)\n"
    "**First Data Row(s):**\n[['“是否达到预计效益”选择“不适用”的原因)', '']]";

// TV-28's second pair.
const char kFruitUpper[] =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>apple</td><td>3</td></tr>"
    "<tr><td>banana long</td><td>5</td></tr></table>";
const char kFruitLower[] =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>name continued</td><td></td></tr>"
    "<tr><td>cherry</td><td>7</td></tr></table>";

std::string LastRowPrompt(const std::string& last, const std::string& first) {
  return std::string(
             "Please merge the next two tables.\n\n## Table 1 (Previous Page - Last Table)\n\n"
             "**Caption:** (No caption)\n**Last Row(s) Data:**\n[") +
         last +
         "]\n\n---\n\n## Table 2 (Current Page - First Table)\n\n**Caption:** (No caption)\n"
         "**First Data Row(s):**\n[" +
         first + "]";
}

TEST(CrossPageTablesTest, Tv28PromptSegmentsAndAnswer) {
  const std::vector<std::vector<ContentBlock>> pages = {{Text(), Table(kT1)}, {Table(kT2), Text()}};
  const std::vector<TableMergeCandidate> candidates = FindCrossPageTableCandidates(pages);
  ASSERT_EQ(candidates.size(), 1u);
  const TableMergeCandidate& c = candidates[0];
  EXPECT_EQ(c.upper_page, 0u);
  EXPECT_EQ(c.upper_block, 1u);
  EXPECT_EQ(c.lower_page, 1u);
  EXPECT_EQ(c.lower_block, 0u);
  EXPECT_EQ(c.prompt, kTv28Prompt);
  EXPECT_EQ(c.prev_segments, (std::vector<std::pair<int, int>>{{0, 1}, {1, 11}}));
  // "Answer: [1, 0]" → cell_merge over the 11 columns; "[1, 0, 1]" has the wrong length.
  std::optional<std::vector<int>> flags = ParseCellMergeAnswer("Answer: [1, 0]", 2);
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(ExpandCellMerge(*flags, c.prev_segments),
            (std::vector<int>{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_FALSE(ParseCellMergeAnswer("[1, 0, 1]", 2).has_value());
  EXPECT_EQ(ExpandCellMerge({0, 1}, c.prev_segments),
            (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
}

TEST(CrossPageTablesTest, Tv28SecondPairSkipsPageEdgeBlocks) {
  const std::vector<std::vector<ContentBlock>> pages = {
      {Text(), Table(kFruitUpper), Block(BlockType::kPageNumber, "1")},
      {Block(BlockType::kHeader, "Report"), Table(kFruitLower), Text()}};
  const std::vector<TableMergeCandidate> candidates = FindCrossPageTableCandidates(pages);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].upper_block, 1u);
  EXPECT_EQ(candidates[0].lower_block, 1u);
  // One repeated header row: the lower table's boundary row is its second.
  EXPECT_EQ(candidates[0].prompt, LastRowPrompt("['banana long', '5']", "['name continued', '']"));
  EXPECT_EQ(candidates[0].prev_segments, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
}

TEST(CrossPageTablesTest, EveryListedTypeIsSkippedAndNothingElse) {
  for (BlockType skipped : {BlockType::kTableCaption, BlockType::kTableFootnote,
                            BlockType::kImageCaption, BlockType::kImageFootnote, BlockType::kHeader,
                            BlockType::kFooter, BlockType::kPageNumber, BlockType::kPageFootnote}) {
    const std::vector<std::vector<ContentBlock>> pages = {
        {Table(kFruitUpper), Block(skipped, "x")}, {Block(skipped, "y"), Table(kFruitLower)}};
    EXPECT_EQ(FindCrossPageTableCandidates(pages).size(), 1u) << BlockTypeName(skipped);
  }
  for (BlockType blocking : {BlockType::kText, BlockType::kCaption, BlockType::kFootnote,
                             BlockType::kAsideText, BlockType::kImage, BlockType::kTitle}) {
    const std::vector<std::vector<ContentBlock>> after = {
        {Table(kFruitUpper), Block(blocking, "x")}, {Table(kFruitLower)}};
    EXPECT_TRUE(FindCrossPageTableCandidates(after).empty()) << BlockTypeName(blocking);
    const std::vector<std::vector<ContentBlock>> before = {
        {Table(kFruitUpper)}, {Block(blocking, "x"), Table(kFruitLower)}};
    EXPECT_TRUE(FindCrossPageTableCandidates(before).empty()) << BlockTypeName(blocking);
  }
}

TEST(CrossPageTablesTest, QuotingFollowsPythonRepr) {
  const std::vector<std::vector<ContentBlock>> quotes = {
      {Table("<table><tr><td>it's</td><td>a\\b</td></tr></table>")},
      {Table("<table><tr><td>say \"x\"</td><td>tab\there</td></tr></table>")}};
  const std::vector<TableMergeCandidate> candidates = FindCrossPageTableCandidates(quotes);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].prompt,
            LastRowPrompt("[\"it's\", 'a\\\\b']", "['say \"x\"', 'tab\\there']"));
  // Texts are stripped and full→half-width; entities decoded; inner markup dropped.
  const std::vector<std::vector<ContentBlock>> texts = {
      {Table("<table><tr><td> Ａ&amp;B </td><td><b>x</b>\ny</td></tr></table>")},
      {Table("<table><tr><td>\u3000c</td><td>d\n</td></tr></table>")}};
  const std::vector<TableMergeCandidate> normalized = FindCrossPageTableCandidates(texts);
  ASSERT_EQ(normalized.size(), 1u);
  EXPECT_EQ(normalized[0].prompt, LastRowPrompt("['A&B', 'x\\ny']", "['c', 'd']"));
}

TEST(CrossPageTablesTest, StructureAndBoundaryRowsDecide) {
  // Widths 10% apart: no pair.
  EXPECT_TRUE(FindCrossPageTableCandidates({{Table(kFruitUpper, {0.1, 0.1, 0.6, 0.9})},
                                            {Table(kFruitLower, {0.1, 0.1, 0.65, 0.9})}})
                  .empty());
  EXPECT_EQ(FindCrossPageTableCandidates({{Table(kFruitUpper, {0.1, 0.1, 0.6, 0.9})},
                                          {Table(kFruitLower, {0.1, 0.1, 0.649, 0.9})}})
                .size(),
            1u);
  // Column counts and boundary rows that disagree: no pair.
  EXPECT_TRUE(
      FindCrossPageTableCandidates(
          {{Table(kFruitUpper)}, {Table("<table><tr><td>a</td><td>b</td><td>c</td></tr></table>")}})
          .empty());
  // Equal columns but boundary rows with different segment counts: no prompt.
  EXPECT_TRUE(
      FindCrossPageTableCandidates(
          {{Table("<table><tr><td>a</td><td>b</td></tr><tr><td colspan=\"2\">c</td></tr></table>")},
           {Table("<table><tr><td>d</td><td>e</td></tr></table>")}})
          .empty());
  // The lower table repeats all its rows as headers: no data row left.
  EXPECT_TRUE(FindCrossPageTableCandidates({{Table(kFruitUpper)}, {Table(kFruitUpper)}}).empty());
  // No content, or content that is not a table.
  EXPECT_TRUE(FindCrossPageTableCandidates({{Table("")}, {Table(kFruitLower)}}).empty());
  EXPECT_TRUE(FindCrossPageTableCandidates({{Table(kFruitUpper)}, {Table("plain text")}}).empty());
  EXPECT_TRUE(FindCrossPageTableCandidates({}).empty());
  EXPECT_TRUE(FindCrossPageTableCandidates({{}, {}, {Table(kFruitLower)}}).empty());
}

TEST(CrossPageTablesTest, AllConsecutivePagesAcrossWindowBoundaries) {
  // 70 pages: tables split over pages 63/64, which straddle MinerU's 64-page windows (the
  // client never sees that pair), and over pages 10/11.
  std::vector<std::vector<ContentBlock>> pages(70, std::vector<ContentBlock>{Text()});
  pages[10].push_back(Table(kT1));
  pages[11].insert(pages[11].begin(), Table(kT2));
  pages[63].push_back(Table(kFruitUpper));
  pages[64].insert(pages[64].begin(), Table(kFruitLower));
  const std::vector<TableMergeCandidate> candidates = FindCrossPageTableCandidates(pages);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].upper_page, 10u);
  EXPECT_EQ(candidates[0].lower_page, 11u);
  EXPECT_EQ(candidates[0].prompt, kTv28Prompt);
  EXPECT_EQ(candidates[1].upper_page, 63u);
  EXPECT_EQ(candidates[1].upper_block, 1u);
  EXPECT_EQ(candidates[1].lower_page, 64u);
  EXPECT_EQ(candidates[1].lower_block, 0u);
  EXPECT_EQ(candidates[1].prompt, LastRowPrompt("['banana long', '5']", "['name continued', '']"));
}

TEST(CrossPageTablesTest, MalformedNestedAndHugeTables) {
  for (const std::string bad : {
           "<table><tr><td colspan=\"x\">a</td><td>b</td></tr></table>",
           "<table><tr><td>a</td><td",
           "<table><!-- a</td><td>b</td></tr></table>",
           "<table><tr><td rowspan=\"100000\">a</td><td>b</td></tr></table>",
           "<tr><td>a</td><td>b</td></tr>",
       }) {
    EXPECT_TRUE(FindCrossPageTableCandidates({{Table(bad)}, {Table(kFruitLower)}}).empty()) << bad;
    EXPECT_TRUE(FindCrossPageTableCandidates({{Table(kFruitUpper)}, {Table(bad)}}).empty()) << bad;
  }
  // Past the occupancy budget (five 1000 × 1000 cells): rejected quickly, no pair.
  std::string heavy = "<table><tr>";
  for (int i = 0; i < 5; ++i) heavy += "<td colspan=\"1000\" rowspan=\"1000\">x</td>";
  heavy += "</tr></table>";
  EXPECT_TRUE(FindCrossPageTableCandidates({{Table(heavy)}, {Table(heavy)}}).empty());
  // A nested table is read as BeautifulSoup lists it: its rows are rows, its cells count in the
  // rows around it. The last data row here is the outer table's last.
  const std::string nested =
      "<table><tr><td>a</td><td><table><tr><td>x</td><td>y</td></tr></table></td></tr>"
      "<tr><td>b</td><td>c</td></tr></table>";
  const std::vector<TableMergeCandidate> candidates = FindCrossPageTableCandidates(
      {{Table(nested)}, {Table("<table><tr><td>d</td><td>e</td></tr></table>")}});
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].prompt, LastRowPrompt("['b', 'c']", "['d', 'e']"));
}

TEST(CrossPageTablesTest, Tv28bAnswerParsing) {
  EXPECT_EQ(ParseCellMergeAnswer("[1,0]", 2), (std::vector<int>{1, 0}));
  EXPECT_EQ(ParseCellMergeAnswer("```json\n[0, 1, 1]\n```", 3), (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(ParseCellMergeAnswer("cell_merge: [ 1 , 1 ]", 2), (std::vector<int>{1, 1}));
  for (size_t n : {1, 2}) {
    EXPECT_FALSE(ParseCellMergeAnswer("[2, 0]", n).has_value());
    EXPECT_FALSE(ParseCellMergeAnswer("[]", n).has_value());
    EXPECT_FALSE(ParseCellMergeAnswer("no", n).has_value());
    EXPECT_FALSE(ParseCellMergeAnswer("[1.0, 0]", n).has_value());
  }
}

TEST(CrossPageTablesTest, AnswerParsingEdges) {
  // The first match decides, even when JSON then rejects it.
  EXPECT_EQ(ParseCellMergeAnswer("see [x] then [0,1] and [1,1]", 2), (std::vector<int>{0, 1}));
  EXPECT_FALSE(ParseCellMergeAnswer("[1,] [1,0]", 2).has_value());
  EXPECT_EQ(ParseCellMergeAnswer("[[1,0]]", 2), (std::vector<int>{1, 0}));
  EXPECT_FALSE(ParseCellMergeAnswer("[01, 0]", 2).has_value());
  EXPECT_FALSE(ParseCellMergeAnswer("[ , ]", 2).has_value());
  EXPECT_FALSE(ParseCellMergeAnswer("[1 0]", 2).has_value());
  EXPECT_FALSE(ParseCellMergeAnswer("[1,0", 2).has_value());
  EXPECT_EQ(ParseCellMergeAnswer("[\t1,\r\n0 ]", 2), (std::vector<int>{1, 0}));
  // Python's \s and \d are Unicode, JSON's are not: the match is found and then rejected.
  EXPECT_FALSE(ParseCellMergeAnswer("[1,\u00A00] [1,0]", 2).has_value());
  EXPECT_FALSE(ParseCellMergeAnswer("[\uFF11,0] [1,0]", 2).has_value());
  EXPECT_FALSE(ParseCellMergeAnswer("[99999999999999999999999, 0]", 2).has_value());
  EXPECT_FALSE(ParseCellMergeAnswer("", 0).has_value());
  EXPECT_FALSE(ParseCellMergeAnswer(std::string(100000, '['), 1).has_value());
  // Expansion bounds: flags beyond the segments and segments beyond the width are ignored.
  EXPECT_EQ(ExpandCellMerge({1, 1, 1}, {{0, 2}}), (std::vector<int>{1, 1}));
  EXPECT_EQ(ExpandCellMerge({}, {}), std::vector<int>{});
  EXPECT_EQ(ExpandCellMerge({1}, {{2, 4}}), (std::vector<int>{0, 0, 1, 1}));
}

}  // namespace
}  // namespace mineru::pipeline
