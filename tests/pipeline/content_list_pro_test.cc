// SPDX-License-Identifier: Apache-2.0
// MakeContentListPro (MinerU 3.4.4 content_list.json) on hand-built middle.json pages: TV-32 (the
// items of the content_list_v2 example document, quirks of absorbed blocks included), the
// content_list side of TV-33, and edge cases.
#include "pipeline/content_list_pro.h"

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
using pro_documents::TextBlock;

const Box kBox{0, 0, 50, 50};

Json Doc(std::vector<Json> para, std::vector<Json> discarded = {}) {
  return Json::array({pro_documents::Page(std::move(para), std::move(discarded), 0, 100, 100)});
}

// The items of `list` whose "type" is `type`, in order.
std::vector<Json> ItemsOfType(const Json& list, const std::string& type) {
  std::vector<Json> out;
  for (const Json& item : list) {
    if (item.value("type", std::string()) == type) out.push_back(item);
  }
  return out;
}

TEST(ContentListProTest, Tv32QuirksOfTheV2ExampleDocument) {
  const Json list = MakeContentListPro(pro_documents::Tv34Document());
  ASSERT_EQ(list.size(), 10u) << list.dump(1);
  // The paragraph absorbed by the truncated-paragraph merge.
  EXPECT_EQ(list[2], Json::parse(R"({"type": "text", "text": "", "bbox": [520, 100, 900, 300],
                                     "page_idx": 0})"));
  // The table merged into the previous page.
  EXPECT_EQ(list[7], Json::parse(R"({"type": "table", "img_path": "", "table_caption": [],
                                     "table_footnote": [], "bbox": [100, 50, 900, 200],
                                     "page_idx": 1})"));
  // The analysed photo and the chart.
  EXPECT_EQ(list[3], Json::parse(R"({"type": "image", "img_path": "images/image_0_256.jpg",
      "image_caption": ["Figure 1: A car."], "image_footnote": [],
      "content": "A red car on a road.", "sub_type": "natural_image",
      "bbox": [520, 320, 900, 500], "page_idx": 0})"));
  EXPECT_EQ(list[4], Json::parse(R"({"type": "chart", "img_path": "images/chart_0_496.jpg",
      "content": "| Year | Sales |\n| --- | --- |\n| 2020 | 10 |", "chart_caption": [],
      "chart_footnote": [], "sub_type": "bar_chart", "bbox": [100, 620, 900, 800],
      "page_idx": 0})"));
  // The merged paragraph's text.
  EXPECT_EQ(list[1]["text"], "We study $x_1$ and the \\*method\\* is robust to noise.");
}

TEST(ContentListProTest, WholeV2ExampleDocument) {
  const Json expected = Json::parse(R"([
    {"type": "text", "text": "1 Introduction", "text_level": 1, "bbox": [100, 60, 900, 90],
     "page_idx": 0},
    {"type": "text", "text": "We study $x_1$ and the \\*method\\* is robust to noise.",
     "bbox": [100, 100, 480, 600], "page_idx": 0},
    {"type": "text", "text": "", "bbox": [520, 100, 900, 300], "page_idx": 0},
    {"type": "image", "img_path": "images/image_0_256.jpg", "image_caption": ["Figure 1: A car."],
     "image_footnote": [], "content": "A red car on a road.", "sub_type": "natural_image",
     "bbox": [520, 320, 900, 500], "page_idx": 0},
    {"type": "chart", "img_path": "images/chart_0_496.jpg",
     "content": "| Year | Sales |\n| --- | --- |\n| 2020 | 10 |", "chart_caption": [],
     "chart_footnote": [], "sub_type": "bar_chart", "bbox": [100, 620, 900, 800], "page_idx": 0},
    {"type": "table", "img_path": "images/table_0_656.jpg", "table_caption": [],
     "table_footnote": [],
     "table_body": "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>banana longname continued</td><td>5</td></tr><tr><td>cherry</td><td> $x^2$ </td></tr></table>",
     "bbox": [100, 820, 900, 960], "page_idx": 0},
    {"type": "header", "text": "Journal of Tests", "bbox": [100, 20, 900, 40], "page_idx": 0},
    {"type": "table", "img_path": "", "table_caption": [], "table_footnote": [],
     "bbox": [100, 50, 900, 200], "page_idx": 1},
    {"type": "equation", "text": "$$\nE=mc^2\n$$", "text_format": "latex",
     "bbox": [100, 220, 900, 260], "page_idx": 1},
    {"type": "page_number", "text": "2", "bbox": [450, 960, 550, 980], "page_idx": 1}
  ])");
  EXPECT_EQ(MakeContentListPro(pro_documents::Tv34Document()), expected);
}

TEST(ContentListProTest, Tv33CodeAlgorithmAndList) {
  const Json list = MakeContentListPro(pro_documents::Tv33Document());
  const std::vector<Json> code = ItemsOfType(list, "code");
  ASSERT_EQ(code.size(), 2u);
  EXPECT_EQ(code[0], Json::parse(R"({"type": "code", "sub_type": "code", "code_caption": [],
      "code_body": "```python\ndef f(x):\n    return x\n```", "bbox": [100, 250, 900, 350],
      "page_idx": 0})"));
  EXPECT_EQ(code[1], Json::parse(R"({"type": "code", "sub_type": "algorithm", "code_caption": [],
      "code_body": "<div class=\"mineru-algorithm\" style=\"white-space: pre-wrap; font-family:monospace;\">\nfor i in 1..n: $a_i &lt; b$\n</div>",
      "bbox": [100, 360, 900, 460], "page_idx": 0})"));
  const std::vector<Json> lists = ItemsOfType(list, "list");
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_EQ(lists[0], Json::parse(R"({"type": "list", "sub_type": "text",
      "list_items": ["- first item", "# second"], "bbox": [100, 500, 900, 700], "page_idx": 0})"));
  const std::vector<Json> tables = ItemsOfType(list, "table");
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0], Json::parse(R"({"type": "table", "img_path": "images/table_50.jpg",
      "table_caption": ["Table 1: Results"], "table_footnote": ["\\* p<0.05"],
      "table_body": "<table><tr><td>a</td><td><img src=\"images/x.jpg\"/></td></tr></table>",
      "bbox": [100, 50, 900, 200], "page_idx": 0})"));
  const std::vector<Json> images = ItemsOfType(list, "image");
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0], Json::parse(R"({"type": "image", "img_path": "images/image_720.jpg",
      "image_caption": [], "image_footnote": [], "content": "", "bbox": [100, 720, 500, 900],
      "page_idx": 0})"));
  const std::vector<Json> texts = ItemsOfType(list, "text");
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts[0]["text"], "\\# not a heading and a\\_b");
  const std::vector<Json> refs = ItemsOfType(list, "ref_text");
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0]["text"], "[1] A. Author.");
}

TEST(ContentListProTest, ImageWithoutCropAndDiscardedTextIsEscaped) {
  Json group =
      Group("image", kBox, 0, {Block("image_body", kBox, 0, {MediaSpan(kBox, "image", "")})});
  const Json list = MakeContentListPro(Doc(
      {group}, {TextBlock("footer", kBox, 1, "a*b"), TextBlock("page_footnote", kBox, 2, "- x")}));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0], Json::parse(R"({"type": "image", "img_path": "", "image_caption": [],
      "image_footnote": [], "content": "", "bbox": [0, 0, 500, 500], "page_idx": 0})"));
  EXPECT_EQ(list[1]["text"], "a\\*b");
  EXPECT_EQ(list[2]["text"], "- x");  // only text blocks are prefix-escaped
}

TEST(ContentListProTest, ListDropsBlankItemsAndTitleLevelZeroIsOmitted) {
  Json list = {
      {"type", "list"},
      {"bbox", kBox},
      {"index", 0},
      {"sub_type", "ref_text"},
      {"blocks", {TextBlock("ref_text", kBox, 1, "  "), TextBlock("ref_text", kBox, 2, "[2] B")}}};
  Json title = TextBlock("title", kBox, 3, "T");
  title["level"] = 0;
  const Json out = MakeContentListPro(Doc({list, title}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["list_items"], Json::parse(R"(["[2] B"])"));
  EXPECT_EQ(out[1], Json::parse(R"({"type": "text", "text": "T", "bbox": [0, 0, 500, 500],
                                    "page_idx": 0})"));
}

TEST(ContentListProTest, FormulasAreAlwaysLatex) {
  Json equation = Block("interline_equation", kBox, 0,
                        {{{"bbox", kBox},
                          {"type", "interline_equation"},
                          {"content", "x"},
                          {"image_path", "e.jpg"}}});
  MarkdownOptions off;
  off.formula_enabled = false;
  off.table_enabled = false;
  const Json out = MakeContentListPro(Doc({equation}), off);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["text"], "$$\nx\n$$");
  EXPECT_FALSE(out[0].contains("img_path"));
}

TEST(ContentListProTest, UnknownTypesAndMalformedShapesNeverThrow) {
  EXPECT_EQ(MakeContentListPro(Json()), Json::array());
  EXPECT_EQ(MakeContentListPro(Json::array({1, "x", nullptr})), Json::array());
  Json page = {{"para_blocks",
                {1,
                 Json::object(),
                 {{"type", "index"}},
                 {{"type", "chart"}, {"blocks", 3}},
                 {{"type", "code"}, {"blocks", {{{"type", "code_body"}, {"lines", 2}}}}},
                 {{"type", "table"},
                  {"blocks",
                   {2,
                    {{"type", "table_body"},
                     {"lines", {{{"spans", {{{"type", "table"}, {"html", 4}}}}}}}}}}}}},
               {"page_size", "big"},
               {"page_idx", "zero"}};
  const Json out = MakeContentListPro(Json::array({page}));
  ASSERT_EQ(out.size(), 3u) << out.dump();
  EXPECT_EQ(out[0], Json::parse(R"({"type": "chart", "img_path": "", "content": "",
      "chart_caption": [], "chart_footnote": [], "page_idx": 0})"));
  EXPECT_EQ(out[1], Json::parse(R"({"type": "code", "sub_type": "", "code_caption": [],
      "code_body": "", "page_idx": 0})"));
  EXPECT_EQ(out[2], Json::parse(R"({"type": "table", "img_path": "", "table_caption": [],
      "table_footnote": [], "page_idx": 0})"));
}

}  // namespace
}  // namespace mineru::pipeline
