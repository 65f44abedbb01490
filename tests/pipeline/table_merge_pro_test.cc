// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's cross-page table merge (MergeCrossPageTables with mineru_344 rules) on
// hand-built MinerU 3.4.4 middle.json pages: TV-31 and the 3.4.4 additions around it.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/markdown.h"
#include "pipeline/table_merge.h"

namespace mineru::pipeline {
namespace {

const TableMergeRules kRules344{.mineru_344 = true};

Json Line(const std::vector<double>& bbox, Json span) {
  return {{"bbox", bbox}, {"spans", Json::array({std::move(span)})}};
}
Json TextSub(const std::string& type, const std::string& text, const std::vector<double>& bbox,
             int index) {
  return {
      {"bbox", bbox},
      {"type", type},
      {"angle", 0},
      {"lines", Json::array({Line(bbox, {{"bbox", bbox}, {"type", "text"}, {"content", text}})})},
      {"index", index}};
}
Json Body(const std::string& html, const std::vector<double>& bbox, int index) {
  return {
      {"type", "table_body"},
      {"bbox", bbox},
      {"angle", 0},
      {"lines",
       Json::array({Line(
           bbox, {{"bbox", bbox}, {"type", "table"}, {"html", html}, {"image_path", "x.jpg"}})})},
      {"index", index}};
}

struct Sub {
  std::string text;
  std::vector<double> bbox;
};

// A MinerU 3.4.4 table group: captions, the body (index `index`), footnotes, sorted by index.
Json Table(const std::string& html, const std::vector<double>& bbox, int index,
           const std::vector<Sub>& captions = {}, const std::vector<Sub>& footnotes = {},
           std::optional<Json> cell_merge = std::nullopt) {
  Json blocks = Json::array();
  int i = index - static_cast<int>(captions.size());
  for (const Sub& c : captions) blocks.push_back(TextSub("table_caption", c.text, c.bbox, i++));
  blocks.push_back(Body(html, bbox, i++));
  for (const Sub& f : footnotes) blocks.push_back(TextSub("table_footnote", f.text, f.bbox, i++));
  Json table = {{"type", "table"}, {"bbox", bbox}, {"index", index}, {"blocks", blocks}};
  if (cell_merge) table["cell_merge"] = *cell_merge;
  return table;
}
Json Text(const std::string& text, int index) {
  return TextSub("text", text, {50, 60, 550, 90}, index);
}
Json Page(std::vector<Json> para, int idx) {
  Json blocks = Json(std::move(para));
  return {{"preproc_blocks", blocks},
          {"para_blocks", blocks},
          {"discarded_blocks", Json::array()},
          {"page_size", {612, 792}},
          {"page_idx", idx}};
}

// TV-31's geometry: upper table last on page 0, lower table first on page 1.
const std::vector<double> kUpperBox = {50, 400, 550, 780};
const std::vector<double> kLowerBox = {52, 40, 548, 300};
const char kUpper[] =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>apple</td><td>3</td></tr>"
    "<tr><td>banana long</td><td>5</td></tr></table>";
const char kLower[] =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>name continued</td><td></td></tr>"
    "<tr><td>cherry</td><td>7</td></tr></table>";

Json Doc(Json upper, Json lower) {
  return Json::array({Page({Text("intro", 4), std::move(upper)}, 0),
                      Page({std::move(lower), Text("after", 3)}, 1)});
}
Json UpperTable(const std::string& html = kUpper, std::vector<Sub> footnotes = {}) {
  return Table(html, kUpperBox, 5, {}, footnotes);
}
Json LowerTable(const std::string& html = kLower, std::optional<Json> cell_merge = std::nullopt,
                std::vector<Sub> captions = {}, std::vector<Sub> footnotes = {},
                const std::vector<double>& bbox = kLowerBox) {
  return Table(html, bbox, static_cast<int>(captions.size()), captions, footnotes, cell_merge);
}

std::string HtmlOf(const Json& table) {
  for (const Json& sub : table["blocks"]) {
    if (sub["type"] == "table_body" && !sub["lines"].empty()) {
      return sub["lines"][0]["spans"][0]["html"].get<std::string>();
    }
  }
  return "";
}
const Json& Upper(const Json& doc) { return doc[0]["para_blocks"].back(); }
const Json& Lower(const Json& doc) { return doc[1]["para_blocks"].front(); }
bool Absorbed(const Json& table) {
  for (const Json& sub : table["blocks"]) {
    if (!sub["lines"].empty() || !sub.value("lines_deleted", false)) return false;
  }
  return true;
}
std::string Merge344(Json upper, Json lower) {
  Json doc = Doc(std::move(upper), std::move(lower));
  MergeCrossPageTables(doc, kRules344);
  return HtmlOf(Upper(doc));
}

const char kTv31Plain[] =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>apple</td><td>3</td></tr>"
    "<tr><td>banana long</td><td>5</td></tr><tr><td>name continued</td><td></td></tr>"
    "<tr><td>cherry</td><td>7</td></tr></table>";
const char kTv31CellMerge[] =
    "<table><tr><td>Name</td><td>Qty</td></tr><tr><td>apple</td><td>3</td></tr>"
    "<tr><td>banana longname continued</td><td>5</td></tr><tr><td>cherry</td><td>7</td></tr>"
    "</table>";

TEST(TableMergeProTest, Tv31WithoutCellMerge) {
  Json doc = Doc(UpperTable(), LowerTable());
  MergeCrossPageTables(doc, kRules344);
  EXPECT_EQ(HtmlOf(Upper(doc)), kTv31Plain);
  EXPECT_TRUE(Absorbed(Lower(doc)));
  EXPECT_EQ(doc[1]["para_blocks"].size(), 2u);
}

TEST(TableMergeProTest, Tv31CellMerge) {
  EXPECT_EQ(Merge344(UpperTable(), LowerTable(kLower, Json::array({1, 0}))), kTv31CellMerge);
  EXPECT_EQ(Merge344(UpperTable(), LowerTable(kLower, Json::array({1, 1}))), kTv31CellMerge);
  // All zeros: nothing moves, the row keeps its text.
  EXPECT_EQ(Merge344(UpperTable(), LowerTable(kLower, Json::array({0, 0}))), kTv31Plain);
  // Flags as Python compares them: True and 1.0 are 1; anything else is not.
  EXPECT_EQ(Merge344(UpperTable(), LowerTable(kLower, Json::array({true, 0}))), kTv31CellMerge);
  EXPECT_EQ(Merge344(UpperTable(), LowerTable(kLower, Json::array({1.0, "1"}))), kTv31CellMerge);
  EXPECT_EQ(Merge344(UpperTable(), LowerTable(kLower, Json::array({"1", 2}))), kTv31Plain);
  for (const Json& garbage : {Json(), Json("abc"), Json::object(), Json::array(), Json(1)}) {
    EXPECT_EQ(Merge344(UpperTable(), LowerTable(kLower, garbage)), kTv31Plain) << garbage;
  }
}

TEST(TableMergeProTest, Tv31ContinuationCaptionAndFootnote) {
  Json doc = Doc(UpperTable(),
                 LowerTable(kLower, std::nullopt, {{"Table 1 (continued)", {52, 20, 548, 38}}},
                            {{"Source: X", {52, 302, 548, 320}}}));
  const Json lower_footnote = Lower(doc)["blocks"][2];
  MergeCrossPageTables(doc, kRules344);
  EXPECT_EQ(HtmlOf(Upper(doc)), kTv31Plain);
  EXPECT_TRUE(Absorbed(Lower(doc)));
  const Json& blocks = Upper(doc)["blocks"];
  ASSERT_EQ(blocks.size(), 2u);
  Json expected = lower_footnote;
  expected["cross_page"] = true;
  expected["index"] = 6;  // upper body index 5 + 1
  EXPECT_EQ(blocks[1], expected);
  EXPECT_EQ(MergeParaText(blocks[1]), "Source: X");
}

TEST(TableMergeProTest, Tv31NotMerged) {
  // A caption without a continuation marker above the lower body.
  {
    Json doc = Doc(UpperTable(),
                   LowerTable(kLower, std::nullopt, {{"Table 2 Results", {52, 20, 548, 38}}}));
    const Json before = doc;
    MergeCrossPageTables(doc, kRules344);
    EXPECT_EQ(doc, before);
  }
  // Lower width 348 against 500.
  {
    Json doc =
        Doc(UpperTable(), LowerTable(kLower, Json::array({1, 0}), {}, {}, {52, 40, 400, 300}));
    const Json before = doc;
    MergeCrossPageTables(doc, kRules344);
    EXPECT_EQ(doc, before);
  }
}

TEST(TableMergeProTest, FootnoteConditionsAndIndexes) {
  // No caption on the lower table: any upper footnote blocks.
  {
    Json doc = Doc(UpperTable(kUpper, {{"note", {50, 782, 550, 790}}}), LowerTable());
    const Json before = doc;
    MergeCrossPageTables(doc, kRules344);
    EXPECT_EQ(doc, before);
  }
  // Continuation caption: one upper footnote is allowed and replaced; two block.
  {
    Json doc = Doc(UpperTable(kUpper, {{"upper note", {50, 782, 550, 790}}}),
                   LowerTable(kLower, std::nullopt, {{"表1（续表）", {52, 20, 548, 38}}},
                              {{"n1", {52, 302, 548, 310}}, {"n2", {52, 312, 548, 320}}}));
    MergeCrossPageTables(doc, kRules344);
    const Json& blocks = Upper(doc)["blocks"];
    ASSERT_EQ(blocks.size(), 3u);
    EXPECT_EQ(MergeParaText(blocks[1]), "n1");
    EXPECT_EQ(blocks[1]["index"], 6);
    EXPECT_EQ(MergeParaText(blocks[2]), "n2");
    EXPECT_EQ(blocks[2]["index"], 7);
    EXPECT_EQ(blocks[2]["cross_page"], true);
  }
  {
    Json doc = Doc(UpperTable(kUpper, {{"a", {50, 782, 550, 786}}, {"b", {50, 786, 550, 790}}}),
                   LowerTable(kLower, std::nullopt, {{"续表", {52, 20, 548, 38}}}));
    const Json before = doc;
    MergeCrossPageTables(doc, kRules344);
    EXPECT_EQ(doc, before);
  }
  // The upper body's index decides the footnote index: a float stays a float, none drops it.
  for (const Json& index : {Json(2.0), Json()}) {
    Json upper = UpperTable();
    if (index.is_null()) {
      upper["blocks"][0].erase("index");
    } else {
      upper["blocks"][0]["index"] = index;
    }
    Json doc = Doc(upper, LowerTable(kLower, std::nullopt, {{"(续)", {52, 20, 548, 38}}},
                                     {{"f", {52, 302, 548, 320}}}));
    MergeCrossPageTables(doc, kRules344);
    const Json& footnote = Upper(doc)["blocks"].back();
    EXPECT_EQ(footnote["cross_page"], true);
    if (index.is_null()) {
      EXPECT_FALSE(footnote.contains("index"));
    } else {
      EXPECT_TRUE(footnote["index"].is_number_float());
      EXPECT_EQ(footnote["index"], 3.0);
    }
  }
}

TEST(TableMergeProTest, CaptionBelowTheBodyBecomesText) {
  Json doc = Doc(UpperTable(), LowerTable(kLower, std::nullopt, {}, {}));
  // A caption the MagicModel attached below the lower body, without a marker.
  Json& lower = doc[1]["para_blocks"][0];
  lower["blocks"].push_back(
      TextSub("table_caption", "Figures in thousands", {52, 305, 548, 320}, 1));
  const Json caption = lower["blocks"][1];
  MergeCrossPageTables(doc, kRules344);
  EXPECT_EQ(HtmlOf(Upper(doc)), kTv31Plain);
  const Json& page = doc[1]["para_blocks"];
  ASSERT_EQ(page.size(), 3u);
  Json expected = caption;
  expected["type"] = "text";
  EXPECT_EQ(page[1], expected);
  EXPECT_EQ(page[2]["type"], "text");
  ASSERT_EQ(page[0]["blocks"].size(), 1u);
  EXPECT_TRUE(Absorbed(page[0]));
  // With a marker it is a caption like any other (and allows the merge).
  Json marked = Doc(UpperTable(), LowerTable());
  marked[1]["para_blocks"][0]["blocks"].push_back(
      TextSub("table_caption", "(continued)", {52, 305, 548, 320}, 1));
  MergeCrossPageTables(marked, kRules344);
  EXPECT_EQ(marked[1]["para_blocks"].size(), 2u);
  EXPECT_TRUE(Absorbed(Lower(marked)));
}

TEST(TableMergeProTest, ContinuationMarkers) {
  for (const std::string yes :
       {"Table 1 (continued)", "表1（续）", "续表", "Table 3 continued", "continued",
        "  Table 1 (Continued)\u3000", "Table 1 (continued) from page 3", "表 1（续上表）",
        "TABLE 1 (CONT.)", "Table 1 (cont\u2019d)", "Table 1 (\u2026continued)", "表1 (续表)",
        "Table 1-continued", "1continued"}) {
    EXPECT_TRUE(IsTableContinuationText(yes)) << yes;
  }
  for (const std::string no : {"Table 2 Results", "discontinued", "表continued", "", "   ",
                               "(续) Table 1", "Table 1 (cont)", "continued table"}) {
    EXPECT_FALSE(IsTableContinuationText(no)) << no;
  }
}

TEST(TableMergeProTest, HeaderRowsExpandOverRowspans) {
  const std::string upper =
      "<table><tr><th rowspan=\"2\">Item</th><th>Q1</th></tr><tr><th>Jan</th></tr>"
      "<tr><td>x</td><td>1</td></tr></table>";
  const std::string lower =
      "<table><tr><th rowspan=\"2\">Item</th><th>Q1</th></tr><tr><th>Feb</th></tr>"
      "<tr><td>y</td><td>3</td></tr></table>";
  EXPECT_EQ(Merge344(UpperTable(upper), LowerTable(lower)),
            "<table><tr><th rowspan=\"2\">Item</th><th>Q1</th></tr><tr><th>Jan</th></tr>"
            "<tr><td>x</td><td>1</td></tr><tr><td>y</td><td>3</td></tr></table>");
  // MinerU 2.7.6 keeps the second header row.
  Json doc = Doc(UpperTable(upper), LowerTable(lower));
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)),
            "<table><tr><th rowspan=\"2\">Item</th><th>Q1</th></tr><tr><th>Jan</th></tr>"
            "<tr><td>x</td><td>1</td></tr><tr><th>Feb</th></tr><tr><td>y</td><td>3</td></tr>"
            "</table>");
}

TEST(TableMergeProTest, BlankRowspanPlaceholdersCoveredByTheUpperTableGo) {
  // The upper table's "grp" spans two rows past its end.
  const std::string upper =
      "<table><tr><td>A</td><td>B</td></tr><tr><td rowspan=\"3\">grp</td><td>1</td></tr></table>";
  // Fully covered: the placeholder disappears.
  EXPECT_EQ(Merge344(UpperTable(upper),
                     LowerTable("<table><tr><td rowspan=\"2\"></td><td>2</td></tr><tr><td>3</td>"
                                "</tr><tr><td>z</td><td>4</td></tr></table>")),
            "<table><tr><td>A</td><td>B</td></tr><tr><td rowspan=\"3\">grp</td><td>1</td></tr>"
            "<tr><td>2</td></tr><tr><td>3</td></tr><tr><td>z</td><td>4</td></tr></table>");
  // Partly covered: the rest of its rowspan moves down (rowspan 1: the attribute goes).
  EXPECT_EQ(Merge344(UpperTable(upper),
                     LowerTable("<table><tr><td rowspan=\"3\"></td><td>2</td></tr><tr><td>3</td>"
                                "</tr><tr><td>4</td></tr><tr><td>z</td><td>5</td></tr></table>")),
            "<table><tr><td>A</td><td>B</td></tr><tr><td rowspan=\"3\">grp</td><td>1</td></tr>"
            "<tr><td>2</td></tr><tr><td>3</td></tr><tr><td></td><td>4</td></tr>"
            "<tr><td>z</td><td>5</td></tr></table>");
  // A placeholder with content stays.
  EXPECT_EQ(Merge344(UpperTable(upper),
                     LowerTable("<table><tr><td rowspan=\"2\">k</td><td>2</td></tr><tr><td>3</td>"
                                "</tr></table>")),
            "<table><tr><td>A</td><td>B</td></tr><tr><td rowspan=\"3\">grp</td><td>1</td></tr>"
            "<tr><td rowspan=\"2\">k</td><td>2</td></tr><tr><td>3</td></tr></table>");
}

TEST(TableMergeProTest, EmptiedRowCarriesItsRowspansDown) {
  const std::string upper =
      "<table><tr><td>H1</td><td>H2</td></tr><tr><td>start</td><td>v</td></tr></table>";
  const std::string lower =
      "<table><tr><td>cont</td><td rowspan=\"2\"></td></tr><tr><td>next</td></tr></table>";
  EXPECT_EQ(Merge344(UpperTable(upper), LowerTable(lower, Json::array({1, 0}))),
            "<table><tr><td>H1</td><td>H2</td></tr><tr><td>startcont</td><td>v</td></tr>"
            "<tr><td>next</td><td></td></tr></table>");
  // Markup inside moved cells moves with it; a row with an image is not empty.
  EXPECT_EQ(Merge344(UpperTable(upper),
                     LowerTable("<table><tr><td><b>x</b></td><td><img src=\"a.jpg\"/></td></tr>"
                                "</table>",
                                Json::array({1, 0}))),
            "<table><tr><td>H1</td><td>H2</td></tr><tr><td>start<b>x</b></td><td>v</td></tr>"
            "<tr><td></td><td><img src=\"a.jpg\"/></td></tr></table>");
}

TEST(TableMergeProTest, NarrowerSideIsWidened) {
  const std::string upper =
      "<table><tr><td>A</td><td>B</td><td>C</td></tr><tr><td>x</td><td colspan=\"2\">y</td></tr>"
      "</table>";
  const std::string lower =
      "<table><tr><td>p</td><td>q</td></tr><tr><td>r</td></tr><tr><td>s</td><td colspan='1'>t"
      "</td></tr></table>";
  EXPECT_EQ(Merge344(UpperTable(upper), LowerTable(lower)),
            "<table><tr><td>A</td><td>B</td><td>C</td></tr><tr><td>x</td><td colspan=\"2\">y</td>"
            "</tr><tr><td>p</td><td colspan=\"2\">q</td></tr><tr><td colspan=\"3\">r</td></tr>"
            "<tr><td>s</td><td colspan='2'>t</td></tr></table>");
  EXPECT_EQ(Merge344(UpperTable("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td>"
                                "<td colspan='1'>d</td></tr></table>"),
                     LowerTable("<table><tr><td colspan='2'>e</td><td>f</td></tr></table>")),
            "<table><tr><td colspan=\"2\">a</td><td>b</td></tr><tr><td colspan=\"2\">c</td>"
            "<td colspan='1'>d</td></tr><tr><td colspan='2'>e</td><td>f</td></tr></table>");
}

const char kRow0[] =
    "<table><tr><td>Name</td><td>Value</td></tr><tr><td>a</td><td>1</td></tr></table>";
const char kRow1[] =
    "<table><tr><td>Name</td><td>Value</td></tr><tr><td>b</td><td>2</td></tr></table>";
const char kRow2[] =
    "<table><tr><td>Name</td><td>Value</td></tr><tr><td>c</td><td>3</td></tr></table>";

TEST(TableMergeProTest, ChainsAcrossThreePages) {
  Json doc = Json::array({Page({Text("intro", 0), Table(kRow0, kUpperBox, 1)}, 0),
                          Page({Table(kRow1, kLowerBox, 0)}, 1),
                          Page({Table(kRow2, kLowerBox, 0), Text("end", 1)}, 2)});
  MergeCrossPageTables(doc, kRules344);
  EXPECT_EQ(HtmlOf(doc[0]["para_blocks"][1]),
            "<table><tr><td>Name</td><td>Value</td></tr><tr><td>a</td><td>1</td></tr>"
            "<tr><td>b</td><td>2</td></tr><tr><td>c</td><td>3</td></tr></table>");
  EXPECT_TRUE(Absorbed(doc[1]["para_blocks"][0]));
  EXPECT_TRUE(Absorbed(doc[2]["para_blocks"][0]));
  // When the middle table then stays, it is written with what it absorbed.
  Json stays = Json::array({Page({Text("intro", 0)}, 0), Page({Table(kRow1, kLowerBox, 0)}, 1),
                            Page({Table(kRow2, kLowerBox, 0)}, 2)});
  MergeCrossPageTables(stays, kRules344);
  EXPECT_EQ(HtmlOf(stays[1]["para_blocks"][0]),
            "<table><tr><td>Name</td><td>Value</td></tr><tr><td>b</td><td>2</td></tr>"
            "<tr><td>c</td><td>3</td></tr></table>");
  EXPECT_TRUE(Absorbed(stays[2]["para_blocks"][0]));
}

TEST(TableMergeProTest, UnmergeableHtmlAndShapes) {
  for (const std::string bad :
       {"<table><tr><td colspan=\"x\">b</td><td>2</td></tr></table>",
        "<table><tr><td><table><tr><td>b</td></tr></table></td><td>2</td></tr></table>",
        "<tr><td>b</td><td>2</td></tr>", "<table><tr><td>b</td><td", "not html at all", "",
        "<table></table>"}) {
    Json doc = Doc(UpperTable(), LowerTable(bad, Json::array({1, 0})));
    const Json before = doc;
    MergeCrossPageTables(doc, kRules344);
    EXPECT_EQ(doc, before) << bad;
  }
  Json not_array = Json::object();
  MergeCrossPageTables(not_array, kRules344);
  Json no_bbox = LowerTable();
  no_bbox.erase("bbox");
  Json docs = Json::array(
      {Json::array({1, "x", nullptr}),
       Json::array({Json{{"para_blocks", "x"}}, Json{{"para_blocks", {LowerTable()}}}}),
       Json::array({Json{{"para_blocks", {Json{{"type", "table"}}}}},
                    Json{{"para_blocks", {Json{{"type", "table"}, {"blocks", 4}}}}}}),
       Json::array({Page({UpperTable()}, 0), Page({no_bbox}, 1)}),
       Json::array({Page({Table(kUpper, {50, 0, 50, 1}, 0)}, 0),
                    Page({Table(kLower, {52, 0, 52, 1}, 0)}, 1)}),
       Json::array(
           {Page({Json{{"type", "table"},
                       {"bbox", {0, 0, 500, 1}},
                       {"blocks",
                        {1, Json{{"type", "table_body"}, {"lines", {1}}},
                         Json{{"type", "table_body"}, {"lines", {Json{{"spans", {"s"}}}}}}}}}},
                 0),
            Page({LowerTable()}, 1)})});
  for (Json& doc : docs) {
    const Json before = doc;
    MergeCrossPageTables(doc, kRules344);
    EXPECT_EQ(doc, before);
  }
}

TEST(TableMergeProTest, DefaultRulesAreMinerU276) {
  Json a = Doc(UpperTable(), LowerTable(kLower, Json::array({1, 0})));
  Json b = a;
  MergeCrossPageTables(a);
  MergeCrossPageTables(b, TableMergeRules{});
  EXPECT_EQ(a, b);
  EXPECT_EQ(HtmlOf(Upper(a)), kTv31Plain);  // 2.7.6 ignores cell_merge
}

}  // namespace
}  // namespace mineru::pipeline
