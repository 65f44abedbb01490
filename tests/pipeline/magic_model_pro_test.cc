// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's MagicModel (MiddlePagePro): the type mapping of all 31 client types, spans and
// block fields, against hand-derived middle.json objects.
#include "pipeline/magic_model_pro.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "magic_model_pro_test_helpers.h"

namespace mineru::pipeline::pro_test {
namespace {

constexpr Pts kP = {100, 100, 500, 200};

struct Call {
  std::string type;
  Pts bbox;
  bool operator==(const Call&) const = default;
};

// One block of `type` with content "Hello" alone on a page; records the crops asked for.
Json Single(BlockType type, std::vector<Call>* calls,
            std::optional<std::string> content = std::string("Hello")) {
  const ImagePathFn record = [&](std::string_view span_type, const std::array<int, 4>& b) {
    calls->push_back({std::string(span_type), b});
    return PathOf(span_type, b);
  };
  return MiddlePagePro({Blk(type, kP, std::move(content))}, 0, kPage, kPage, record, {}, nullptr);
}

TEST(MagicModelProTest, EmptyPage) {
  ExpectJson(MiddlePagePro({}, 3, 612, 792, {}, {}, nullptr),
             Page(Json::array(), Json::array(), 612, 792, 3));
}

// Every client type alone on a page, content "Hello": what MinerU 3.4.4 makes of it and which
// crops it cuts.
TEST(MagicModelProTest, EveryTypeMapping) {
  using enum BlockType;
  const Json text = Json::array({Text(kP, "Hello", 0)});
  const Json unknown_text =
      Json::array({Simple("text", kP, Json::array({Span(kP, "Hello", "unknown")}), 0)});
  const Json none = Json::array();
  struct Want {
    Json preproc;
    Json discarded = Json::array();
    std::vector<Call> calls = {};
  };
  const std::map<BlockType, Want> want = {
      {kText, {text}},
      {kTitle, {Json::array({Text(kP, "Hello", 0, "title")})}},
      {kTable,
       {Json::array(
            {Group("table", kP, 0,
                   Json::array({Body("table_body", "table", kP, 0, {{"html", "Hello"}})}))}),
        Json::array(),
        {{"table", kP}}}},
      {kImage,
       {Json::array(
            {Group("image", kP, 0,
                   Json::array({Body("image_body", "image", kP, 0, {{"content", "Hello"}})}))}),
        Json::array(),
        {{"image", kP}}}},
      {kCode,
       {Json::array({Group("code", kP, 0, Json::array({Text(kP, "Hello", 0, "code_body")}),
                           {{"sub_type", "code"}, {"guess_lang", "txt"}})})}},
      {kAlgorithm,
       {Json::array({Group("code", kP, 0, Json::array({Text(kP, "Hello", 0, "code_body")}),
                           {{"sub_type", "algorithm"}})})}},
      {kHeader, {none, Json::array({Text(kP, "Hello", 0, "header")})}},
      {kFooter, {none, Json::array({Text(kP, "Hello", 0, "footer")})}},
      {kPageNumber, {none, Json::array({Text(kP, "Hello", 0, "page_number")})}},
      {kPageFootnote, {none, Json::array({Text(kP, "Hello", 0, "page_footnote")})}},
      {kAsideText, {none, Json::array({Text(kP, "Hello", 0, "aside_text")})}},
      {kEquation,
       {Json::array(
            {Body("interline_equation", "interline_equation", kP, 0, {{"content", "Hello"}})}),
        Json::array(),
        {{"interline_equation", kP}}}},
      {kEquationBlock, {none}},
      {kRefText, {Json::array({Text(kP, "Hello", 0, "ref_text")})}},
      {kList, {none}},  // a list without children
      {kPhonetic, {Json::array({Text(kP, "Hello", 0, "phonetic")})}},
      // Generic captions and footnotes that no body takes become text.
      {kTableCaption, {text}},
      {kTableFootnote, {text}},
      {kImageCaption, {text}},
      {kImageFootnote, {text}},
      {kCodeCaption, {text}},
      {kUnknown, {none}},
      {kDocTitle, {none}},
      {kParagraphTitle, {none}},
      {kFormulaNumber, {none}},
      {kIndex, {none}},
      {kListItem, {none}},
      // Raw caption/footnote: generic children whose span type is "unknown".
      {kCaption, {unknown_text}},
      {kFootnote, {unknown_text}},
      {kChart,
       {Json::array(
            {Group("chart", kP, 0,
                   Json::array({Body("chart_body", "chart", kP, 0, {{"content", "Hello"}})}))}),
        Json::array(),
        {{"chart", kP}}}},
      // image_block: an image group; its span carries no content.
      {kImageBlock,
       {Json::array({Group("image", kP, 0, Json::array({Body("image_body", "image", kP, 0)}))}),
        Json::array(),
        {{"image", kP}}}},
  };
  ASSERT_EQ(want.size(), static_cast<size_t>(kProBlockTypeCount));
  for (const auto& [type, w] : want) {
    SCOPED_TRACE(std::string(BlockTypeName(type)));
    std::vector<Call> calls;
    ExpectJson(Single(type, &calls), Page(w.preproc, w.discarded));
    EXPECT_EQ(calls, w.calls);
  }
}

// Missing content: "" for text-like spans, equations and table HTML; no `content` key on
// image/chart spans; "" in the "unknown" span of a raw caption.
TEST(MagicModelProTest, MissingContent) {
  using enum BlockType;
  const std::map<BlockType, Json> want = {
      {kText, Text(kP, "", 0)},
      {kTitle, Text(kP, "", 0, "title")},
      {kImageCaption, Text(kP, "", 0)},
      {kCaption, Simple("text", kP, Json::array({Span(kP, "", "unknown")}), 0)},
      {kTable,
       Group("table", kP, 0, Json::array({Body("table_body", "table", kP, 0, {{"html", ""}})}))},
      {kImage, Group("image", kP, 0, Json::array({Body("image_body", "image", kP, 0)}))},
      {kChart, Group("chart", kP, 0, Json::array({Body("chart_body", "chart", kP, 0)}))},
      {kEquation, Body("interline_equation", "interline_equation", kP, 0, {{"content", ""}})},
      {kCode, Group("code", kP, 0, Json::array({Text(kP, "", 0, "code_body")}),
                    {{"sub_type", "code"}, {"guess_lang", "txt"}})},
  };
  for (const auto& [type, block] : want) {
    SCOPED_TRACE(std::string(BlockTypeName(type)));
    std::vector<Call> calls;
    ExpectJson(Single(type, &calls, std::nullopt), Page(Json::array({block})));
  }
  // An empty analysis text is kept as "" (only a missing one is left out).
  std::vector<Call> calls;
  ExpectJson(
      Single(kImage, &calls, std::string()),
      Page(Json::array({Group(
          "image", kP, 0, Json::array({Body("image_body", "image", kP, 0, {{"content", ""}})}))})));
}

// Titles: every newline and the whitespace after it become one space, then the whole is
// trimmed; before the inline-formula split, after the \[ \] rewrite. Text keeps its newlines.
TEST(MagicModelProTest, TitleNewlines) {
  const Pts p0 = {0, 0, 500, 20}, p1 = {0, 30, 500, 50}, p2 = {0, 60, 500, 80},
            p3 = {0, 90, 500, 110}, p4 = {0, 120, 500, 140};
  const Json page = Convert({
      Blk(BlockType::kTitle, p0, " A\n  B\n\nC \n"),
      Blk(BlockType::kTitle, p1, "T \\(a\n b\\)"),
      Blk(BlockType::kTitle, p2, "A\r\nB\n\u3000C"),
      Blk(BlockType::kText, p3, "A\n B"),
      Blk(BlockType::kTitle, p4, "\\[x\\]\nend"),
  });
  ExpectJson(
      page,
      Page(Json::array({
          Text(p0, "A B C", 0, "title"),
          Simple("title", p1, Json::array({Span(p1, "T "), Span(p1, "a b", "inline_equation")}), 1),
          Text(p2, "A\r B C", 2, "title"),
          Text(p3, "A\n B", 3),
          Text(p4, "[x] end", 4, "title"),
      })));
}

// merge_prev is copied from text blocks only, and only when the client set it.
TEST(MagicModelProTest, MergePrevCopied) {
  const Pts p0 = {0, 0, 500, 20}, p1 = {0, 30, 500, 50}, p2 = {0, 60, 500, 80},
            p3 = {0, 90, 500, 110};
  std::vector<ContentBlock> blocks = {
      Blk(BlockType::kText, p0, "a"), Blk(BlockType::kText, p1, "b"),
      Blk(BlockType::kText, p2, "c"), Blk(BlockType::kTitle, p3, "d")};
  blocks[0].merge_prev = true;
  blocks[1].merge_prev = false;
  blocks[3].merge_prev = true;  // not a text block: ignored
  ExpectJson(Convert(blocks), Page(Json::array({
                                  Text(p0, "a", 0, "text", {{"merge_prev", true}}),
                                  Text(p1, "b", 1, "text", {{"merge_prev", false}}),
                                  Text(p2, "c", 2),
                                  Text(p3, "d", 3, "title"),
                              })));
}

// sub_type: image and chart groups carry a non-empty one, their bodies none; other types'
// sub_type is not read.
TEST(MagicModelProTest, SubTypeOnImageAndChartGroups) {
  const Pts p0 = {0, 0, 200, 100}, p1 = {0, 200, 200, 300}, p2 = {0, 400, 200, 500},
            p3 = {0, 600, 200, 700}, p4 = {0, 800, 200, 900};
  std::vector<ContentBlock> blocks = {
      Blk(BlockType::kImage, p0, "A car."), Blk(BlockType::kImage, p1),
      Blk(BlockType::kChart, p2, "| a |"), Blk(BlockType::kImageBlock, p3),
      Blk(BlockType::kTable, p4, "<table></table>")};
  blocks[0].sub_type = "natural_image";
  blocks[1].sub_type = "";
  blocks[2].sub_type = "bar_chart";
  blocks[3].sub_type = "natural_image";
  blocks[4].sub_type = "x";
  ExpectJson(
      Convert(blocks),
      Page(Json::array({
          Group("image", p0, 0,
                Json::array({Body("image_body", "image", p0, 0, {{"content", "A car."}})}),
                {{"sub_type", "natural_image"}}),
          Group("image", p1, 1, Json::array({Body("image_body", "image", p1, 1)})),
          Group("chart", p2, 2,
                Json::array({Body("chart_body", "chart", p2, 2, {{"content", "| a |"}})}),
                {{"sub_type", "bar_chart"}}),
          Group("image", p3, 3, Json::array({Body("image_body", "image", p3, 3)})),
          Group("table", p4, 4,
                Json::array({Body("table_body", "table", p4, 4, {{"html", "<table></table>"}})})),
      })));
}

// cell_merge: the table body keeps the client's flags whenever present; the group carries
// them when non-empty.
TEST(MagicModelProTest, CellMergeCopied) {
  const Pts p0 = {0, 0, 500, 100}, p1 = {0, 200, 500, 300}, p2 = {0, 400, 500, 500};
  std::vector<ContentBlock> blocks = {Blk(BlockType::kTable, p0, "t0"),
                                      Blk(BlockType::kTable, p1, "t1"),
                                      Blk(BlockType::kTable, p2, "t2")};
  blocks[0].cell_merge = std::vector<int>{1, 0};
  blocks[1].cell_merge = std::vector<int>{};
  ExpectJson(Convert(blocks),
             Page(Json::array({
                 Group("table", p0, 0,
                       Json::array({Body("table_body", "table", p0, 0, {{"html", "t0"}},
                                         {{"cell_merge", {1, 0}}})}),
                       {{"cell_merge", {1, 0}}}),
                 Group("table", p1, 1,
                       Json::array({Body("table_body", "table", p1, 1, {{"html", "t1"}},
                                         {{"cell_merge", Json::array()}})})),
                 Group("table", p2, 2,
                       Json::array({Body("table_body", "table", p2, 2, {{"html", "t2"}})})),
             })));
}

// Code: fences removed, language guessed, inline formulas turn code into algorithm; captions
// (code_caption -> generic caption) and generic footnotes attach.
TEST(MagicModelProTest, CodeGroups) {
  const Pts cap = {0, 0, 500, 20}, code = {0, 30, 500, 200}, note = {0, 210, 500, 230},
            algo = {0, 300, 500, 400};
  const Json page = Convert({
      Blk(BlockType::kCodeCaption, cap, "Listing 1"),
      Blk(BlockType::kCode, code, "```\nplain words\n```"),
      Blk(BlockType::kTableFootnote, note, "note"),
      Blk(BlockType::kCode, algo, "for \\(i\\) in n"),
  });
  ExpectJson(page, Page(Json::array({
                       Group("code", code, 1,
                             Json::array({Text(cap, "Listing 1", 0, "code_caption"),
                                          Text(code, "plain words", 1, "code_body"),
                                          Text(note, "note", 2, "code_footnote")}),
                             {{"sub_type", "code"}, {"guess_lang", "txt"}}),
                       Group("code", algo, 3,
                             Json::array({Simple("code_body", algo,
                                                 Json::array({Span(algo, "for "),
                                                              Span(algo, "i", "inline_equation"),
                                                              Span(algo, " in n")}),
                                                 3)}),
                             {{"sub_type", "algorithm"}}),
                   })));
}

// Lists take the text/ref_text blocks >= 80% inside them (sub_type = most frequent child
// type); a list without children vanishes; preproc_blocks are in index order and discarded
// blocks in block order.
TEST(MagicModelProTest, ListsAndOrder) {
  const Pts list = {0, 100, 500, 300}, a = {0, 100, 500, 150}, b = {0, 160, 500, 200},
            c = {0, 210, 500, 250}, empty = {0, 600, 500, 700}, foot = {0, 900, 500, 920},
            head = {0, 0, 500, 20}, eq = {0, 400, 500, 450};
  const Json page = Convert({
      Blk(BlockType::kPageNumber, foot, "7"),
      Blk(BlockType::kEquation, eq, "\\[x\\]"),
      Blk(BlockType::kList, list),
      Blk(BlockType::kRefText, a, "[1] A"),
      Blk(BlockType::kRefText, b, "[2] B"),
      Blk(BlockType::kText, c, "c"),
      Blk(BlockType::kList, empty),
      Blk(BlockType::kHeader, head, "H"),
  });
  ExpectJson(page,
             Page(Json::array({
                      Body("interline_equation", "interline_equation", eq, 1, {{"content", "x"}}),
                      Json{{"bbox", J(list)},
                           {"type", "list"},
                           {"angle", 0},
                           {"index", 2},
                           {"blocks", Json::array({Text(c, "c", 5), Text(a, "[1] A", 3, "ref_text"),
                                                   Text(b, "[2] B", 4, "ref_text")})},
                           {"sub_type", "ref_text"}},
                  }),
                  Json::array({Text(foot, "7", 0, "page_number"), Text(head, "H", 7, "header")})));
}

// A box that is not finite is skipped with a warning; the others keep their client index.
TEST(MagicModelProTest, InvalidBoxSkipped) {
  const Pts p0 = {0, 0, 500, 20}, p2 = {0, 60, 500, 80};
  std::vector<ContentBlock> blocks = {Blk(BlockType::kText, p0, "a"),
                                      Blk(BlockType::kText, p0, "nan"),
                                      Blk(BlockType::kText, p2, "c")};
  blocks[1].bbox[2] = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> warnings;
  ExpectJson(Convert(blocks, &warnings), Page(Json::array({Text(p0, "a", 0), Text(p2, "c", 2)})));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "middle.json: block 1 has an invalid bbox; skipped");
}

// Truncation, reversed boxes and the angle.
TEST(MagicModelProTest, PointsTruncatedAndOrdered) {
  ContentBlock b = Blk(BlockType::kText, {0, 0, 0, 0}, "x");
  b.bbox = {0.9, 0.29, 0.1, 0.57};  // 0.29 * 800 = 231.99999999999997 -> 231, 0.57 -> 455
  b.angle = std::nullopt;
  const Json page = MiddlePagePro({b}, 2, 600, 800, {}, {}, nullptr);
  Json want = Text({60, 231, 540, 455}, "x", 0);
  want["angle"] = nullptr;
  ExpectJson(page, Page(Json::array({want}), Json::array(), 600, 800, 2));
}

}  // namespace
}  // namespace mineru::pipeline::pro_test
