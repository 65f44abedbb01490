// SPDX-License-Identifier: Apache-2.0
// Hand-built MinerU 3.4.4 middle.json documents for the output writer tests: the pages MinerU's
// MagicModel and finalize_middle_json produce for the client blocks of TV-33 and TV-34 (the
// content_list_v2 example document), written out by the conversion rules (integer point boxes,
// one line per block whose bbox is the block's, \( \) split into text / inline_equation spans,
// caption/footnote grouping, lists by containment, the truncated-paragraph and cross-page table
// merges), plus small builders for other tests.
#pragma once

#include <string>
#include <vector>

#include "base/json.h"

namespace mineru::pipeline::pro_documents {

using Box = std::vector<int>;

inline Json Span(const Box& bbox, const std::string& type, const std::string& content) {
  return {{"bbox", bbox}, {"type", type}, {"content", content}};
}
inline Json MediaSpan(const Box& bbox, const std::string& type, const std::string& image_path) {
  return {{"bbox", bbox}, {"type", type}, {"image_path", image_path}};
}
inline Json Line(const Box& bbox, std::vector<Json> spans) {
  return {{"bbox", bbox}, {"spans", Json(std::move(spans))}};
}
// A block with one line holding `spans`, all sharing the block's bbox.
inline Json Block(const std::string& type, const Box& bbox, int index, std::vector<Json> spans) {
  return {{"bbox", bbox},
          {"type", type},
          {"angle", 0},
          {"lines", Json::array({Line(bbox, std::move(spans))})},
          {"index", index}};
}
inline Json TextBlock(const std::string& type, const Box& bbox, int index,
                      const std::string& text) {
  return Block(type, bbox, index, {Span(bbox, "text", text)});
}
inline Json Group(const std::string& type, const Box& bbox, int index, std::vector<Json> blocks) {
  return {{"type", type}, {"bbox", bbox}, {"index", index}, {"blocks", Json(std::move(blocks))}};
}
inline Json Page(std::vector<Json> para, std::vector<Json> discarded, int idx, int width,
                 int height) {
  Json para_blocks(std::move(para));
  return {{"preproc_blocks", para_blocks},
          {"para_blocks", para_blocks},
          {"discarded_blocks", Json(std::move(discarded))},
          {"page_size", {width, height}},
          {"page_idx", idx}};
}

// TV-33: one 1000 x 1000 pt page with a captioned table holding an inline image, a code block,
// an algorithm with a formula, a list of two text items, an image and a chart without content,
// a text block starting "# " and a reference.
inline Json Tv33Document() {
  const Box table{100, 50, 900, 200};
  Json table_body =
      Block("table_body", table, 1,
            {{{"bbox", table},
              {"type", "table"},
              {"html", "<table><tr><td>a</td><td><img src=\"x.jpg\"/></td></tr></table>"},
              {"image_path", "table_50.jpg"}}});
  Json table_group =
      Group("table", table, 1,
            {TextBlock("table_caption", {100, 20, 900, 40}, 0, "Table 1: Results"), table_body,
             TextBlock("table_footnote", {100, 210, 900, 230}, 2, "* p<0.05")});
  const Box code{100, 250, 900, 350};
  Json code_group =
      Group("code", code, 3, {TextBlock("code_body", code, 3, "def f(x):\n    return x")});
  code_group["sub_type"] = "code";
  code_group["guess_lang"] = "python";
  const Box algorithm{100, 360, 900, 460};
  Json algorithm_group = Group("code", algorithm, 4,
                               {Block("code_body", algorithm, 4,
                                      {Span(algorithm, "text", "for i in 1..n: "),
                                       Span(algorithm, "inline_equation", "a_i < b")})});
  algorithm_group["sub_type"] = "algorithm";
  Json list = {{"type", "list"},
               {"bbox", {100, 500, 900, 700}},
               {"angle", 0},
               {"index", 5},
               {"sub_type", "text"},
               {"blocks",
                {TextBlock("text", {100, 500, 900, 550}, 6, "- first item"),
                 TextBlock("text", {100, 560, 900, 600}, 7, "# second")}}};
  const Box image{100, 720, 500, 900};
  const Box chart{500, 720, 900, 900};
  Json image_group =
      Group("image", image, 8,
            {Block("image_body", image, 8, {MediaSpan(image, "image", "image_720.jpg")})});
  Json chart_group =
      Group("chart", chart, 9,
            {Block("chart_body", chart, 9, {MediaSpan(chart, "chart", "chart_720.jpg")})});
  return Json::array(
      {Page({table_group, code_group, algorithm_group, list, image_group, chart_group,
             TextBlock("text", {100, 910, 900, 950}, 10, "# not a heading and a_b"),
             TextBlock("ref_text", {100, 960, 900, 980}, 11, "[1] A. Author.")},
            {}, 0, 1000, 1000)});
}

// The merged table HTML of TV-34 (TV-31's cell_merge [1,0] result without the "apple" row and
// with the lower table's last cell <eq>x^2</eq>).
inline const char* Tv34TableHtml() {
  return "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>banana longname continued</td>"
         "<td>5</td></tr><tr><td>cherry</td><td><eq>x^2</eq></td></tr></table>";
}

// TV-34 / the content_list_v2 example: two 600 x 800 pt pages. Page 0: header, title, a
// paragraph in two columns joined by merge_prev (the right-hand part absorbed), an analysed
// photo with caption, a chart, a table continued on page 1. Page 1: the merged-away table (its
// body emptied), an equation and a page number. preproc_blocks hold the blocks before the
// merges.
inline Json Tv34Document() {
  // Page 0.
  const Box title{60, 48, 540, 72};
  const Box left{60, 80, 288, 480};
  const Box right{312, 80, 540, 240};
  Json left_line =
      Line(left, {Span(left, "text", "We study "), Span(left, "inline_equation", "x_1"),
                  Span(left, "text", " and the *method* is")});
  Json right_line = Line(right, {Span(right, "text", "robust to noise.")});
  Json paragraph = {{"bbox", left}, {"type", "text"},
                    {"angle", 0},   {"lines", Json::array({left_line})},
                    {"index", 2},   {"merge_prev", false}};
  Json continued = {{"bbox", right}, {"type", "text"},
                    {"angle", 0},    {"lines", Json::array({right_line})},
                    {"index", 3},    {"merge_prev", true}};
  const Box photo{312, 256, 540, 400};
  Json photo_span = MediaSpan(photo, "image", "image_0_256.jpg");
  photo_span["content"] = "A red car on a road.";
  Json image_group =
      Group("image", photo, 4,
            {Block("image_body", photo, 4, {photo_span}),
             TextBlock("image_caption", {312, 408, 540, 424}, 5, "Figure 1: A car.")});
  image_group["sub_type"] = "natural_image";
  const Box chart{60, 496, 540, 640};
  Json chart_span = MediaSpan(chart, "chart", "chart_0_496.jpg");
  chart_span["content"] = "| Year | Sales |\n| --- | --- |\n| 2020 | 10 |";
  Json chart_group = Group("chart", chart, 6, {Block("chart_body", chart, 6, {chart_span})});
  chart_group["sub_type"] = "bar_chart";
  const Box upper{60, 656, 540, 768};
  auto table_group = [](const Box& bbox, int index, const std::string& html,
                        const std::string& image_path) {
    return Group(
        "table", bbox, index,
        {Block("table_body", bbox, index,
               {{{"bbox", bbox}, {"type", "table"}, {"html", html}, {"image_path", image_path}}})});
  };
  Json header = TextBlock("header", {60, 16, 540, 32}, 0, "Journal of Tests");

  // Page 1.
  const Box lower{60, 40, 540, 160};
  Json lower_table = table_group(lower, 0,
                                 "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>name "
                                 "continued</td><td></td></tr><tr><td>cherry</td><td><eq>x^2</eq>"
                                 "</td></tr></table>",
                                 "table_1_40.jpg");
  lower_table["cell_merge"] = {1, 0};
  const Box equation{60, 176, 540, 208};
  Json equation_block = Block("interline_equation", equation, 1,
                              {{{"bbox", equation},
                                {"type", "interline_equation"},
                                {"content", "E=mc^2"},
                                {"image_path", "interline_equation_1_176.jpg"}}});
  Json page_number = TextBlock("page_number", {270, 768, 330, 784}, 2, "2");

  Json page0 = Page({TextBlock("title", title, 1, "1 Introduction"), paragraph, continued,
                     image_group, chart_group,
                     table_group(upper, 7,
                                 "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>banana "
                                 "long</td><td>5</td></tr></table>",
                                 "table_0_656.jpg")},
                    {header}, 0, 600, 800);
  Json page1 = Page({lower_table, equation_block}, {page_number}, 1, 600, 800);

  // The merges, on para_blocks only: the right-hand paragraph's line joins the left one, the
  // lower table's rows join the upper table and its body is emptied.
  Json& merged = page0["para_blocks"];
  merged[1]["lines"].push_back(right_line);
  merged[2]["lines"] = Json::array();
  merged[2]["lines_deleted"] = true;
  merged[5]["blocks"][0]["lines"][0]["spans"][0]["html"] = Tv34TableHtml();
  Json& absorbed_body = page1["para_blocks"][0]["blocks"][0];
  absorbed_body["lines"] = Json::array();
  absorbed_body["lines_deleted"] = true;
  return Json::array({page0, page1});
}

}  // namespace mineru::pipeline::pro_documents
