// SPDX-License-Identifier: Apache-2.0
// MakeContentListV2 (MinerU 3.4.4 content_list_v2.json) on hand-built middle.json pages of both
// generations: the complete example document (the v2 side of TV-32 / TV-34), the v2 side of
// TV-33, a MinerU 2.7.6 page, every item type and the span rules.
#include "pipeline/content_list_v2.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pro_documents.h"

namespace mineru::pipeline {
namespace {

using pro_documents::Block;
using pro_documents::Box;
using pro_documents::Group;
using pro_documents::MediaSpan;
using pro_documents::Span;
using pro_documents::TextBlock;

const Box kBox{0, 0, 50, 50};

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
Json Doc(std::vector<Json> para, std::vector<Json> discarded = {}) {
  return Json::array({pro_documents::Page(std::move(para), std::move(discarded), 0, 100, 100)});
}
// The single item of a one-block document.
Json Only(const Json& block) {
  const Json out = MakeContentListV2(Doc({block}));
  if (out.size() != 1 || out[0].size() != 1) return Json();
  return out[0][0];
}

TEST(ContentListV2Test, CompleteExampleDocument) {
  // The whole v2 file of the document TV-32 and TV-34 describe.
  const Json expected = Json::parse(R"([
 [
  {"type": "title", "content": {"title_content": [{"type": "text", "content": "1 Introduction"}], "level": 1}, "bbox": [100, 60, 900, 90]},
  {"type": "paragraph", "content": {"paragraph_content": [
     {"type": "text", "content": "We study  "},
     {"type": "equation_inline", "content": "x_1"},
     {"type": "text", "content": " and the *method* is robust to noise."}]}, "bbox": [100, 100, 480, 600]},
  {"type": "paragraph", "content": {"paragraph_content": []}, "bbox": [520, 100, 900, 300]},
  {"type": "image", "content": {"image_source": {"path": "images/image_0_256.jpg"}, "content": "A red car on a road.",
     "image_caption": [{"type": "text", "content": "Figure 1: A car."}], "image_footnote": []},
   "sub_type": "natural_image", "bbox": [520, 320, 900, 500]},
  {"type": "chart", "content": {"image_source": {"path": "images/chart_0_496.jpg"},
     "content": "| Year | Sales |\n| --- | --- |\n| 2020 | 10 |", "chart_caption": [], "chart_footnote": []},
   "sub_type": "bar_chart", "bbox": [100, 620, 900, 800]},
  {"type": "table", "content": {"image_source": {"path": "images/table_0_656.jpg"}, "table_caption": [], "table_footnote": [],
     "html": "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>banana longname continued</td><td>5</td></tr><tr><td>cherry</td><td> $x^2$ </td></tr></table>",
     "table_type": "simple_table", "table_nest_level": 1}, "bbox": [100, 820, 900, 960]},
  {"type": "page_header", "content": {"page_header_content": [{"type": "text", "content": "Journal of Tests"}]}, "bbox": [100, 20, 900, 40]}
 ],
 [
  {"type": "table", "content": {"image_source": {"path": "images/"}, "table_caption": [], "table_footnote": [], "html": "",
     "table_type": "simple_table", "table_nest_level": 1}, "bbox": [100, 50, 900, 200]},
  {"type": "equation_interline", "content": {"math_content": "E=mc^2", "math_type": "latex",
     "image_source": {"path": "images/interline_equation_1_176.jpg"}}, "bbox": [100, 220, 900, 260]},
  {"type": "page_number", "content": {"page_number_content": [{"type": "text", "content": "2"}]}, "bbox": [450, 960, 550, 980]}
 ]
])");
  EXPECT_EQ(MakeContentListV2(pro_documents::Tv34Document()), expected);
}

TEST(ContentListV2Test, Tv33Items) {
  const Json out = MakeContentListV2(pro_documents::Tv33Document());
  ASSERT_EQ(out.size(), 1u);
  const Json expected = Json::parse(R"([
    {"type": "table", "content": {"image_source": {"path": "images/table_50.jpg"},
      "table_caption": [{"type": "text", "content": "Table 1: Results"}],
      "table_footnote": [{"type": "text", "content": "* p<0.05"}],
      "html": "<table><tr><td>a</td><td><img src=\"images/x.jpg\"/></td></tr></table>",
      "table_type": "simple_table", "table_nest_level": 1}, "bbox": [100, 50, 900, 200]},
    {"type": "code", "content": {"code_caption": [],
      "code_content": [{"type": "text", "content": "def f(x):\n    return x"}],
      "code_language": "python"}, "bbox": [100, 250, 900, 350]},
    {"type": "algorithm", "content": {"algorithm_caption": [], "algorithm_content": [
      {"type": "text", "content": "for i in 1..n:  "},
      {"type": "equation_inline", "content": "a_i < b"}]}, "bbox": [100, 360, 900, 460]},
    {"type": "list", "content": {"list_type": "text_list", "list_items": [
      {"item_type": "text", "item_content": [{"type": "text", "content": "- first item"}]},
      {"item_type": "text", "item_content": [{"type": "text", "content": "# second"}]}]},
     "bbox": [100, 500, 900, 700]},
    {"type": "image", "content": {"image_source": {"path": "images/image_720.jpg"}, "content": "",
      "image_caption": [], "image_footnote": []}, "bbox": [100, 720, 500, 900]},
    {"type": "chart", "content": {"image_source": {"path": "images/chart_720.jpg"}, "content": "",
      "chart_caption": [], "chart_footnote": []}, "bbox": [500, 720, 900, 900]},
    {"type": "paragraph", "content": {"paragraph_content": [
      {"type": "text", "content": "# not a heading and a_b"}]}, "bbox": [100, 910, 900, 950]},
    {"type": "list", "content": {"list_type": "reference_list", "list_items": [
      {"item_type": "text", "item_content": [{"type": "text", "content": "[1] A. Author."}]}]},
     "bbox": [100, 960, 900, 980]}
  ])");
  EXPECT_EQ(out[0], expected);
}

TEST(ContentListV2Test, MinerU276Page) {
  // A 2.7.6 page: code group with guess_lang, image without analysis content, a title with an
  // LLM level, no preproc_blocks.
  Json code = Group(
      "code", kBox, 1,
      {TextBlock("code_caption", kBox, 0, "L1"), TextBlock("code_body", kBox, 1, "print(1)")});
  code["sub_type"] = "code";
  code["guess_lang"] = "python";
  Json image = Group(
      "image", kBox, 2,
      {Block("image_body", kBox, 2, {MediaSpan(kBox, "image", "abc.jpg")}),
       TextBlock("image_footnote", kBox, 3, "n1"), TextBlock("image_footnote", kBox, 4, "n2")});
  Json title = TextBlock("title", kBox, 0, "Head");
  title["level"] = 3;
  Json page = {{"para_blocks", {title, code, image}},
               {"discarded_blocks",
                {TextBlock("aside_text", kBox, 5, "side"), TextBlock("footer", kBox, 6, "foot"),
                 TextBlock("page_footnote", kBox, 7, "pf")}},
               {"page_size", {100, 100}},
               {"page_idx", 0}};
  const Json expected = Json::parse(R"json([[
    {"type": "title", "content": {"title_content": [{"type": "text", "content": "Head"}], "level": 3}, "bbox": [0, 0, 500, 500]},
    {"type": "code", "content": {"code_caption": [{"type": "text", "content": "L1"}],
      "code_content": [{"type": "text", "content": "print(1)"
}], "code_language": "python"
}
, "bbox" : [ 0, 0, 500, 500 ]
},
    {"type": "image", "content": {"image_source": {"path": "images/abc.jpg"}, "content": "", "image_caption": [],
      "image_footnote": [{"type": "text", "content": "n1"}, {"type": "text", "content": "n2"}]}, "bbox": [0, 0, 500, 500]},
    {"type": "page_aside_text", "content": {"page_aside_text_content": [{"type": "text", "content": "side"}]}, "bbox": [0, 0, 500, 500]},
    {"type": "page_footer", "content": {"page_footer_content": [{"type": "text", "content": "foot"}]}, "bbox": [0, 0, 500, 500]},
    {"type": "page_footnote", "content": {"page_footnote_content": [{"type": "text", "content": "pf"}]}, "bbox": [0, 0, 500, 500]}
  ]])json");
  EXPECT_EQ(MakeContentListV2(Json::array({page})), expected);
}

TEST(ContentListV2Test, SeparatorSpaceOnUntrimmedContent) {
  Json block = Lines("text", {Line({Text("We study "), Inline("x"), Text(" end ")})});
  EXPECT_EQ(Only(block)["content"]["paragraph_content"], Json::parse(R"([
    {"type": "text", "content": "We study  "}, {"type": "equation_inline", "content": "x"},
    {"type": "text", "content": " end "}])"));
  // Blank spans are skipped but a text span before one gets no space when nothing visible
  // follows; adjacent text spans merge; text is never escaped.
  Json merged = Lines("text", {Line({Text("a*"), Text("  "), Text("b_")}), Line({Text("c")}),
                               Line({Text("d"), Inline("  ")})});
  EXPECT_EQ(Only(merged)["content"]["paragraph_content"],
            Json::parse(R"([{"type": "text", "content": "a* b_ c d"}])"));
}

TEST(ContentListV2Test, HyphenRuleCutsTheUntrimmedSpan) {
  Json hyphen = Lines("text", {Line({Text("exam-")}), Line({Text("ple")})});
  EXPECT_EQ(Only(hyphen)["content"]["paragraph_content"],
            Json::parse(R"([{"type": "text", "content": "example"}])"));
  // "exam- " still ends in a hyphen, but content[:-1] removes the space, not the hyphen.
  Json spaced = Lines("text", {Line({Text("exam- ")}), Line({Text("ple")})});
  EXPECT_EQ(Only(spaced)["content"]["paragraph_content"],
            Json::parse(R"([{"type": "text", "content": "exam-ple"}])"));
  Json upper = Lines("text", {Line({Text("Self-")}), Line({Text("Driving")})});
  EXPECT_EQ(Only(upper)["content"]["paragraph_content"],
            Json::parse(R"([{"type": "text", "content": "Self-Driving"}])"));
}

TEST(ContentListV2Test, CjkAndFullWidth) {
  // CJK: a space only inside a line before more visible content; formulas never get one.
  Json block = Lines("text", {Line({Text("面积"), Inline("x")}), Line({Text("平方"), Text("米")}),
                              Line({Text("Ｘ１")})});
  EXPECT_EQ(Only(block)["content"]["paragraph_content"], Json::parse(R"([
    {"type": "text", "content": "面积 "}, {"type": "equation_inline", "content": "x"},
    {"type": "text", "content": "平方 米X1"}])"));
}

TEST(ContentListV2Test, PhoneticSpans) {
  Json block = Lines("phonetic", {Line({Text("ā"), Text("b"), Inline("y")})});
  EXPECT_EQ(Only(block), Json::parse(R"({"type": "paragraph", "content": {"paragraph_content": [
    {"type": "phonetic", "content": "ā"}, {"type": "phonetic", "content": "b"},
    {"type": "equation_inline", "content": "y"}]}, "bbox": [0, 0, 500, 500]})"));
}

TEST(ContentListV2Test, TitleLevelZeroIsAParagraph) {
  Json title = TextBlock("title", kBox, 0, "T");
  title["level"] = -1;
  EXPECT_EQ(Only(title)["type"], "paragraph");
  EXPECT_EQ(Only(title)["content"]["paragraph_content"][0]["content"], "T");
}

TEST(ContentListV2Test, TableTypeAndNestLevel) {
  auto table = [](const std::string& html) {
    return Group(
        "table", kBox, 0,
        {Block("table_body", kBox, 0,
               {{{"bbox", kBox}, {"type", "table"}, {"html", html}, {"image_path", "t.jpg"}}})});
  };
  Json span = Only(table("<table><tr><td colspan=\"2\">a</td></tr></table>"));
  EXPECT_EQ(span["content"]["table_type"], "complex_table");
  EXPECT_EQ(span["content"]["table_nest_level"], 1);
  Json nested = Only(table("<table><tr><td><table><tr><td>x</td></tr></table></td></tr></table>"));
  EXPECT_EQ(nested["content"]["table_type"], "complex_table");
  EXPECT_EQ(nested["content"]["table_nest_level"], 2);
  Json rows = Only(table("<table><tr><td rowspan=2>a</td></tr></table>"));
  EXPECT_EQ(rows["content"]["table_type"], "complex_table");
  Json simple = Only(table("<table><tr><td><eq>a&lt;b</eq></td></tr></table>"));
  EXPECT_EQ(simple["content"]["table_type"], "simple_table");
  EXPECT_EQ(simple["content"]["html"], "<table><tr><td> $a<b$ </td></tr></table>");
  EXPECT_EQ(simple["content"]["image_source"]["path"], "images/t.jpg");
}

TEST(ContentListV2Test, ListsAndReferences) {
  Json refs = {
      {"type", "list"},
      {"bbox", kBox},
      {"index", 0},
      {"sub_type", "ref_text"},
      {"blocks", {TextBlock("ref_text", kBox, 1, "[1] A"), TextBlock("ref_text", kBox, 2, " ")}}};
  EXPECT_EQ(Only(refs)["content"], Json::parse(R"({"list_type": "reference_list", "list_items": [
    {"item_type": "text", "item_content": [{"type": "text", "content": "[1] A"}]}]})"));
  Json plain = refs;
  plain.erase("sub_type");
  EXPECT_EQ(Only(plain)["content"]["list_type"], "text_list");
  Json odd = refs;
  odd["sub_type"] = "other";  // MinerU raises; here a text list
  EXPECT_EQ(Only(odd)["content"]["list_type"], "text_list");
  // A lone empty ref_text still makes one (empty) item.
  EXPECT_EQ(Only(TextBlock("ref_text", kBox, 0, ""))["content"]["list_items"],
            Json::parse(R"([{"item_type": "text", "item_content": []}])"));
}

TEST(ContentListV2Test, CodeDefaultsAndUnknownSubType) {
  Json code = Group("code", kBox, 0, {TextBlock("code_body", kBox, 0, "x")});
  code["sub_type"] = "code";
  EXPECT_EQ(Only(code)["content"]["code_language"], "txt");
  code["sub_type"] = "weird";
  EXPECT_EQ(Only(code)["type"], "code");
}

TEST(ContentListV2Test, ImageOptionsAndEmptyDirectory) {
  MarkdownOptions bare;
  bare.image_dir = "";
  Json image =
      Group("image", kBox, 0, {Block("image_body", kBox, 0, {MediaSpan(kBox, "image", "a.jpg")})});
  const Json out = MakeContentListV2(Doc({image}), bare);
  EXPECT_EQ(out[0][0]["content"]["image_source"]["path"], "a.jpg");
}

TEST(ContentListV2Test, MalformedPagesAndBlocksNeverThrow) {
  EXPECT_EQ(MakeContentListV2(Json()), Json::array());
  // One inner list per page, also for pages that are not objects.
  EXPECT_EQ(MakeContentListV2(Json::array({1, nullptr, Json::object()})),
            Json::parse("[[], [], []]"));
  Json page = {
      {"para_blocks",
       {1,
        Json::object(),
        {{"type", "index"}},
        {{"type", "text"}, {"lines", 4}},
        {{"type", "image"}, {"blocks", {{{"type", "image_body"}, {"lines", {{{"spans", 9}}}}}}}},
        {{"type", "list"}, {"blocks", {1, "x"}}},
        {{"type", "interline_equation"},
         {"lines", {{{"spans", {{{"type", "text"}, {"content", "t"}}}}}}}}}},
      {"discarded_blocks", "none"},
      {"page_size", {0, 0}}};
  const Json out = MakeContentListV2(Json::array({page}));
  EXPECT_EQ(out, Json::parse(R"([[
    {"type": "paragraph", "content": {"paragraph_content": []}},
    {"type": "image", "content": {"image_source": {"path": ""}, "content": "", "image_caption": [], "image_footnote": []}},
    {"type": "list", "content": {"list_type": "text_list", "list_items": []}},
    {"type": "equation_interline", "content": {"math_content": "t", "math_type": "latex", "image_source": {"path": "images/"}}}
  ]])"))
      << out.dump();
}

}  // namespace
}  // namespace mineru::pipeline
