// SPDX-License-Identifier: Apache-2.0
// MinerU's MagicModel (MinerU 2.7.6 mineru/backend/vlm/vlm_magic_model.py): client blocks -> one
// middle.json PageInfo,
// compared as whole JSON objects against hand-derived expectations. Pages are 1024 points square
// and boxes are k/1024, so int(x * W) gives back k exactly, except in the truncation test.
#include "pipeline/magic_model.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mineru::pipeline {
namespace {

using Pts = std::array<int, 4>;
constexpr int kPage = 1024;

ContentBlock Blk(BlockType type, Pts p, std::optional<std::string> content = std::nullopt,
                 std::optional<int> angle = 0) {
  ContentBlock b;
  b.type = type;
  for (int i = 0; i < 4; ++i) b.bbox[i] = p[i] / static_cast<double>(kPage);
  b.content = std::move(content);
  b.angle = angle;
  return b;
}

Json J(Pts p) { return Json::array({p[0], p[1], p[2], p[3]}); }

Json Span(Pts p, std::string_view content, std::string_view type = "text") {
  return Json{{"bbox", J(p)}, {"type", type}, {"content", content}};
}

Json Simple(std::string_view type, Pts p, Json spans, int index, Json angle = 0) {
  return Json{{"bbox", J(p)},
              {"type", type},
              {"angle", std::move(angle)},
              {"lines", Json::array({Json{{"bbox", J(p)}, {"spans", std::move(spans)}}})},
              {"index", index}};
}

Json Text(Pts p, std::string_view content, int index, std::string_view type = "text") {
  return Simple(type, p, Json::array({Span(p, content)}), index);
}

Json Group(std::string_view type, Pts body, int index, Json blocks) {
  return Json{{"type", type}, {"bbox", J(body)}, {"blocks", std::move(blocks)}, {"index", index}};
}

Json ImageBody(Pts p, int index, std::string_view path = "") {
  return Simple("image_body", p,
                Json::array({Json{{"bbox", J(p)}, {"type", "image"}, {"image_path", path}}}),
                index);
}

Json TableBody(Pts p, std::string_view html, int index, std::string_view path = "") {
  return Simple(
      "table_body", p,
      Json::array({Json{{"bbox", J(p)}, {"type", "table"}, {"html", html}, {"image_path", path}}}),
      index);
}

Json Page(Json para, Json discarded = Json::array(), int width = kPage, int height = kPage,
          int page_idx = 0) {
  return Json{{"para_blocks", std::move(para)},
              {"discarded_blocks", std::move(discarded)},
              {"page_size", Json::array({width, height})},
              {"page_idx", page_idx}};
}

Json Page0(const std::vector<ContentBlock>& blocks, std::vector<std::string>* warnings = nullptr,
           const ImagePathFn& image_path = {}) {
  return MiddlePage(blocks, 0, kPage, kPage, image_path, warnings);
}

void ExpectJson(const Json& actual, const Json& expected) {
  if (actual == expected) return;
  ADD_FAILURE() << "JSON patch expected -> actual:\n"
                << Json::diff(expected, actual).dump(1) << "\nactual:\n"
                << actual.dump(1);
}

std::string PathOf(std::string_view type, const std::array<int, 4>& b) {
  return std::string(type) + "/" + std::to_string(b[0]) + "_" + std::to_string(b[1]) + ".jpg";
}

TEST(MagicModelTest, EmptyPage) {
  ExpectJson(MiddlePage({}, 3, 612, 792, {}, nullptr),
             Page(Json::array(), Json::array(), 612, 792, 3));
}

TEST(MagicModelTest, EveryTypesSpanShape) {
  const Pts p0 = {0, 0, 100, 50}, p1 = {0, 60, 100, 80}, p2 = {0, 100, 500, 400},
            p3 = {0, 500, 500, 700}, p4 = {0, 720, 500, 760}, p5 = {0, 770, 500, 790},
            p6 = {0, 800, 500, 810}, p7 = {0, 0, 500, 10}, p10 = {600, 0, 1000, 200},
            p11 = {0, 1000, 500, 1020};
  const std::string html = "<table><tr><td>1</td></tr></table>";
  const std::vector<ContentBlock> blocks = {
      Blk(BlockType::kText, p0, "Hello", std::nullopt),
      Blk(BlockType::kTitle, p1, "Title"),
      Blk(BlockType::kImage, p2, std::nullopt, 90),
      Blk(BlockType::kTable, p3, html),
      Blk(BlockType::kEquation, p4, "\\[\nE=mc^2\n\\]"),
      Blk(BlockType::kRefText, p5, "[1] Ref"),
      Blk(BlockType::kPhonetic, p6, "pin1"),
      Blk(BlockType::kHeader, p7, "Head"),
      Blk(BlockType::kUnknown, p0, "dropped"),
      Blk(BlockType::kEquationBlock, p4),
      Blk(BlockType::kCode, p10, "```\nint x;\n```"),
      Blk(BlockType::kPageFootnote, p11, "Note", 270),
  };
  Json image_body = ImageBody(p2, 2, "image/0_100.jpg");
  image_body["angle"] = 90;
  Json code = Group("code", p10, 10, Json::array({Text(p10, "int x;", 10, "code_body")}));
  code["sub_type"] = "code";
  code["guess_lang"] = "txt";
  Json footnote = Text(p11, "Note", 11, "page_footnote");
  footnote["angle"] = 270;
  Json text = Text(p0, "Hello", 0);
  text["angle"] = nullptr;
  const Json want =
      Page(Json::array({
               text,
               Text(p1, "Title", 1, "title"),
               Group("image", p2, 2, Json::array({image_body})),
               Group("table", p3, 3, Json::array({TableBody(p3, html, 3, "table/0_500.jpg")})),
               Simple("interline_equation", p4,
                      Json::array({Json{{"bbox", J(p4)},
                                        {"type", "interline_equation"},
                                        {"content", "E=mc^2"},
                                        {"image_path", "interline_equation/0_720.jpg"}}}),
                      4),
               Text(p5, "[1] Ref", 5, "ref_text"),
               Text(p6, "pin1", 6, "phonetic"),
               code,
           }),
           Json::array({Text(p7, "Head", 7, "header"), footnote}));
  ExpectJson(Page0(blocks, nullptr, PathOf), want);
}

TEST(MagicModelTest, ImagePathIsCalledPerCropSpanInBlockOrder) {
  std::vector<std::pair<std::string, Pts>> calls;
  const ImagePathFn record = [&](std::string_view type, const std::array<int, 4>& b) {
    calls.emplace_back(std::string(type), b);
    return std::string();
  };
  const Pts a = {0, 0, 10, 10}, b = {0, 20, 10, 30}, c = {0, 40, 10, 50}, d = {0, 60, 10, 70};
  Page0({Blk(BlockType::kEquation, a, "x"), Blk(BlockType::kText, b, "t"),
         Blk(BlockType::kTable, c, "<table></table>"), Blk(BlockType::kImage, d)},
        nullptr, record);
  const std::vector<std::pair<std::string, Pts>> want = {
      {"interline_equation", a}, {"table", c}, {"image", d}};
  EXPECT_EQ(calls, want);
}

TEST(MagicModelTest, MissingContentBecomesEmptyStrings) {
  const Pts a = {0, 0, 10, 10}, b = {0, 20, 10, 30}, c = {0, 40, 10, 50};
  const Json page =
      Page0({Blk(BlockType::kText, a), Blk(BlockType::kTable, b), Blk(BlockType::kEquation, c)});
  ExpectJson(page, Page(Json::array({Text(a, "", 0),
                                     Group("table", b, 1, Json::array({TableBody(b, "", 1)})),
                                     Simple("interline_equation", c,
                                            Json::array({Json{{"bbox", J(c)},
                                                              {"type", "interline_equation"},
                                                              {"content", ""},
                                                              {"image_path", ""}}}),
                                            2)})));
}

TEST(MagicModelTest, BboxesAreTruncatedNotRounded) {
  // 0.57 * 100 = 56.99999999999999 -> 56; 0.29 * 100 = 28.999999999999996 -> 28.
  ContentBlock a = Blk(BlockType::kText, {0, 0, 1, 1}, "a");
  a.bbox = {0.57, 0.1, 0.9, 0.29};
  ContentBlock reversed = a;
  reversed.bbox = {0.9, 0.29, 0.57, 0.1};
  const Pts p = {56, 10, 90, 28};
  ExpectJson(MiddlePage({a, reversed}, 7, 100, 100, {}, nullptr),
             Page(Json::array({Text(p, "a", 0), Text(p, "a", 1)}), Json::array(), 100, 100, 7));
  // A US-letter page: 0.1 * 612 = 61.2, 0.29 * 792 = 229.68, 0.333 * 612 = 203.796,
  // 0.7 * 792 = 554.4.
  a.bbox = {0.1, 0.29, 0.333, 0.7};
  ExpectJson(MiddlePage({a}, 0, 612, 792, {}, nullptr),
             Page(Json::array({Text({61, 229, 203, 554}, "a", 0)}), Json::array(), 612, 792));
}

TEST(MagicModelTest, InvalidBboxIsSkippedWithAWarning) {
  ContentBlock bad = Blk(BlockType::kText, {0, 0, 1, 1}, "bad");
  bad.bbox[2] = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> warnings;
  const Pts p = {0, 0, 10, 10};
  ExpectJson(Page0({bad, Blk(BlockType::kText, p, "ok")}, &warnings),
             Page(Json::array({Text(p, "ok", 1)})));
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(MagicModelTest, InlineEquationSplitting) {
  const Pts p = {0, 0, 100, 100};
  const auto spans_of = [&](std::string content, BlockType type = BlockType::kText) {
    return Page0({Blk(type, p, std::move(content))})["para_blocks"][0]["lines"][0]["spans"];
  };
  ExpectJson(spans_of("Let \\(x\\) be \\( y^2 \\)."),
             Json::array({Span(p, "Let "), Span(p, "x", "inline_equation"), Span(p, " be "),
                          Span(p, "y^2", "inline_equation"), Span(p, ".")}));
  // Whitespace-only text between formulas is dropped; other text is kept as written.
  ExpectJson(spans_of("\\(a\\) \\(b\\)"),
             Json::array({Span(p, "a", "inline_equation"), Span(p, "b", "inline_equation")}));
  // Unequal counts: no split.
  ExpectJson(spans_of("\\(a"), Json::array({Span(p, "\\(a")}));
  // A formula never spans a newline (the regex has no DOTALL).
  ExpectJson(spans_of("\\(a\nb\\) c \\(d\\)"),
             Json::array({Span(p, "\\(a\nb\\) c "), Span(p, "d", "inline_equation")}));
  // The lazy group needs one character: \(\) does not close at once.
  ExpectJson(spans_of("\\(\\)\\(x\\)"), Json::array({Span(p, "\\)\\(x", "inline_equation")}));
  // Every text-like type splits, titles included.
  ExpectJson(spans_of("A \\(n\\)", BlockType::kTitle),
             Json::array({Span(p, "A "), Span(p, "n", "inline_equation")}));
}

TEST(MagicModelTest, DisplayBracketsInTextBecomeSquareBrackets) {
  const Pts p = {0, 0, 100, 100};
  const auto spans_of = [&](std::string content) {
    return Page0(
        {Blk(BlockType::kText, p, std::move(content))})["para_blocks"][0]["lines"][0]["spans"];
  };
  ExpectJson(spans_of("see \\[x\\] and \\[y\\]"), Json::array({Span(p, "see [x] and [y]")}));
  ExpectJson(spans_of("open \\[x"), Json::array({Span(p, "open \\[x")}));
  ExpectJson(spans_of("\\[a\nb\\] \\[c\\]"), Json::array({Span(p, "\\[a\nb\\] [c]")}));
  ExpectJson(spans_of("\\[1\\] and \\(x\\)"),
             Json::array({Span(p, "[1] and "), Span(p, "x", "inline_equation")}));
}

Json CodeGroup(Pts p, int index, Json spans, std::string_view sub_type,
               std::optional<std::string> lang) {
  Json g = Group("code", p, index, Json::array({Simple("code_body", p, std::move(spans), index)}));
  g["sub_type"] = sub_type;
  if (lang) g["guess_lang"] = *lang;
  return g;
}

TEST(MagicModelTest, CodeFencesLanguagesAndAlgorithms) {
  const Pts a = {0, 0, 500, 100}, b = {0, 110, 500, 200}, c = {0, 210, 500, 300},
            d = {0, 310, 500, 400};
  const std::vector<ContentBlock> blocks = {
      Blk(BlockType::kCode, a, "```python\ndef f(x):\n    return x\n```"),
      Blk(BlockType::kAlgorithm, b, "Input: n\nfor i in 1..n"),
      Blk(BlockType::kCode, c, "```\nfor \\(i\\) in S:\n  x\n```"),
      Blk(BlockType::kCode, d, "  no fence\r\nline2  \n"),
  };
  ExpectJson(
      Page0(blocks),
      Page(Json::array({
          CodeGroup(a, 0, Json::array({Span(a, "def f(x):\n    return x")}), "code", "python"),
          CodeGroup(b, 1, Json::array({Span(b, "Input: n\nfor i in 1..n")}), "algorithm",
                    std::nullopt),
          CodeGroup(c, 2,
                    Json::array(
                        {Span(c, "for "), Span(c, "i", "inline_equation"), Span(c, " in S:\n  x")}),
                    "algorithm", std::nullopt),
          CodeGroup(d, 3, Json::array({Span(d, "no fence\nline2")}), "code", "txt"),
      })));
}

TEST(MagicModelTest, CodeCaptionJoinsItsCode) {
  const Pts cap = {0, 0, 500, 20}, body = {0, 30, 500, 300};
  Json g = Group(
      "code", body, 1,
      Json::array({Text(cap, "Listing 1", 0, "code_caption"),
                   Simple("code_body", body, Json::array({Span(body, "SELECT a FROM t")}), 1)}));
  g["sub_type"] = "code";
  g["guess_lang"] = "sql";
  ExpectJson(Page0({Blk(BlockType::kCodeCaption, cap, "Listing 1"),
                    Blk(BlockType::kCode, body, "SELECT a FROM t")}),
             Page(Json::array({g})));
}

TEST(MagicModelTest, ListsTakeBlocksAtLeastEightyPercentInside) {
  const Pts l0 = {0, 0, 500, 500}, a1 = {10, 10, 490, 100}, r2 = {10, 110, 490, 200},
            b3 = {400, 300, 600, 400},  // 50% inside: stays text
      c4 = {100, 400, 600, 450},        // exactly 80%: joins
      d5 = {105, 460, 605, 470},        // 79%: stays text
      l6 = {600, 600, 1000, 1000},      // no children: removed
      l7 = {0, 600, 500, 1000}, r8 = {10, 610, 490, 700}, t9 = {10, 710, 490, 800};
  const std::vector<ContentBlock> blocks = {
      Blk(BlockType::kList, l0, "ignored"),
      Blk(BlockType::kText, a1, "a"),
      Blk(BlockType::kRefText, r2, "r"),
      Blk(BlockType::kText, b3, "b"),
      Blk(BlockType::kText, c4, "c"),
      Blk(BlockType::kText, d5, "d"),
      Blk(BlockType::kList, l6),
      Blk(BlockType::kList, l7, std::nullopt, 90),
      Blk(BlockType::kRefText, r8, "r8"),
      Blk(BlockType::kText, t9, "t9"),
  };
  // Children: text blocks first, then ref_text blocks (MinerU's candidate order); a tie in
  // counts goes to the type seen first.
  const Json list0 = {
      {"bbox", J(l0)},
      {"type", "list"},
      {"angle", 0},
      {"index", 0},
      {"blocks", Json::array({Text(a1, "a", 1), Text(c4, "c", 4), Text(r2, "r", 2, "ref_text")})},
      {"sub_type", "text"}};
  const Json list7 = {{"bbox", J(l7)},
                      {"type", "list"},
                      {"angle", 90},
                      {"index", 7},
                      {"blocks", Json::array({Text(t9, "t9", 9), Text(r8, "r8", 8, "ref_text")})},
                      {"sub_type", "text"}};
  ExpectJson(Page0(blocks), Page(Json::array({list0, Text(b3, "b", 3), Text(d5, "d", 5), list7})));
}

TEST(MagicModelTest, ListSubTypeIsTheMostFrequentChildType) {
  const Pts l = {0, 0, 500, 500}, a = {0, 0, 500, 100}, b = {0, 100, 500, 200},
            c = {0, 200, 500, 300};
  const Json page = Page0({Blk(BlockType::kList, l), Blk(BlockType::kText, a, "a"),
                           Blk(BlockType::kRefText, b, "b"), Blk(BlockType::kRefText, c, "c")});
  EXPECT_EQ(page["para_blocks"].size(), 1u);
  EXPECT_EQ(page["para_blocks"][0]["sub_type"], "ref_text");
}

TEST(MagicModelTest, ImageWithCaptionAndFootnote) {
  const Pts cap = {100, 50, 900, 90}, body = {100, 100, 900, 500}, note = {100, 510, 900, 540};
  ExpectJson(Page0({Blk(BlockType::kImageCaption, cap, "Figure 1: x"), Blk(BlockType::kImage, body),
                    Blk(BlockType::kImageFootnote, note, "Source: y")}),
             Page(Json::array({Group(
                 "image", body, 1,
                 Json::array({Text(cap, "Figure 1: x", 0, "image_caption"), ImageBody(body, 1),
                              Text(note, "Source: y", 2, "image_footnote")}))})));
}

TEST(MagicModelTest, TableWithTwoCaptionsAndAFootnote) {
  const Pts c0 = {100, 10, 900, 30}, c1 = {100, 40, 900, 60}, t = {100, 70, 900, 500},
            f = {100, 510, 900, 530};
  ExpectJson(
      Page0({Blk(BlockType::kTableCaption, c0, "Table 1"),
             Blk(BlockType::kTableCaption, c1, "(continued)"),
             Blk(BlockType::kTable, t, "<table></table>"), Blk(BlockType::kTableFootnote, f, "n")}),
      Page(Json::array({Group(
          "table", t, 2,
          Json::array({Text(c0, "Table 1", 0, "table_caption"),
                       Text(c1, "(continued)", 1, "table_caption"),
                       TableBody(t, "<table></table>", 2), Text(f, "n", 3, "table_footnote")}))})));
}

// A caption between two bodies at the same index distance.
Json BetweenTwoBodies(BlockType body, BlockType object, Pts a, Pts o, Pts b) {
  return Page0(
      {Blk(body, a, "<table></table>"), Blk(object, o, "o"), Blk(body, b, "<table></table>")});
}

TEST(MagicModelTest, CaptionBetweenTwoTablesGoesToTheLaterOne) {
  const Pts a = {100, 100, 900, 300}, o = {100, 310, 900, 330}, b = {100, 340, 900, 600};
  ExpectJson(
      BetweenTwoBodies(BlockType::kTable, BlockType::kTableCaption, a, o, b),
      Page(Json::array({Group("table", a, 0, Json::array({TableBody(a, "<table></table>", 0)})),
                        Group("table", b, 2,
                              Json::array({Text(o, "o", 1, "table_caption"),
                                           TableBody(b, "<table></table>", 2)}))})));
}

TEST(MagicModelTest, AClearlyNearerBodyWinsAnIndexTie) {
  // Edge distances 2 and 20 differ by more than 2 points: the nearer (earlier) table wins.
  const Pts a = {100, 100, 900, 300}, o = {100, 302, 900, 320}, b = {100, 340, 900, 600};
  ExpectJson(
      BetweenTwoBodies(BlockType::kTable, BlockType::kTableCaption, a, o, b),
      Page(Json::array({Group("table", a, 0,
                              Json::array({TableBody(a, "<table></table>", 0),
                                           Text(o, "o", 1, "table_caption")})),
                        Group("table", b, 2, Json::array({TableBody(b, "<table></table>", 2)}))})));
}

TEST(MagicModelTest, FootnoteTieGoesToTheEarlierBodyAndImageCaptionToTheNearerCentre) {
  const Pts a = {100, 100, 900, 300}, o = {100, 310, 900, 330}, b = {100, 340, 900, 900};
  const Json footnote = BetweenTwoBodies(BlockType::kTable, BlockType::kTableFootnote, a, o, b);
  EXPECT_EQ(footnote["para_blocks"][0]["blocks"].size(), 2u);
  EXPECT_EQ(footnote["para_blocks"][1]["blocks"].size(), 1u);
  // Centres: caption y 320, image a y 200 (120 away), image b y 620 (300 away).
  const Json caption = BetweenTwoBodies(BlockType::kImage, BlockType::kImageCaption, a, o, b);
  ExpectJson(
      caption,
      Page(Json::array(
          {Group("image", a, 0, Json::array({ImageBody(a, 0), Text(o, "o", 1, "image_caption")})),
           Group("image", b, 2, Json::array({ImageBody(b, 2)}))})));
}

TEST(MagicModelTest, NonContiguousCaptionBecomesText) {
  const Pts c0 = {100, 10, 900, 30}, t1 = {100, 40, 900, 60}, c2 = {100, 70, 900, 90},
            t = {100, 100, 900, 500};
  ExpectJson(Page0({Blk(BlockType::kTableCaption, c0, "far"), Blk(BlockType::kText, t1, "between"),
                    Blk(BlockType::kTableCaption, c2, "near"),
                    Blk(BlockType::kTable, t, "<table></table>")}),
             Page(Json::array({Text(c0, "far", 0), Text(t1, "between", 1),
                               Group("table", t, 3,
                                     Json::array({Text(c2, "near", 2, "table_caption"),
                                                  TableBody(t, "<table></table>", 3)}))})));
}

TEST(MagicModelTest, CaptionsAroundTheirBodyAreContiguous) {
  // The only gap between the two captions is the body itself.
  const Pts c0 = {100, 10, 900, 30}, t = {100, 40, 900, 300}, c2 = {100, 310, 900, 330};
  ExpectJson(Page0({Blk(BlockType::kTableCaption, c0, "above"),
                    Blk(BlockType::kTable, t, "<table></table>"),
                    Blk(BlockType::kTableCaption, c2, "below")}),
             Page(Json::array({Group("table", t, 1,
                                     Json::array({Text(c0, "above", 0, "table_caption"),
                                                  TableBody(t, "<table></table>", 1),
                                                  Text(c2, "below", 2, "table_caption")}))})));
}

TEST(MagicModelTest, NonContiguousFootnoteBecomesText) {
  const Pts t = {100, 10, 900, 300}, f1 = {100, 310, 900, 330}, x2 = {100, 340, 900, 360},
            f3 = {100, 370, 900, 390};
  ExpectJson(
      Page0({Blk(BlockType::kTable, t, "<table></table>"), Blk(BlockType::kTableFootnote, f1, "f1"),
             Blk(BlockType::kText, x2, "x"), Blk(BlockType::kTableFootnote, f3, "f3")}),
      Page(Json::array({Group("table", t, 0,
                              Json::array({TableBody(t, "<table></table>", 0),
                                           Text(f1, "f1", 1, "table_footnote")})),
                        Text(x2, "x", 2), Text(f3, "f3", 3)})));
}

TEST(MagicModelTest, FootnoteBeforeItsBodyMovesToAnEarlierBody) {
  // The footnote ties on index with both images, is clearly nearer image b (10 vs ~200 points),
  // but lies before it, so it moves to the nearest body before it: image a.
  const Pts a = {100, 100, 400, 300}, f = {600, 310, 900, 330}, b = {600, 340, 900, 600};
  ExpectJson(
      Page0({Blk(BlockType::kImage, a), Blk(BlockType::kImageFootnote, f, "f"),
             Blk(BlockType::kImage, b)}),
      Page(Json::array(
          {Group("image", a, 0, Json::array({ImageBody(a, 0), Text(f, "f", 1, "image_footnote")})),
           Group("image", b, 2, Json::array({ImageBody(b, 2)}))})));
  // With no body before it, it becomes text.
  ExpectJson(
      Page0({Blk(BlockType::kImageFootnote, f, "f"), Blk(BlockType::kImage, b)}),
      Page(Json::array({Text(f, "f", 0), Group("image", b, 1, Json::array({ImageBody(b, 1)}))})));
}

TEST(MagicModelTest, ObjectsWithoutAnyBodyAndContainedBodiesBecomeText) {
  const Pts outer = {100, 100, 900, 900}, inner = {200, 200, 300, 300}, cap = {0, 0, 50, 50},
            code_outer = {10, 950, 500, 1000}, code_inner = {20, 960, 100, 990};
  const std::vector<ContentBlock> blocks = {
      Blk(BlockType::kImage, outer),
      Blk(BlockType::kImage, inner),
      Blk(BlockType::kTableCaption, cap, "orphan"),
      Blk(BlockType::kCode, code_outer, "a"),
      Blk(BlockType::kCode, code_inner, "x = 1"),
  };
  Json inner_text = ImageBody(inner, 1);
  inner_text["type"] = "text";
  // The contained code body keeps its line's "extra" (only grouped code bodies lose it).
  Json code_text = Text(code_inner, "x = 1", 4);
  code_text["lines"][0]["extra"] = {{"type", "code"}, {"guess_lang", "txt"}};
  ExpectJson(Page0(blocks),
             Page(Json::array(
                 {Group("image", outer, 0, Json::array({ImageBody(outer, 0)})), inner_text,
                  Text(cap, "orphan", 2),
                  CodeGroup(code_outer, 3, Json::array({Span(code_outer, "a")}), "code", "txt"),
                  code_text})));
}

TEST(MagicModelTest, DiscardedBlocks) {
  const Pts p = {0, 0, 100, 10};
  const Json page =
      Page0({Blk(BlockType::kHeader, p, "h"), Blk(BlockType::kText, p, "t"),
             Blk(BlockType::kFooter, p, "f"), Blk(BlockType::kPageNumber, p, "1"),
             Blk(BlockType::kAsideText, p, "a"), Blk(BlockType::kPageFootnote, p, "n")});
  ExpectJson(page, Page(Json::array({Text(p, "t", 1)}),
                        Json::array({Text(p, "h", 0, "header"), Text(p, "f", 2, "footer"),
                                     Text(p, "1", 3, "page_number"), Text(p, "a", 4, "aside_text"),
                                     Text(p, "n", 5, "page_footnote")})));
}

// Collects the indices of every block (grouped children included) of a page.
void CollectIndices(const Json& blocks, std::multiset<int>* out) {
  for (const Json& b : blocks) {
    if (b.contains("blocks")) {
      if (b["type"] == "list") out->insert(b["index"].get<int>());
      CollectIndices(b["blocks"], out);
    } else {
      out->insert(b["index"].get<int>());
    }
  }
}

TEST(MagicModelTest, RandomPagesKeepEveryBlockExactlyOnce) {
  const std::vector<std::string> pieces = {"\\(", "\\)", "\\[",  "\\]", "```",      "\n",
                                           "x",   " ",   "def ", "\r",  "\xc2\xa0", "\xff"};
  std::mt19937 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<ContentBlock> blocks;
    const int n = static_cast<int>(rng() % 14);
    for (int i = 0; i < n; ++i) {
      ContentBlock b;
      b.type = static_cast<BlockType>(rng() % kBlockTypeCount);
      for (double& v : b.bbox) v = (rng() % 9) / 8.0;  // coarse grid: many ties and overlaps
      if (rng() % 3 != 0) {
        std::string content;
        for (int k = static_cast<int>(rng() % 8); k > 0; --k)
          content += pieces[rng() % pieces.size()];
        b.content = content;
      }
      if (rng() % 2 == 0) b.angle = static_cast<int>(rng() % 4) * 90;
      blocks.push_back(b);
    }
    std::vector<std::string> warnings;
    const Json page = MiddlePage(blocks, iter, 595, 842, PathOf, &warnings);
    std::multiset<int> seen;
    CollectIndices(page["para_blocks"], &seen);
    CollectIndices(page["discarded_blocks"], &seen);
    for (int i = 0; i < n; ++i) {
      const BlockType t = blocks[i].type;
      const size_t count = seen.count(i);
      if (t == BlockType::kUnknown || t == BlockType::kEquationBlock) {
        EXPECT_EQ(count, 0u);
      } else if (t == BlockType::kList) {
        EXPECT_LE(count, 1u);
      } else {
        EXPECT_EQ(count, 1u) << "block " << i << " " << BlockTypeName(t) << "\n" << page.dump(1);
      }
    }
    // Every page serialises: ill-formed UTF-8 in the content was repaired.
    EXPECT_NO_THROW(page.dump());
  }
}

TEST(GuessCodeLanguageTest, KeywordSignatures) {
  EXPECT_EQ(GuessCodeLanguage("def f(x):\n    return x"), "python");
  EXPECT_EQ(GuessCodeLanguage("import numpy as np\nfrom os import path\nprint(np.pi)"), "python");
  EXPECT_EQ(GuessCodeLanguage("#include <iostream>\nint main() { std::cout << 1; }"), "cpp");
  EXPECT_EQ(GuessCodeLanguage("#include <stdio.h>\nint main() { printf(\"hi\"); }"), "c");
  EXPECT_EQ(GuessCodeLanguage("public class A {\n  public static void main(String[] a) {\n"
                              "    System.out.println(1);\n  }\n}"),
            "java");
  EXPECT_EQ(GuessCodeLanguage("const f = (x) => x;\nconsole.log(f(1));"), "javascript");
  EXPECT_EQ(GuessCodeLanguage("package main\nimport \"fmt\"\nfunc main() { fmt.Println(1) }"),
            "go");
  EXPECT_EQ(GuessCodeLanguage("fn main() {\n    let mut x = 1;\n    println!(\"{}\", x);\n}"),
            "rust");
  EXPECT_EQ(GuessCodeLanguage("#!/bin/bash\necho hi\nexport A=1"), "shell");
  EXPECT_EQ(GuessCodeLanguage("$ pip install mineru"), "shell");
  EXPECT_EQ(GuessCodeLanguage("SELECT name FROM users WHERE id = 1;"), "sql");
  EXPECT_EQ(GuessCodeLanguage("{\"a\": 1, \"b\": [2]}"), "json");
  EXPECT_EQ(GuessCodeLanguage("\\begin{itemize}\n\\item a\n\\end{itemize}"), "latex");
  EXPECT_EQ(GuessCodeLanguage("<html><body><div>x</div></body></html>"), "html");
  EXPECT_EQ(GuessCodeLanguage("<?php echo $x; ?>"), "php");
  EXPECT_EQ(GuessCodeLanguage("[1, 2].each do |x|\n  puts x\nend"), "ruby");
}

TEST(GuessCodeLanguageTest, WeakEvidenceIsTxt) {
  EXPECT_EQ(GuessCodeLanguage(""), "txt");
  EXPECT_EQ(GuessCodeLanguage(" \n\t"), "txt");
  EXPECT_EQ(GuessCodeLanguage("x = 1"), "txt");
  EXPECT_EQ(GuessCodeLanguage("Input: an array A of n numbers\nOutput: A sorted"), "txt");
  EXPECT_EQ(GuessCodeLanguage("int x;"), "txt");
}

}  // namespace
}  // namespace mineru::pipeline
