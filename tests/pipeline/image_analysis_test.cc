// SPDX-License-Identifier: Apache-2.0
// The image-analysis answer (mineru-vl-utils 1.2.1
// post_process/image_analysis_postprocess.py, process_image_or_chart and
// has_malformed_markdown_table): TV-25, TV-26, TV-36's content, field extraction edge cases and
// hostile input.
#include "pipeline/image_analysis.h"

#include <gtest/gtest.h>

#include <ctime>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/python_str.h"

namespace mineru::pipeline {

// Readable failure messages (found by argument-dependent lookup).
void PrintTo(const ImageAnalysis& a, std::ostream* os) {
  *os << "{class: \"" << a.class_name << "\", sub_class: \"" << a.sub_class << "\", caption: \""
      << a.caption << "\", content: \"" << a.content << "\"}";
}

namespace {

std::string Repeat(std::string_view unit, size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += unit;
  return s;
}

std::string Answer(std::string_view class_name, std::string_view sub_class,
                   std::string_view caption, std::string_view content) {
  std::string s;
  s += "<|class_start|>" + std::string(class_name) + "<|class_end|>";
  s += "<|sub_class_start|>" + std::string(sub_class) + "<|sub_class_end|>";
  s += "<|caption_start|>" + std::string(caption) + "<|caption_end|>";
  s += "<|content_start|>" + std::string(content) + "<|content_end|>";
  return s;
}

TEST(PythonStrTest, SplitLinesLikePython) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(pystr::SplitLines(""), V{});
  EXPECT_EQ(pystr::SplitLines("\n"), V{""});
  EXPECT_EQ(pystr::SplitLines("a\r\nb\rc\x0b"
                              "d\x0c"
                              "e\x1c"
                              "f\u0085g\u2028h\u2029i\n\nj"),
            (V{"a", "b", "c", "d", "e", "f", "g", "h", "i", "", "j"}));
  EXPECT_EQ(pystr::SplitLines("a\x1f"
                              "b"),
            V{"a\x1f"
              "b"});  // U+001F is not a line break
}

TEST(PythonStrTest, LowerWordCharRepr) {
  // The final sigma rule is left out on purpose (Python writes "σας").
  EXPECT_EQ(pystr::Lower("ÉTÉ İ ΣΑΣ Chart"), "été i\u0307 σασ chart");
  EXPECT_EQ(pystr::Lower("\xff A"), "\xff a");
  EXPECT_TRUE(pystr::IsWordChar(U'é'));
  EXPECT_TRUE(pystr::IsWordChar(U'中'));
  EXPECT_TRUE(pystr::IsWordChar(U'²'));     // No
  EXPECT_FALSE(pystr::IsWordChar(0x0301));  // a combining mark is not \w in Python
  EXPECT_FALSE(pystr::IsWordChar(U'-'));
  EXPECT_EQ(PythonRepr("a'b"), "\"a'b\"");
  EXPECT_EQ(PythonRepr("a'\"b"), "'a\\'\"b'");
  EXPECT_EQ(PythonRepr("\t\n\x01\u00a0\u200b中"), "'\\t\\n\\x01\\xa0\\u200b中'");
  EXPECT_EQ(pystr::CollapseWhitespace(" a \t\u3000 b\n"), " a b ");
  EXPECT_EQ(pystr::Length("a中\xff"), 3u);
  EXPECT_EQ(pystr::Prefix("中文字", 2), "中文");
}

TEST(ImageAnalysisTest, Tv25Chart) {
  EXPECT_EQ(ParseImageAnalysis("<|class_start|>Chart<|class_end|><|sub_class_start|>Bar_Chart<|"
                               "sub_class_end|><|caption_start|>Sales by year<|caption_end|><|"
                               "content_start|>\n| Year | Sales |\n| --- | --- |\n| 2020 | 10 "
                               "|\n<|content_end|>"),
            (ImageAnalysis{"chart", "bar_chart", "Sales by year",
                           "| Year | Sales |\n| --- | --- |\n| 2020 | 10 |"}));
}

TEST(ImageAnalysisTest, Tv25MalformedChartTableEmptied) {
  EXPECT_EQ(ParseImageAnalysis(
                Answer("chart", "bar_chart", "c", "| a | b |\n| --- | --- |\n| 1 | 2 | 3 |"))
                .content,
            "");
}

TEST(ImageAnalysisTest, Tv25OtherClasses) {
  EXPECT_EQ(ParseImageAnalysis(Answer("chemical", "", "Benzene", "C1=CC=CC=C1")),
            (ImageAnalysis{"chemical", "", "Benzene", ""}));
  EXPECT_EQ(ParseImageAnalysis(Answer("pure_formula", "", "", "E=mc^2")).content, "E=mc^2");
  EXPECT_EQ(ParseImageAnalysis(Answer("natural_image", "photo", "A cat on a sofa.", "")),
            (ImageAnalysis{"natural_image", "photo", "A cat on a sofa.", ""}));
}

TEST(ImageAnalysisTest, Tv26TruncatedContent) {
  EXPECT_EQ(ParseImageAnalysis("<|class_start|>natural_image<|class_end|><|caption_start|>cap<|"
                               "caption_end|><|content_start|>partial text without end"),
            (ImageAnalysis{"natural_image", "", "cap", "partial text without end"}));
  // Untrimmed, and it still goes through the class's normalisation.
  EXPECT_EQ(ParseImageAnalysis("<|class_start|>x<|class_end|><|content_start|>\n tail \n").content,
            "\n tail \n");
  EXPECT_EQ(ParseImageAnalysis("<|class_start|>chemical<|class_end|><|content_start|>C=C").content,
            "");
  // Two starts, or an end tag anywhere: no fallback.
  EXPECT_EQ(ParseImageAnalysis("<|content_start|>a<|content_start|>b").content, "");
  EXPECT_EQ(ParseImageAnalysis("<|content_end|><|content_start|>b").content, "");
  EXPECT_EQ(ParseImageAnalysis("<|content_start|>  <|content_end|>").content, "");
}

TEST(ImageAnalysisTest, Tv36Flowchart) {
  const ImageAnalysis result = ParseImageAnalysis(
      "<|class_start|>flowchart<|class_end|><|sub_class_start|>flowchart<|sub_class_end|><|"
      "caption_start|>Pipeline<|caption_end|><|content_start|>\ngraph TD\n    A[formula] --> "
      "B[formula valid]\n    B --> C[Formula Refiner (x)]\n<|content_end|>");
  EXPECT_EQ(result, (ImageAnalysis{"flowchart", "flowchart", "Pipeline",
                                   "```mermaid\ngraph TD\n  A[\"formula\"] --> B[\"formula "
                                   "valid\"]\n  B --> C[\"Formula Refiner (x)\"]\n```"}));
}

TEST(ImageAnalysisTest, FlowchartRepetitionAndEmptyContent) {
  std::string looping = "graph TD\n";
  for (int i = 0; i < 8; ++i) looping += "  X --> Y\n";
  EXPECT_EQ(ParseImageAnalysis(Answer("flowchart", "", "loop", looping)).content, "");
  EXPECT_EQ(ParseImageAnalysis(Answer("flowchart", "", "none", "")).content, "");
}

TEST(ImageAnalysisTest, ChartRepairThenCheck) {
  // The repetition repair keeps the table, which is then well formed.
  EXPECT_EQ(
      ParseImageAnalysis(Answer("chart", "line_chart", "",
                                "| Year | Value |\n| --- | --- |\n| 2000 | 0 |\n| 2001 | 1 "
                                "|\n| 2001 | 1 |\n| 2001 | 1 |\nfoo"))
          .content,
      "| Year | Value |\n| --- | --- |\n| 2000 | 0 |\n| 2001 | 1 |\n| 2001 | 1 |\n| 2001 | 1 |");
  // Rows without a separator are malformed.
  EXPECT_EQ(ParseImageAnalysis(Answer("chart", "", "", "| a | b |\n| 1 | 2 |")).content, "");
  // Text without table rows is kept.
  EXPECT_EQ(ParseImageAnalysis(Answer("chart", "", "", "No data.")).content, "No data.");
}

TEST(ImageAnalysisTest, FieldExtraction) {
  // Any order; trimmed; class and sub_class lower-cased (Unicode too); the first start tag and
  // the first end tag after it.
  EXPECT_EQ(ParseImageAnalysis("<|content_start|> body <|content_end|><|caption_start|> Cap "
                               "<|caption_end|><|sub_class_start|> ÉTUDE <|sub_class_end|>"
                               "<|class_start|>\n NATURAL_Image \t<|class_end|>"),
            (ImageAnalysis{"natural_image", "étude", "Cap", "body"}));
  EXPECT_EQ(ParseImageAnalysis("<|caption_start|>a<|caption_end|>b<|caption_end|>"
                               "<|caption_start|>c<|caption_end|>")
                .caption,
            "a");
  EXPECT_EQ(ParseImageAnalysis("<|caption_start|>unterminated"), ImageAnalysis{});
  EXPECT_EQ(ParseImageAnalysis(""), ImageAnalysis{});
  EXPECT_EQ(ParseImageAnalysis("plain text answer"), ImageAnalysis{});
  // An unknown class keeps its content as it is.
  EXPECT_EQ(ParseImageAnalysis(Answer("", "", "", "| a | b |")).content, "| a | b |");
}

TEST(HasMalformedMarkdownTableTest, Rules) {
  EXPECT_FALSE(HasMalformedMarkdownTable("| a | b |\n| --- | --- |\n| 1 | 2 |"));
  EXPECT_TRUE(HasMalformedMarkdownTable("| a | b |\n| --- | --- |\n| 1 | 2 | 3 |"));
  EXPECT_TRUE(HasMalformedMarkdownTable("| --- | --- |\n| 1 | 2 |"));  // no header
  EXPECT_TRUE(HasMalformedMarkdownTable("text\n| --- | --- |"));       // header not a row
  EXPECT_TRUE(HasMalformedMarkdownTable("| a | b | c |\n| --- | --- |"));
  EXPECT_TRUE(HasMalformedMarkdownTable("| a | b |\n| c | d |"));  // rows, no separator
  EXPECT_TRUE(HasMalformedMarkdownTable("| a | b |\n| -- | -- |\n| 1 | 2 |"));
  // Blank lines between header and separator are skipped; data rows end at a blank line.
  EXPECT_FALSE(HasMalformedMarkdownTable("| a | b |\n\n| --- | --- |\n| 1 | 2 |\n\n| 1 | 2 | 3 |"));
  EXPECT_FALSE(
      HasMalformedMarkdownTable("| a | b |\n|:---:|---:|\n| 1 | 2 |\nplain\n| 1 | 2 | 3 |"));
  EXPECT_FALSE(HasMalformedMarkdownTable("a | b\n--- | ---\n1 | 2"));
  EXPECT_FALSE(HasMalformedMarkdownTable("| a | b |"));
  EXPECT_FALSE(HasMalformedMarkdownTable("no table"));
  EXPECT_FALSE(HasMalformedMarkdownTable(""));
  // Escaped pipes still split when counting columns.
  EXPECT_TRUE(HasMalformedMarkdownTable("| a | b |\n| --- | --- |\n| 1 | 2\\|3 |"));
}

TEST(HasMalformedMarkdownTableTest, SeparatorColumnIsLinear) {
  // Tests never assert on time: a scan quadratic in its input would not finish these inputs
  // within the test timeout.
  // Every separator line is a header for the next; the data-row scan must not restart per line.
  for (const std::string& in :
       {"| a | b |\n" + Repeat("| --- | --- |\n", size_t{1} << 20),
        "| a | b |\n" + Repeat("| --- | --- |\n", size_t{1} << 20) + "| 1 | 2 | 3 |"}) {
    const bool malformed = HasMalformedMarkdownTable(in);
    EXPECT_EQ(malformed, in.back() == '|');
  }
}

TEST(ImageAnalysisTest, HostileAnswersAreLinear) {
  const size_t kMiB = size_t{1} << 20;
  const std::vector<std::string> contents = {
      Repeat("| a | b |\n", kMiB),       Repeat("|", kMiB),
      Repeat("X --> Y\n", kMiB),         Repeat("A[\"", kMiB),
      Repeat("<|content_start|>", kMiB),
  };
  for (std::string_view class_name : {"chart", "flowchart", "natural_image"}) {
    for (const std::string& content : contents) {
      const ImageAnalysis result = ParseImageAnalysis(Answer(class_name, "", "", content));
      EXPECT_EQ(result.class_name, class_name);
    }
  }
  // A runaway answer without any end tag.
  const ImageAnalysis truncated = ParseImageAnalysis(
      "<|class_start|>chart<|class_end|><|content_start|>" + Repeat("| 1 | 2 |\n", kMiB));
  EXPECT_EQ(truncated.class_name, "chart");
}

}  // namespace
}  // namespace mineru::pipeline
