// SPDX-License-Identifier: Apache-2.0
// MakeContentList (MinerU 2.7.6 make_blocks_to_content_list) and MakeModelJson on hand-built
// middle.json pages.
#include "pipeline/content_list.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mineru::pipeline {
namespace {

Json Line(std::vector<Json> spans) {
  return {{"bbox", {0, 0, 10, 10}}, {"spans", Json(std::move(spans))}};
}
Json TextSpan(const std::string& content) {
  return {{"bbox", {0, 0, 10, 10}}, {"type", "text"}, {"content", content}};
}
Json TextBlock(const std::string& type, const std::string& text,
               std::vector<int> bbox = {61, 79, 306, 396}) {
  return {{"bbox", bbox},
          {"type", type},
          {"angle", 0},
          {"lines", Json::array({Line({TextSpan(text)})})},
          {"index", 0}};
}
Json Grouped(const std::string& type, std::vector<Json> blocks,
             std::vector<int> bbox = {0, 0, 612, 792}) {
  return {{"bbox", bbox}, {"type", type}, {"blocks", Json(std::move(blocks))}, {"index", 0}};
}
Json BodyBlock(const std::string& type, Json span) {
  return {{"bbox", {0, 0, 1, 1}},
          {"type", type},
          {"angle", 0},
          {"lines", Json::array({Line({std::move(span)})})},
          {"index", 0}};
}
Json Page(std::vector<Json> para, std::vector<Json> discarded = {}, int idx = 0) {
  return {{"para_blocks", Json(std::move(para))},
          {"discarded_blocks", Json(std::move(discarded))},
          {"page_size", {612, 792}},
          {"page_idx", idx}};
}

TEST(ContentListTest, TextItemAndBboxScaling) {
  Json list = MakeContentList(Json::array({Page({TextBlock("text", "Hello")})}));
  ASSERT_EQ(list.size(), 1u);
  // int(61*1000/612) = 99, int(79*1000/792) = 99, int(306000/612) = 500, int(396000/792) = 500.
  Json expected = {
      {"type", "text"}, {"text", "Hello"}, {"bbox", {99, 99, 500, 500}}, {"page_idx", 0}};
  EXPECT_EQ(list[0], expected);
}

TEST(ContentListTest, ParaThenDiscardedPerPage) {
  Json pages = Json::array(
      {Page({TextBlock("text", "body one")},
            {TextBlock("header", "H"), TextBlock("footer", "F"), TextBlock("page_number", "1"),
             TextBlock("aside_text", "A"), TextBlock("page_footnote", "PF")},
            0),
       Page({TextBlock("ref_text", "[1] ref"), TextBlock("phonetic", "yin")}, {}, 1)});
  Json list = MakeContentList(pages);
  ASSERT_EQ(list.size(), 8u);
  const std::vector<std::string> types = {"text",       "header",        "footer",   "page_number",
                                          "aside_text", "page_footnote", "ref_text", "phonetic"};
  for (size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ(list[i]["type"], types[i]) << i;
    EXPECT_TRUE(list[i].contains("text")) << i;
  }
  EXPECT_EQ(list[5]["text"], "PF");
  EXPECT_EQ(list[5]["page_idx"], 0);
  EXPECT_EQ(list[6]["page_idx"], 1);
}

TEST(ContentListTest, TitleLevelOmittedWhenZero) {
  Json title = TextBlock("title", "Intro");
  Json title2 = TextBlock("title", "Method");
  title2["level"] = 3;
  Json title0 = TextBlock("title", "Plain");
  title0["level"] = 0;
  Json list = MakeContentList(Json::array({Page({title, title2, title0})}));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["type"], "text");
  EXPECT_EQ(list[0]["text_level"], 1);
  EXPECT_EQ(list[1]["text_level"], 3);
  EXPECT_FALSE(list[2].contains("text_level"));
  EXPECT_EQ(list[2]["text"], "Plain");
}

TEST(ContentListTest, ListDropsEmptyItems) {
  Json list_block = Grouped("list", {TextBlock("ref_text", "[1] a"), TextBlock("ref_text", "  "),
                                     TextBlock("ref_text", "[2] b")});
  list_block["sub_type"] = "ref_text";
  Json list = MakeContentList(Json::array({Page({list_block})}));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["type"], "list");
  EXPECT_EQ(list[0]["sub_type"], "ref_text");
  EXPECT_EQ(list[0]["list_items"], Json({"[1] a", "[2] b"}));
  EXPECT_EQ(list[0]["bbox"], Json({0, 0, 1000, 1000}));
}

TEST(ContentListTest, EquationItem) {
  Json eq = BodyBlock("interline_equation", {{"bbox", {0, 0, 1, 1}},
                                             {"type", "interline_equation"},
                                             {"content", "a^2+b^2"},
                                             {"image_path", "e.jpg"}});
  Json list = MakeContentList(Json::array({Page({eq})}));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["type"], "equation");
  EXPECT_EQ(list[0]["text"], "$$\na^2+b^2\n$$");
  EXPECT_EQ(list[0]["text_format"], "latex");
  EXPECT_FALSE(list[0].contains("img_path"));
}

TEST(ContentListTest, ImageItem) {
  Json image = Grouped(
      "image", {TextBlock("image_caption", "Fig. 1"),
                BodyBlock("image_body",
                          {{"bbox", {0, 0, 1, 1}}, {"type", "image"}, {"image_path", "abc.jpg"}}),
                TextBlock("image_footnote", "Note")});
  Json no_path = Grouped(
      "image",
      {BodyBlock("image_body", {{"bbox", {0, 0, 1, 1}}, {"type", "image"}, {"image_path", ""}})});
  Json list = MakeContentList(Json::array({Page({image, no_path})}));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["type"], "image");
  EXPECT_EQ(list[0]["img_path"], "images/abc.jpg");
  EXPECT_EQ(list[0]["image_caption"], Json({"Fig. 1"}));
  EXPECT_EQ(list[0]["image_footnote"], Json({"Note"}));
  EXPECT_EQ(list[1]["img_path"], "");
  EXPECT_EQ(list[1]["image_caption"], Json::array());
  EXPECT_EQ(list[1]["image_footnote"], Json::array());
}

TEST(ContentListTest, TableItemBodyOmittedWhenEmpty) {
  Json with_html =
      Grouped("table", {TextBlock("table_caption", "Table 1"),
                        BodyBlock("table_body", {{"bbox", {0, 0, 1, 1}},
                                                 {"type", "table"},
                                                 {"html", "<table><tr><td>x</td></tr></table>"},
                                                 {"image_path", "t.jpg"}}),
                        TextBlock("table_footnote", "fn")});
  Json without = Grouped(
      "table",
      {BodyBlock(
          "table_body",
          {{"bbox", {0, 0, 1, 1}}, {"type", "table"}, {"html", ""}, {"image_path", "u.jpg"}})});
  Json list = MakeContentList(Json::array({Page({with_html, without})}));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["type"], "table");
  EXPECT_EQ(list[0]["img_path"], "images/t.jpg");
  EXPECT_EQ(list[0]["table_caption"], Json({"Table 1"}));
  EXPECT_EQ(list[0]["table_footnote"], Json({"fn"}));
  EXPECT_EQ(list[0]["table_body"], "<table><tr><td>x</td></tr></table>");
  EXPECT_FALSE(list[1].contains("table_body"));
  EXPECT_EQ(list[1]["img_path"], "images/u.jpg");
}

TEST(ContentListTest, CodeAndAlgorithmItems) {
  Json code =
      Grouped("code", {TextBlock("code_caption", "Listing"), TextBlock("code_body", "x = 1")});
  code["sub_type"] = "code";
  code["guess_lang"] = "python";
  Json algo = Grouped("code", {TextBlock("code_body", "Step 1")});
  algo["sub_type"] = "algorithm";
  Json list = MakeContentList(Json::array({Page({code, algo})}));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["type"], "code");
  EXPECT_EQ(list[0]["sub_type"], "code");
  EXPECT_EQ(list[0]["code_caption"], Json({"Listing"}));
  EXPECT_EQ(list[0]["code_body"], "x = 1");
  EXPECT_EQ(list[0]["guess_lang"], "python");
  EXPECT_EQ(list[1]["sub_type"], "algorithm");
  EXPECT_EQ(list[1]["code_body"], "Step 1");
  EXPECT_FALSE(list[1].contains("guess_lang"));
}

TEST(ContentListTest, TextUsesParagraphRules) {
  Json block = {{"bbox", {0, 0, 612, 792}},
                {"type", "text"},
                {"lines", Json::array({Line({TextSpan("ｅｘａｍ-")}), Line({TextSpan("ple")})})}};
  Json list = MakeContentList(Json::array({Page({block})}));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["text"], "example");
}

TEST(ContentListTest, UnusablePageSizeOmitsBbox) {
  Json page = Page({TextBlock("text", "x")});
  page["page_size"] = {0, 792};
  Json no_bbox = TextBlock("text", "y");
  no_bbox.erase("bbox");
  Json page2 = Page({no_bbox});
  page2.erase("page_idx");
  Json list = MakeContentList(Json::array({page, page2}));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_FALSE(list[0].contains("bbox"));
  EXPECT_FALSE(list[1].contains("bbox"));
  EXPECT_EQ(list[1]["page_idx"], 1);  // the page's position when page_idx is missing
}

TEST(ContentListTest, FloatBboxTruncates) {
  Json block = TextBlock("text", "x");
  block["bbox"] = {1.9, -0.5, 611.99, 791.2};
  Json list = MakeContentList(Json::array({Page({block})}));
  ASSERT_EQ(list.size(), 1u);
  // 1900/612 = 3.1, -500/792 = -0.63 → 0 (toward zero), 999.98 → 999, 998.98 → 998.
  EXPECT_EQ(list[0]["bbox"], Json({3, 0, 999, 998}));
}

TEST(ContentListTest, MalformedShapesNeverThrow) {
  EXPECT_EQ(MakeContentList(Json("x")), Json::array());
  Json pages = Json::array(
      {1, "p", Json::object(), Json{{"para_blocks", 3}, {"discarded_blocks", "x"}},
       Json{
           {"page_size", "big"},
           {"page_idx", "zero"},
           {"para_blocks",
            {1, Json::object(), Json{{"type", "unknown"}}, Json{{"type", "list"}, {"blocks", 5}},
             Json{{"type", "table"}, {"blocks", {1, Json{{"type", "table_body"}, {"lines", {1}}}}}},
             Json{{"type", "image"}, {"bbox", {1, 2}}},
             Json{{"type", "code"}, {"sub_type", 1}, {"blocks", {Json{{"type", "code_body"}}}}},
             Json{{"type", "text"}, {"bbox", {"a", 0, 1, 1}}, {"lines", "zz"}}}}}});
  Json list = MakeContentList(pages);
  ASSERT_EQ(list.size(), 5u);  // list, table, image, code, text; unknown and non-objects skipped
  for (const Json& item : list) EXPECT_FALSE(item.contains("bbox"));
  EXPECT_EQ(list[4]["text"], "");
}

TEST(ModelJsonTest, PassesBlocksThrough) {
  Json page0 = Json::array(
      {Json{{"type", "text"}, {"bbox", {0.1, 0.2, 0.3, 0.4}}, {"angle", 0}, {"content", "hi"}},
       Json{{"type", "image"}, {"bbox", {0.5, 0.5, 0.9, 0.9}}, {"angle", nullptr}},
       Json{{"type", "equation"},
            {"bbox", {0, 0, 1, 1}},
            {"angle", 90},
            {"content", "\\[x\\]"},
            {"extra", 1}}});
  Json model = MakeModelJson({page0, Json::array()});
  ASSERT_EQ(model.size(), 2u);
  ASSERT_EQ(model[0].size(), 3u);
  EXPECT_EQ(model[0][0], page0[0]);
  EXPECT_EQ(model[0][1], Json({{"type", "image"},
                               {"bbox", {0.5, 0.5, 0.9, 0.9}},
                               {"angle", nullptr},
                               {"content", nullptr}}));
  EXPECT_FALSE(model[0][2].contains("extra"));
  EXPECT_EQ(model[0][2]["angle"], 90);
  EXPECT_EQ(model[1], Json::array());
}

TEST(ModelJsonTest, DropsMalformedBlocksKeepsPageCount) {
  Json page = Json::array(
      {1, "x", Json{{"type", 3}, {"bbox", {0, 0, 1, 1}}},
       Json{{"type", "text"}, {"bbox", {0, 0, 1}}},
       Json{{"type", "text"}, {"bbox", {0, 0, 1, 1}}, {"angle", "up"}, {"content", 5}}});
  Json model = MakeModelJson({page, Json("not a page"), Json::object()});
  ASSERT_EQ(model.size(), 3u);
  ASSERT_EQ(model[0].size(), 1u);
  EXPECT_TRUE(model[0][0]["angle"].is_null());
  EXPECT_TRUE(model[0][0]["content"].is_null());
  EXPECT_EQ(model[1], Json::array());
  EXPECT_EQ(model[2], Json::array());
}

}  // namespace
}  // namespace mineru::pipeline
