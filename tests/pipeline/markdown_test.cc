// SPDX-License-Identifier: Apache-2.0
// MakeMarkdown / MergeParaText against MinerU 2.7.6 mineru/backend/vlm/vlm_middle_json_mkcontent.py
// (union_make, mm_markdown), on hand-built middle.json pages.
#include "pipeline/markdown.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mineru::pipeline {
namespace {

Json Span(const std::string& type, const std::string& content) {
  return {{"bbox", {0, 0, 10, 10}}, {"type", type}, {"content", content}};
}
Json Text(const std::string& content) { return Span("text", content); }
Json Inline(const std::string& latex) { return Span("inline_equation", latex); }
Json Line(std::vector<Json> spans) {
  return {{"bbox", {0, 0, 10, 10}}, {"spans", Json(std::move(spans))}};
}
// A simple block with one line per entry of `lines`.
Json Block(const std::string& type, std::vector<Json> lines) {
  return {{"bbox", {0, 0, 10, 10}},
          {"type", type},
          {"angle", 0},
          {"lines", Json(std::move(lines))},
          {"index", 0}};
}
Json TextBlock(const std::string& type, const std::string& text) {
  return Block(type, {Line({Text(text)})});
}
Json Grouped(const std::string& type, std::vector<Json> blocks) {
  return {
      {"bbox", {0, 0, 10, 10}}, {"type", type}, {"blocks", Json(std::move(blocks))}, {"index", 0}};
}
Json ImageSpanBlock(const std::string& body_type, const std::string& span_type,
                    const std::string& path) {
  return Block(body_type,
               {Line({{{"bbox", {0, 0, 1, 1}}, {"type", span_type}, {"image_path", path}}})});
}
Json Page(std::vector<Json> para, std::vector<Json> discarded = {}, int idx = 0) {
  return {{"para_blocks", Json(std::move(para))},
          {"discarded_blocks", Json(std::move(discarded))},
          {"page_size", {612, 792}},
          {"page_idx", idx}};
}
std::string Md(std::vector<Json> para, const MarkdownOptions& options = {}) {
  return MakeMarkdown(Json::array({Page(std::move(para))}), options);
}

TEST(MarkdownTest, EnglishSpansAndLinesAreSpaceSeparated) {
  Json block = Block("text", {Line({Text("Hello"), Text("world")}), Line({Text("second line")})});
  EXPECT_EQ(MergeParaText(block), "Hello world second line");
  EXPECT_EQ(Md({block}), "Hello world second line");
}

TEST(MarkdownTest, SpansAreStrippedBeforeJoining) {
  Json block = Block("text", {Line({Text("  padded  ")}), Line({Text("\tnext ")})});
  EXPECT_EQ(MergeParaText(block), "padded next");
}

TEST(MarkdownTest, CjkLinesJoinWithoutSpaces) {
  Json block = Block("text", {Line({Text("你好")}), Line({Text("世界")})});
  EXPECT_EQ(MergeParaText(block), "你好世界");
  // Inside a line spans still get a space.
  Json two = Block("text", {Line({Text("中文"), Text("段落")})});
  EXPECT_EQ(MergeParaText(two), "中文 段落");
}

TEST(MarkdownTest, CjkLineEndingInInlineEquationKeepsSpace) {
  Json block = Block("text", {Line({Text("面积为"), Inline("x^2")}), Line({Text("平方米")})});
  EXPECT_EQ(MergeParaText(block), "面积为 $x^2$ 平方米");
}

TEST(MarkdownTest, EnglishInlineEquation) {
  Json block = Block("text", {Line({Text("Let"), Inline("a+b"), Text("be given.")})});
  EXPECT_EQ(MergeParaText(block), "Let $a+b$ be given.");
  MarkdownOptions options;
  options.inline_left = "\\(";
  options.inline_right = "\\)";
  EXPECT_EQ(MergeParaText(block, options), "Let \\(a+b\\) be given.");
}

TEST(MarkdownTest, HyphenDroppedBeforeLowercaseLine) {
  Json block = Block("text", {Line({Text("an exam-")}), Line({Text("ple of it")})});
  EXPECT_EQ(MergeParaText(block), "an example of it");
}

TEST(MarkdownTest, HyphenKeptBeforeUppercaseLineWithoutSpace) {
  Json block = Block("text", {Line({Text("Self-")}), Line({Text("Driving cars")})});
  EXPECT_EQ(MergeParaText(block), "Self-Driving cars");
}

TEST(MarkdownTest, HyphenRuleNeedsLettersAndTextNextLine) {
  // A digit before the hyphen is not a word break: the normal space follows.
  Json digits = Block("text", {Line({Text("pages 3-")}), Line({Text("five")})});
  EXPECT_EQ(MergeParaText(digits), "pages 3- five");
  // Next line starting with an inline equation: hyphen kept, no space.
  Json eq = Block("text", {Line({Text("pre-")}), Line({Inline("x"), Text("post")})});
  EXPECT_EQ(MergeParaText(eq), "pre-$x$ post");
  // Last line of the paragraph: kept.
  Json last = Block("text", {Line({Text("the end-")})});
  EXPECT_EQ(MergeParaText(last), "the end-");
}

TEST(MarkdownTest, HyphenRuleDoesNotApplyToCjk) {
  // Five CJK letters outnumber four Latin ones: CJK rules, lines joined as they are.
  Json block = Block("text", {Line({Text("中文中文中ab-")}), Line({Text("cd")})});
  EXPECT_EQ(MergeParaText(block), "中文中文中ab-cd");
}

TEST(MarkdownTest, FullWidthLettersAndDigitsBecomeAscii) {
  EXPECT_EQ(FullWidthAlnumToAscii("Ｔｅｓｔ１２３，。"), "Test123，。");
  Json block = TextBlock("text", "版本１２３");
  EXPECT_EQ(MergeParaText(block), "版本123");
  // Inline equations are not converted.
  Json eq = Block("text", {Line({Inline("１")})});
  EXPECT_EQ(MergeParaText(eq), "$１$");
}

TEST(MarkdownTest, LanguageDetectorCountsLetters) {
  EXPECT_TRUE(IsCjkText("中文字a"));
  EXPECT_FALSE(IsCjkText("中文abc"));
  EXPECT_TRUE(IsCjkText("ひらがなとカタカナ abc"));
  EXPECT_TRUE(IsCjkText("한국어 텍스트"));
  EXPECT_FALSE(IsCjkText("123 456 !!"));
  EXPECT_FALSE(IsCjkText(""));
  EXPECT_FALSE(IsCjkText("Привет мир"));
}

TEST(MarkdownTest, InterlineEquationBlock) {
  Json block = Block("interline_equation", {Line({{{"bbox", {0, 0, 1, 1}},
                                                   {"type", "interline_equation"},
                                                   {"content", "E=mc^2"},
                                                   {"image_path", "eq.jpg"}}})});
  EXPECT_EQ(Md({block}), "$$\nE=mc^2\n$$");
  MarkdownOptions no_formula;
  no_formula.formula_enabled = false;
  EXPECT_EQ(Md({block}, no_formula), "![](images/eq.jpg)");
  MarkdownOptions brackets;
  brackets.display_left = "\\[";
  brackets.display_right = "\\]";
  EXPECT_EQ(Md({block}, brackets), "\\[\nE=mc^2\n\\]");
}

TEST(MarkdownTest, TitleLevels) {
  Json title = TextBlock("title", "Intro");
  EXPECT_EQ(Md({title}), "# Intro");
  title["level"] = 2;
  EXPECT_EQ(Md({title}), "## Intro");
  title["level"] = 7;
  EXPECT_EQ(Md({title}), "#### Intro");
  title["level"] = 0;
  EXPECT_EQ(Md({title}), "Intro");
  title["level"] = "three";  // malformed: the default
  EXPECT_EQ(Md({title}), "# Intro");
}

TEST(MarkdownTest, ListItemsEndWithTwoSpacesAndNewline) {
  Json list = Grouped("list", {TextBlock("text", "first"), TextBlock("text", "second")});
  list["sub_type"] = "text";
  EXPECT_EQ(Md({list}), "first  \nsecond");
}

TEST(MarkdownTest, ImageWithoutFootnoteCaptionsFollow) {
  Json image = Grouped("image", {TextBlock("image_caption", "Figure 1"),
                                 ImageSpanBlock("image_body", "image", "a.jpg")});
  EXPECT_EQ(Md({image}), "![](images/a.jpg)  \nFigure 1");
}

TEST(MarkdownTest, ImageWithFootnoteCaptionsFirst) {
  Json image = Grouped("image", {TextBlock("image_caption", "Figure 1"),
                                 ImageSpanBlock("image_body", "image", "a.jpg"),
                                 TextBlock("image_footnote", "Source: us")});
  EXPECT_EQ(Md({image}), "Figure 1  \n![](images/a.jpg)  \nSource: us");
  MarkdownOptions options;
  options.image_dir = "imgs";
  EXPECT_EQ(Md({image}, options), "Figure 1  \n![](imgs/a.jpg)  \nSource: us");
}

TEST(MarkdownTest, TableWithHtml) {
  Json body = Block("table_body", {Line({{{"bbox", {0, 0, 1, 1}},
                                          {"type", "table"},
                                          {"html", "<table><tr><td>1</td></tr></table>"},
                                          {"image_path", "t.jpg"}}})});
  Json table = Grouped(
      "table", {TextBlock("table_caption", "Table 1"), body, TextBlock("table_footnote", "Note a"),
                TextBlock("table_footnote", "Note b")});
  EXPECT_EQ(Md({table}), "Table 1  \n\n<table><tr><td>1</td></tr></table>\n\nNote a  \nNote b");
  MarkdownOptions no_table;
  no_table.table_enabled = false;
  EXPECT_EQ(Md({table}, no_table), "Table 1  \n![](images/t.jpg)\nNote a  \nNote b");
}

TEST(MarkdownTest, TableWithoutHtmlFallsBackToImage) {
  Json body = Block(
      "table_body",
      {Line({{{"bbox", {0, 0, 1, 1}}, {"type", "table"}, {"html", ""}, {"image_path", "t.jpg"}}})});
  EXPECT_EQ(Md({Grouped("table", {body})}), "![](images/t.jpg)");
}

TEST(MarkdownTest, CodeFencedAlgorithmPlain) {
  Json body = TextBlock("code_body", "print(1)\nprint(2)");
  Json code = Grouped("code", {TextBlock("code_caption", "Listing 1"), body});
  code["sub_type"] = "code";
  code["guess_lang"] = "python";
  EXPECT_EQ(Md({code}), "Listing 1  \n```python\nprint(1)\nprint(2)\n```");
  code.erase("guess_lang");
  EXPECT_EQ(Md({code}), "Listing 1  \n```txt\nprint(1)\nprint(2)\n```");
  code["sub_type"] = "algorithm";
  EXPECT_EQ(Md({code}), "Listing 1  \nprint(1)\nprint(2)");
}

TEST(MarkdownTest, PhoneticAndRefText) {
  EXPECT_EQ(Md({TextBlock("phonetic", "pin yin"), TextBlock("ref_text", "[1] A. Author.")}),
            "pin yin\n\n[1] A. Author.");
}

TEST(MarkdownTest, DiscardedBlocksNeverAppearAndPagesJoin) {
  Json pages = Json::array(
      {Page({TextBlock("text", "page one")},
            {TextBlock("header", "HEADER"), TextBlock("page_number", "1")}, 0),
       Page({}, {}, 1), Page({TextBlock("text", "  "), TextBlock("text", "page three")}, {}, 2)});
  EXPECT_EQ(MakeMarkdown(pages), "page one\n\npage three");
}

TEST(MarkdownTest, UnknownTypesAndEmptyBlocksSkipped) {
  EXPECT_EQ(Md({TextBlock("unknown", "x"), Grouped("image", {}), TextBlock("text", "kept")}),
            "kept");
}

TEST(MarkdownTest, MalformedShapesNeverThrow) {
  EXPECT_EQ(MakeMarkdown(Json("not an array")), "");
  EXPECT_EQ(MakeMarkdown(Json::object()), "");
  Json pages = Json::array(
      {42, "page", Json::object(), Json{{"para_blocks", "x"}},
       Json{{"para_blocks",
             {1, "b", nullptr, Json::object(), Json{{"type", 5}}, Json{{"type", "text"}},
              Json{{"type", "text"}, {"lines", "x"}},
              Json{{"type", "text"}, {"lines", {1, Json{{"spans", 3}}}}},
              Json{{"type", "text"}, {"lines", {Json{{"spans", {7, Json{{"type", "text"}}}}}}}},
              Json{{"type", "text"},
                   {"lines", {Json{{"spans", {Json{{"type", "text"}, {"content", 12}}}}}}}},
              Json{{"type", "image"}, {"blocks", "x"}},
              Json{{"type", "table"}, {"blocks", {1, Json{{"type", "table_body"}, {"lines", 2}}}}},
              Json{{"type", "code"}, {"sub_type", 3}, {"blocks", {Json{{"type", "code_body"}}}}},
              Json{{"type", "list"}, {"blocks", {1, "x", Json::object()}}},
              Json{{"type", "title"}, {"level", nullptr}}, TextBlock("text", "survivor")}}}});
  // The empty title still renders its "#" (MinerU strips "# " to "#", which is not empty).
  EXPECT_EQ(MakeMarkdown(pages), "#\n\nsurvivor");
}

TEST(MarkdownTest, InvalidUtf8DoesNotCrash) {
  Json block = TextBlock("text", std::string("ab\xff\xfe-"));
  EXPECT_FALSE(MergeParaText(block).empty());
  EXPECT_FALSE(IsCjkText("\xe4\xb8"));
}

}  // namespace
}  // namespace mineru::pipeline
