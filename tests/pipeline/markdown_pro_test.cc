// SPDX-License-Identifier: Apache-2.0
// MakeMarkdownPro / MergeParaTextPro (MinerU 3.4.4 mm_markdown) on hand-built middle.json pages:
// the vectors TV-33 and TV-34, escaping, spacing, visual groups, tables and malformed input.
#include "pipeline/markdown_pro.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/markdown.h"
#include "pro_documents.h"

namespace mineru::pipeline {
namespace {

using pro_documents::Block;
using pro_documents::Box;
using pro_documents::Group;
using pro_documents::MediaSpan;
using pro_documents::Span;
using pro_documents::TextBlock;

const Box kBox{0, 0, 10, 10};

Json Text(const std::string& content) { return Span(kBox, "text", content); }
Json Inline(const std::string& latex) { return Span(kBox, "inline_equation", latex); }
Json Line(std::vector<Json> spans) { return pro_documents::Line(kBox, std::move(spans)); }
Json Lines(const std::string& type, std::vector<Json> lines) {
  return {{"bbox", kBox},
          {"type", type},
          {"angle", 0},
          {"lines", Json(std::move(lines))},
          {"index", 0}};
}
Json Para(const std::string& type, const std::string& text) {
  return TextBlock(type, kBox, 0, text);
}
Json Doc(std::vector<Json> para) {
  return Json::array({pro_documents::Page(std::move(para), {}, 0, 100, 100)});
}
std::string Md(std::vector<Json> para, const MarkdownOptions& options = {}) {
  return MakeMarkdownPro(Doc(std::move(para)), options);
}

TEST(MarkdownProTest, Tv33NewBlockTypes) {
  EXPECT_EQ(MakeMarkdownPro(pro_documents::Tv33Document()),
            "Table 1: Results\n\n<table><tr><td>a</td><td><img "
            "src=\"images/x.jpg\"/></td></tr></table>\n\n\\* p<0.05\n\n```python\ndef f(x):\n    "
            "return x\n```\n\n<div class=\"mineru-algorithm\" style=\"white-space: pre-wrap; "
            "font-family:monospace;\">\nfor i in 1..n: $a_i &lt; b$\n</div>\n\n- first item  \n# "
            "second\n\n![](images/image_720.jpg)\n\n![](images/chart_720.jpg)\n\n\\# not a "
            "heading and a\\_b\n\n[1] A. Author.");
}

TEST(MarkdownProTest, Tv34ContentListV2Document) {
  EXPECT_EQ(MakeMarkdownPro(pro_documents::Tv34Document()),
            "# 1 Introduction\n\nWe study $x_1$ and the \\*method\\* is robust to "
            "noise.\n\n![](images/image_0_256.jpg)\n\n<details>\n<summary>natural_image</"
            "summary>\n\nA red car on a road.\n</details>\n\nFigure 1: A "
            "car.\n\n![](images/chart_0_496.jpg)\n\n<details>\n<summary>bar_chart</summary>\n\n| "
            "Year | Sales |\n| --- | --- |\n| 2020 | 10 "
            "|\n</details>\n\n<table><tr><td>Name</td><td>Qty</td></tr><tr><td>banana longname "
            "continued</td><td>5</td></tr><tr><td>cherry</td><td> $x^2$ "
            "</td></tr></table>\n\n$$\nE=mc^2\n$$");
}

TEST(MarkdownProTest, TheFiveCharactersAreEscapedUnlessAlreadyEscaped) {
  EXPECT_EQ(EscapeMarkdownText("a*b_c`d~e$f"), "a\\*b\\_c\\`d\\~e\\$f");
  // One backslash already escapes; two are an escaped backslash, so the star gets one more.
  EXPECT_EQ(EscapeMarkdownText("\\*"), "\\*");
  EXPECT_EQ(EscapeMarkdownText("\\\\*"), "\\\\\\*");
  EXPECT_EQ(EscapeMarkdownText("\\\\\\*"), "\\\\\\*");
  // A backslash before another character resets the count.
  EXPECT_EQ(EscapeMarkdownText("\\a*"), "\\a\\*");
  EXPECT_EQ(EscapeMarkdownText("#+-[]<>|"), "#+-[]<>|");
  EXPECT_EQ(EscapeMarkdownText(""), "");
  EXPECT_EQ(EscapeMarkdownText("中*文"), "中\\*文");
}

TEST(MarkdownProTest, LeadingBlockMarkerOfTextBlocks) {
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("# x"), "\\# x");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("###### x"), "\\###### x");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("####### x"), "####### x");  // seven: no heading
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("#x"), "#x");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("+ x"), "\\+ x");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("-\tx"), "\\-\tx");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("- "), "\\- ");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("-"), "-");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("--x"), "--x");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("-1"), "-1");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("*  x"), "*  x");  // only #, + and -
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("   # x"), "   \\# x");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix(" \t - x"), " \t \\- x");
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix("    # x"), "    # x");  // four: indented code
  EXPECT_EQ(EscapeTextBlockMarkdownPrefix(""), "");
}

TEST(MarkdownProTest, PrefixEscapeOnlyForTextBlocks) {
  EXPECT_EQ(MergeParaTextPro(Para("text", "- item")), "\\- item");
  EXPECT_EQ(MergeParaTextPro(Para("text", "+ item"), {}, /*escape_text_block_prefix=*/false),
            "+ item");
  EXPECT_EQ(MergeParaTextPro(Para("ref_text", "# x")), "# x");
  EXPECT_EQ(MergeParaTextPro(Para("image_caption", "- x")), "- x");
  // Titles: the heading marks come first, the title text itself is never prefix-escaped.
  EXPECT_EQ(Md({Para("title", "# x")}), "# # x");
  // The spans are stripped first, so leading spaces never count as indentation.
  EXPECT_EQ(MergeParaTextPro(Para("text", "   # x")), "\\# x");
}

TEST(MarkdownProTest, EscapingAppliesToTextSpansOutsideCodeBodies) {
  Json block = Lines("text", {Line({Text("a_b"), Inline("a_b"), Text("*x*")})});
  EXPECT_EQ(MergeParaTextPro(block), "a\\_b $a_b$ \\*x\\*");
  EXPECT_EQ(MergeParaTextPro(Para("title", "x_1")), "x\\_1");
  EXPECT_EQ(MergeParaTextPro(Para("code_body", "a_b *p")), "a_b *p");
  // The 2.7.6 rule escapes nothing.
  EXPECT_EQ(MergeParaText(block), "a_b $a_b$ *x*");
}

TEST(MarkdownProTest, NoSeparatorSpaceAtTheEndOfAParagraph) {
  // A paragraph ending in an inline formula, and one whose last span is blank.
  EXPECT_EQ(MergeParaTextPro(Lines("text", {Line({Text("Let"), Inline("x")})})), "Let $x$");
  EXPECT_EQ(MergeParaTextPro(Lines("text", {Line({Text("end."), Text("  ")})})), "end.");
  // List items keep their own text; the item separator is "  \n".
  Json list = {
      {"type", "list"},
      {"bbox", kBox},
      {"index", 0},
      {"blocks", {Lines("text", {Line({Text("one"), Inline("y")})}), Para("text", "two")}}};
  EXPECT_EQ(Md({list}), "one $y$  \ntwo");
}

TEST(MarkdownProTest, CjkSpacing) {
  // Within a line spans are separated; across lines not, unless the line ends in a formula.
  Json block = Lines("text", {Line({Text("面积为"), Inline("x^2")}), Line({Text("平方米")}),
                              Line({Text("中文"), Text("段落")})});
  EXPECT_EQ(MergeParaTextPro(block), "面积为 $x^2$ 平方米中文 段落");
  // A formula at the very end gets no trailing space.
  EXPECT_EQ(MergeParaTextPro(Lines("text", {Line({Text("面积为"), Inline("x")})})), "面积为 $x$");
}

TEST(MarkdownProTest, HyphenRuleAsBefore) {
  Json block = Lines("text", {Line({Text("an exam-")}), Line({Text("ple of it")})});
  EXPECT_EQ(MergeParaTextPro(block), "an example of it");
  Json kept = Lines("text", {Line({Text("Self-")}), Line({Text("Driving")})});
  EXPECT_EQ(MergeParaTextPro(kept), "Self-Driving");
}

TEST(MarkdownProTest, FormulaRecognitionOffShowsTheEquationCrop) {
  Json equation = Block("interline_equation", kBox, 0,
                        {{{"bbox", kBox},
                          {"type", "interline_equation"},
                          {"content", "x"},
                          {"image_path", "eq.jpg"}}});
  MarkdownOptions off;
  off.formula_enabled = false;
  EXPECT_EQ(Md({equation}), "$$\nx\n$$");
  EXPECT_EQ(Md({equation}, off), "![](images/eq.jpg)");
}

TEST(MarkdownProTest, VisualGroupsRenderInIndexOrder) {
  // Footnote stored before the body but with a higher index; caption below the image (higher
  // index) comes after it, no footnote-specific ordering.
  Json body = Block("image_body", kBox, 5, {MediaSpan(kBox, "image", "a.jpg")});
  Json group = Group(
      "image", kBox, 5,
      {TextBlock("image_footnote", kBox, 7, "note"), body,
       TextBlock("image_caption", kBox, 6, "cap"), TextBlock("image_caption", kBox, 4, "above")});
  EXPECT_EQ(Md({group}), "above  \n![](images/a.jpg)  \ncap  \nnote");
  // Sub-blocks without an index go last, in stored order.
  Json unindexed = TextBlock("image_caption", kBox, 0, "late");
  unindexed.erase("index");
  Json with_late = Group("image", kBox, 5, {unindexed, body});
  EXPECT_EQ(Md({with_late}), "![](images/a.jpg)  \nlate");
}

TEST(MarkdownProTest, DetailsSummaryDefaultsAndEmptyContent) {
  Json photo = MediaSpan(kBox, "image", "a.jpg");
  photo["content"] = "a cat";
  Json image = Group("image", kBox, 0, {Block("image_body", kBox, 0, {photo})});
  EXPECT_EQ(
      Md({image}),
      "![](images/a.jpg)\n\n<details>\n<summary>image content</summary>\n\na cat\n</details>");
  Json plot = MediaSpan(kBox, "chart", "");
  plot["content"] = "data";
  Json chart =
      Group("chart", kBox, 0,
            {Block("chart_body", kBox, 0, {plot}), TextBlock("chart_caption", kBox, 1, "c")});
  // No crop: no link; the details block and the caption still render.
  EXPECT_EQ(Md({chart}), "<details>\n<summary>chart content</summary>\n\ndata\n</details>\n\nc");
  Json blank = MediaSpan(kBox, "chart", "c.jpg");
  blank["content"] = " \n ";
  Json quiet = Group("chart", kBox, 0, {Block("chart_body", kBox, 0, {blank})});
  quiet["sub_type"] = "pie_chart";
  EXPECT_EQ(Md({quiet}), "![](images/c.jpg)");
}

TEST(MarkdownProTest, TableHtmlOrCrop) {
  auto table = [](const std::string& html, const std::string& path) {
    return Group(
        "table", kBox, 0,
        {Block("table_body", kBox, 0,
               {{{"bbox", kBox}, {"type", "table"}, {"html", html}, {"image_path", path}}}),
         TextBlock("table_footnote", kBox, 1, "f")});
  };
  EXPECT_EQ(Md({table("<table><tr><td><img src=\"data:image/png;base64,AA\"/></td></tr></table>",
                      "t.jpg")}),
            "<table><tr><td><img src=\"data:image/png;base64,AA\"/></td></tr></table>\n\nf");
  MarkdownOptions off;
  off.table_enabled = false;
  EXPECT_EQ(Md({table("<table></table>", "t.jpg")}, off), "![](images/t.jpg)  \nf");
  EXPECT_EQ(Md({table("", "t.jpg")}), "![](images/t.jpg)  \nf");
  EXPECT_EQ(Md({table("", "")}), "f");
}

TEST(MarkdownProTest, AbsorbedBlocksProduceNothing) {
  Json absorbed = {{"type", "text"},
                   {"bbox", kBox},
                   {"index", 1},
                   {"lines", Json::array()},
                   {"lines_deleted", true}};
  Json table = Group("table", kBox, 2,
                     {{{"type", "table_body"},
                       {"bbox", kBox},
                       {"index", 2},
                       {"lines", Json::array()},
                       {"lines_deleted", true}}});
  Json empty_list = {
      {"type", "list"},          {"bbox", kBox},         {"index", 3}, {"sub_type", "ref_text"},
      {"blocks", Json::array()}, {"lines_deleted", true}};
  EXPECT_EQ(Md({Para("text", "a"), absorbed, table, empty_list, Para("text", "b")}), "a\n\nb");
}

TEST(MarkdownProTest, CodeBodiesAndAlgorithms) {
  Json code = Group("code", kBox, 0,
                    {TextBlock("code_caption", kBox, 0, "Listing_1"),
                     TextBlock("code_body", kBox, 1, "x = a_b * 2")});
  code["sub_type"] = "code";
  EXPECT_EQ(Md({code}), "Listing\\_1  \n```txt\nx = a_b * 2\n```");  // no guess_lang → txt
  Json algorithm =
      Group("code", kBox, 0,
            {Block("code_body", kBox, 0,
                   {Span(kBox, "inline_equation", "a"), Span(kBox, "inline_equation", "b"),
                    Span(kBox, "text", " & "), Span(kBox, "inline_equation", "c>d"),
                    Span(kBox, "text", ""), Span(kBox, "inline_equation", "e"),
                    Span(kBox, "inline_equation", "  ")})});
  algorithm["sub_type"] = "algorithm";
  // Two touching formulas get a space; an empty text span between formulas does not count as
  // text; blank formulas vanish; text is HTML-escaped, not Markdown-escaped.
  EXPECT_EQ(RenderAlgorithmHtml(algorithm["blocks"][0], {}),
            "<div class=\"mineru-algorithm\" style=\"white-space: pre-wrap; "
            "font-family:monospace;\">\n$a$ $b$ &amp; $c&gt;d$ $e$\n</div>");
  Json blank = Group("code", kBox, 0, {Para("code_body", "  ")});
  blank["sub_type"] = "algorithm";
  EXPECT_EQ(Md({blank, Para("text", "after")}), "after");
  // An unknown sub_type renders the plain body text (MinerU raises).
  Json odd = Group("code", kBox, 0, {Para("code_body", "plain_text")});
  odd["sub_type"] = "other";
  EXPECT_EQ(Md({odd}), "plain_text");
}

TEST(MarkdownProTest, TitleLevels) {
  Json title = Para("title", "T");
  title["level"] = 2;
  Json deep = Para("title", "D");
  deep["level"] = 9;
  Json zero = Para("title", "Z");
  zero["level"] = 0;
  EXPECT_EQ(Md({Para("title", "A"), title, deep, zero}), "# A\n\n## T\n\n#### D\n\nZ");
}

TEST(MarkdownProTest, DiscardedBlocksNeverAppearAndPagesJoin) {
  Json doc =
      Json::array({pro_documents::Page({Para("text", "one")}, {Para("header", "H")}, 0, 100, 100),
                   pro_documents::Page({}, {}, 1, 100, 100),
                   pro_documents::Page({Para("text", "two")}, {}, 2, 100, 100)});
  EXPECT_EQ(MakeMarkdownPro(doc), "one\n\ntwo");
}

TEST(MarkdownProTest, MalformedPagesAndBlocksNeverThrow) {
  EXPECT_EQ(MakeMarkdownPro(Json()), "");
  EXPECT_EQ(MakeMarkdownPro(Json::object()), "");
  EXPECT_EQ(MakeMarkdownPro(Json::array({1, "x", nullptr, Json::array()})), "");
  const Json weird = Json::parse(R"json([{"para_blocks": [
      1, "s", {}, {"type": 3}, {"type": "text", "lines": "no"},
      {"type": "text", "lines": [1, {"spans": [2, {"type": "text", "content": 5}]}]},
      {"type": "image", "blocks": [1, {"type": "image_body", "lines": [
          {"spans": [{"type": "image", "image_path": 7, "content": [1]}]}]}]},
      {"type": "table", "blocks": "x"},
      {"type": "code", "sub_type": 1, "blocks": [{"type": "code_body"}]},
      {"type": "list", "blocks": [1, {"type": "text", "lines": [{"spans": [
          {"type": "text", "content": "item"}]}]}]},
      {"type": "title", "level": "high", "lines": []}]}])json");
  // The title without text still renders its marks, as in MinerU.
  EXPECT_EQ(MakeMarkdownPro(weird), "item\n\n#");
}

TEST(MarkdownProTest, HugeParagraphIsLinear) {
  // 50000 spans: the joinable flags come from one backwards pass, not a scan per span.
  std::vector<Json> spans;
  for (int i = 0; i < 50000; ++i) spans.push_back(Text("w"));
  std::string expected;
  for (int i = 0; i < 50000; ++i) expected += i == 0 ? "w" : " w";
  EXPECT_EQ(MergeParaTextPro(Lines("text", {Line(std::move(spans))})), expected);
}

}  // namespace
}  // namespace mineru::pipeline
