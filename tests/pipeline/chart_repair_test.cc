// SPDX-License-Identifier: Apache-2.0
// Chart repetition detection and repair (mineru-vl-utils 1.2.1
// post_process/chart_invalid_repetition.py): TV-23, TV-24, every detector's message, the table
// candidates, and hostile input.
#include "pipeline/chart_repair.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <vector>

namespace mineru::pipeline {
namespace {

using Errors = std::vector<std::string>;

std::string Repeat(std::string_view unit, size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += unit;
  return s;
}

TEST(ChartRepairTest, Tv23RepeatedFragmentRowDropped) {
  const std::string in =
      "| a | b |\n| --- | --- |\n| x | alpha; alpha; alpha; alpha; alpha; alpha; alpha; alpha; "
      "alpha |\n| y | 2 |";
  EXPECT_EQ(DetectChartRepetition(in),
            Errors{"content_repetition_phrase_segment: fragment 'alpha' repeats 8 times at line 3 "
                   "cell 2"});
  EXPECT_EQ(RepairChartRepetition(in), "| a | b |\n| --- | --- |\n| y | 2 |");
}

TEST(ChartRepairTest, Tv24EscapedPipeFallbackCandidateWins) {
  const std::string in = "Sales \\| Year\n| a | b |\n| --- | --- |\n| 1 | 2 |";
  EXPECT_EQ(DetectChartRepetition(in), Errors{"has_pipe_escape"});
  // Sales/Year + a/b (39 characters) beats a/b + 1/2 (35): equal lines and columns.
  EXPECT_EQ(RepairChartRepetition(in), "| Sales | Year |\n| --- | --- |\n| a | b |");
}

TEST(ChartRepairTest, Tv24CleanTableUnchanged) {
  const std::string in = "| Year | Sales |\n| --- | :---: |\n|2020|10|\n\nA note.";
  EXPECT_TRUE(DetectChartRepetition(in).empty());
  EXPECT_EQ(RepairChartRepetition(in), in);
}

TEST(ChartRepairTest, Tv24ThreeEqualLinesDropTrailingText) {
  const std::string in =
      "| Year | Value |\n| --- | --- |\n| 2000 | 0 |\n| 2001 | 1 |\n| 2001 | 1 |\n| 2001 | 1 "
      "|\nfoo";
  EXPECT_EQ(DetectChartRepetition(in),
            Errors{"content_repetition_consecutive_line: line 4 repeats 3 times"});
  EXPECT_EQ(
      RepairChartRepetition(in),
      "| Year | Value |\n| --- | --- |\n| 2000 | 0 |\n| 2001 | 1 |\n| 2001 | 1 |\n| 2001 | 1 |");
}

TEST(ChartRepairTest, EachDetectorMessage) {
  EXPECT_EQ(DetectChartRepetition("a\n\n\n\n\nb"),
            Errors{"content_repetition_newline: 5 consecutive newlines at line 1"});
  EXPECT_TRUE(DetectChartRepetition("a\n\n\n\nb").empty());  // 4 newlines are fine
  EXPECT_EQ(DetectChartRepetition(Repeat("xyz", 90)),
            Errors{"content_repetition_whole_content: content repeats 30 times, "
                   "repeated_unit_len=3"});
  // Below 80 characters, and with a unit that does not divide the length, nothing.
  EXPECT_TRUE(DetectChartRepetition(Repeat("xyz", 78)).empty());
  EXPECT_TRUE(DetectChartRepetition("x\n" + Repeat("xyz", 90)).empty());
  EXPECT_EQ(DetectChartRepetition(std::string(25, 'a')),
            Errors{"content_repetition_repeated_char: character 'a' repeats 25 times at line 1"});
  EXPECT_TRUE(DetectChartRepetition(std::string(19, '7')).empty());
  EXPECT_EQ(DetectChartRepetition("x\nx\nx"),
            Errors{"content_repetition_consecutive_line: line 1 repeats 3 times"});
  EXPECT_EQ(DetectChartRepetition("this line is long enough to count\n"
                                  "this line is long enough to count"),
            Errors{"content_repetition_consecutive_line: line 1 repeats 2 times"});
  std::string many = "| Year | Value |\n| --- | --- |\n";
  for (int i = 0; i < 4; ++i) many += "| this is a long repeated row here | 1 |\n| other | 2 |\n";
  EXPECT_EQ(DetectChartRepetition(many),
            Errors{"content_repetition_same_line_many_times: same line appears 4 times at lines "
                   "3,5,7,9"});
}

TEST(ChartRepairTest, CellDetectors) {
  const std::string header = "| a | b |\n|---|---|\n| x | ";
  EXPECT_EQ(DetectChartRepetition(header + Repeat("abcdefghij", 310) + " |"),
            Errors{"content_repetition_cell_overlength: len=310, double_colon=0, semicolon=0 at "
                   "line 3 cell 2"});
  EXPECT_EQ(DetectChartRepetition(header + Repeat("a::", 63) + " |"),
            Errors{"content_repetition_cell_overlength: len=63, double_colon=21, semicolon=0 at "
                   "line 3 cell 2"});
  // Fragments compare trimmed and lower-cased; shorter than 3 they do not count.
  EXPECT_EQ(DetectChartCellRepetition("Foo, foo ;FOO:: foo|foo,fOo,  foo , foo"),
            "content_repetition_phrase_segment: fragment 'foo' repeats 8 times");
  EXPECT_EQ(DetectChartCellRepetition("ab, ab, ab, ab, ab, ab, ab, ab, ab"), std::nullopt);
  EXPECT_EQ(DetectChartCellRepetition(std::string(300, 'x')), std::nullopt);
  EXPECT_TRUE(DetectChartCellRepetition(std::string(301, 'x')).has_value());
  // The header and rows before the separator are not data rows.
  EXPECT_TRUE(
      DetectChartRepetition("| a | " + Repeat("abcdefghij", 310) + " |\n| --- | --- |").empty());
}

TEST(ChartRepairTest, TokenRuns) {
  EXPECT_EQ(DetectChartRepetition("a a a a a a a a a"),
            Errors{"content_repetition_single_token: token 'a' repeats 9 times at token 0"});
  EXPECT_EQ(DetectChartRepetition("A a A a A a A a"),
            Errors{"content_repetition_single_token: token 'A' repeats 8 times at token 0"});
  EXPECT_EQ(DetectChartRepetition("| | | | | | | | | |"),
            Errors{"content_repetition_single_token: token '|' repeats 10 times at token 0"});
  EXPECT_EQ(DetectChartRepetition("x-y.z x-y.z x-y.z x-y.z x-y.z x-y.z x-y.z x-y.z"),
            Errors{"content_repetition_single_token: token 'x-y.z' repeats 8 times at token 0"});
  EXPECT_EQ(DetectChartRepetition("中 中 中 中 中 中 中 中"),
            Errors{"content_repetition_single_token: token '中' repeats 8 times at token 0"});
  EXPECT_TRUE(DetectChartRepetition("a a a a a a a b").empty());
  // Separator lines are left out of the token stream.
  EXPECT_TRUE(DetectChartRepetition("| a | b |\n| --- | --- |\n| c | d |").empty());
}

TEST(ChartRepairTest, ReprQuotingInMessages) {
  EXPECT_EQ(DetectChartCellRepetition("it's, it's, it's, it's, it's, it's, it's, it's"),
            "content_repetition_phrase_segment: fragment \"it's\" repeats 8 times");
  EXPECT_EQ(DetectChartCellRepetition("a\\b, a\\b, a\\b, a\\b, a\\b, a\\b, a\\b, a\\b"),
            "content_repetition_phrase_segment: fragment 'a\\\\b' repeats 8 times");
}

TEST(ChartRepairTest, RowSplitAndSeparator) {
  EXPECT_EQ(SplitChartMarkdownRow(" | a | b\\|c | `x|y` | "),
            (std::vector<std::string>{"a", "b\\|c", "`x|y`"}));
  EXPECT_EQ(SplitChartMarkdownRow("no pipe"), std::nullopt);
  EXPECT_EQ(SplitChartMarkdownRow("   "), std::nullopt);
  EXPECT_EQ(SplitChartMarkdownRow("|"), (std::vector<std::string>{""}));
  EXPECT_TRUE(IsChartSeparatorRow({"---", ":---:", "- - -", "---:"}));
  EXPECT_FALSE(IsChartSeparatorRow({"--", "---"}));
  EXPECT_FALSE(IsChartSeparatorRow({}));
}

TEST(ChartRepairTest, NoTableLeavesInputUnchanged) {
  EXPECT_EQ(RepairChartRepetition("a a a a a a a a a"), "a a a a a a a a a");
  EXPECT_EQ(ExtractLargestChartTable("just text"), "");
  EXPECT_EQ(RepairChartRepetition(""), "");
}

TEST(ChartRepairTest, NormalisedPipesAndCells) {
  // Fullwidth and broken-bar pipes count as pipes; `\|` becomes a pipe before splitting.
  EXPECT_EQ(RepairChartRepetition("｜ a ｜ b ｜\n｜---｜---｜\n｜ 1 ｜ 2 ｜\nx \\| y"),
            "| a | b |\n| --- | --- |\n| 1 | 2 |\n| x | y |");
  EXPECT_EQ(RepairChartRepetition("| a\tb | c  d |\n| --- | --- |\n| x | y |\n\\|"),
            "| a b | c d |\n| --- | --- |\n| x | y |");
  // An odd backtick count protects the following pipes, so that table no longer parses and
  // the fallback run below it wins.
  EXPECT_EQ(RepairChartRepetition(
                "| a | b |\n| --- | --- |\n| `x | 1 |\n| 2 | 3 |\n| 2 | 3 |\n| 2 | 3 |"),
            "| 2 | 3 |\n| --- | --- |\n| 2 | 3 |\n| 2 | 3 |");
}

TEST(ChartRepairTest, CandidateChoice) {
  // Fallback run (3 lines written as 4) beats the separator table (4 lines) by length.
  EXPECT_EQ(RepairChartRepetition("| a | b |\n| c | d |\n| e | f |\n\n| g | h |\n| --- | --- |\n"
                                  "| 1 | 2 |\n| 3 | 4 |\nz z z z z z z z"),
            "| a | b |\n| --- | --- |\n| c | d |\n| e | f |");
  // A second separator inside a block starts a new candidate with the row before it as header.
  EXPECT_EQ(RepairChartRepetition("| a | b | c |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n"
                                  "| --- | --- |\n| x | y |\n| p | q |\n| r | s |\n\\|"),
            "| x | y |\n| --- | --- |\n| p | q |\n| r | s |");
}

TEST(ChartRepairTest, HostileInputIsLinear) {
  // Tests never assert on time: a scan quadratic in its input would not finish these inputs
  // within the test timeout.
  const size_t kMiB = size_t{1} << 20;
  const std::vector<std::string> inputs = {
      Repeat("|", kMiB),           Repeat("| a | b |\n", kMiB),
      Repeat("|---|---|\n", kMiB), Repeat("alpha; ", kMiB),
      Repeat("\n", kMiB),          Repeat("a|", kMiB),
      Repeat("x-", kMiB),          Repeat("\\", kMiB),
      Repeat("中", kMiB),          Repeat("| t | " + Repeat("ab::", 40) + " |\n", kMiB),
  };
  for (const std::string& in : inputs) {
    const std::string out = RepairChartRepetition(in);
    EXPECT_LE(out.size(), 2 * in.size() + 16);
  }
}

TEST(ChartRepairTest, InvalidUtf8IsCopiedThrough) {
  const std::string in = "| a\xff | b |\n| --- | --- |\n| \xc3 | 2 |\n\\|";
  EXPECT_EQ(RepairChartRepetition(in), "| a\xff | b |\n| --- | --- |\n| \xc3 | 2 |");
}

}  // namespace
}  // namespace mineru::pipeline
