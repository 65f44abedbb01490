// SPDX-License-Identifier: Apache-2.0
// MergeCrossPageTables against MinerU 2.7.6 mineru/utils/table_merge.py on hand-built middle.json
// pages.
#include "pipeline/table_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/markdown.h"

namespace mineru::pipeline {
namespace {

Json Line(std::vector<Json> spans) {
  return {{"bbox", {0, 0, 10, 10}}, {"spans", Json(std::move(spans))}};
}
Json TextSub(const std::string& type, const std::string& text) {
  return {{"bbox", {0, 0, 10, 10}},
          {"type", type},
          {"angle", 0},
          {"lines",
           Json::array({Line({{{"bbox", {0, 0, 10, 10}}, {"type", "text"}, {"content", text}}})})},
          {"index", 0}};
}
Json Body(const std::string& html) {
  return {{"bbox", {0, 0, 10, 10}},
          {"type", "table_body"},
          {"angle", 0},
          {"lines", Json::array({Line({{{"bbox", {0, 0, 10, 10}},
                                        {"type", "table"},
                                        {"html", html},
                                        {"image_path", "t.jpg"}}})})},
          {"index", 0}};
}
// A table block of width `width` with optional captions and footnotes.
Json Table(const std::string& html, double width = 500, std::vector<std::string> captions = {},
           std::vector<std::string> footnotes = {}) {
  Json blocks = Json::array();
  for (const std::string& c : captions) blocks.push_back(TextSub("table_caption", c));
  blocks.push_back(Body(html));
  for (const std::string& f : footnotes) blocks.push_back(TextSub("table_footnote", f));
  return {
      {"type", "table"}, {"bbox", {50, 100, 50 + width, 700}}, {"blocks", blocks}, {"index", 0}};
}
Json TextBlock(const std::string& text) { return TextSub("text", text); }
Json Page(std::vector<Json> para, int idx) {
  return {{"para_blocks", Json(std::move(para))},
          {"discarded_blocks", Json::array()},
          {"page_size", {612, 792}},
          {"page_idx", idx}};
}
Json TwoPages(Json upper, Json lower) {
  return Json::array({Page({TextBlock("intro"), std::move(upper)}, 0),
                      Page({std::move(lower), TextBlock("after")}, 1)});
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

const char kUpper[] =
    "<table><tr><td>Name</td><td>Value</td></tr><tr><td>a</td><td>1</td></tr></table>";
const char kLower[] =
    "<table><tr><td>Name</td><td>Value</td></tr><tr><td>b</td><td>2</td></tr></table>";
const char kMerged[] =
    "<table><tr><td>Name</td><td>Value</td></tr><tr><td>a</td><td>1</td></tr>"
    "<tr><td>b</td><td>2</td></tr></table>";

TEST(TableMergeTest, MergesAndDropsRepeatedHeader) {
  Json doc = TwoPages(Table(kUpper), Table(kLower, 500, {}, {"Source: survey"}));
  const Json lower_footnote = Lower(doc)["blocks"][1];
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)), kMerged);
  EXPECT_TRUE(Absorbed(Lower(doc)));
  // The lower footnote moved up, marked cross_page, with its lines intact.
  const Json& blocks = Upper(doc)["blocks"];
  ASSERT_EQ(blocks.size(), 2u);
  Json expected = lower_footnote;
  expected["cross_page"] = true;
  EXPECT_EQ(blocks[1], expected);
  // The absorbed table disappears from the Markdown.
  EXPECT_EQ(MakeMarkdown(doc), std::string("intro\n\n") + kMerged + "\n\nSource: survey\n\nafter");
}

TEST(TableMergeTest, MultiRowHeaderWithSpansAndWhitespace) {
  const std::string upper =
      "<table><thead><tr><th rowspan=\"2\">Item</th><th colspan=\"2\">Q1</th></tr>"
      "<tr><th>Jan</th><th>Feb</th></tr></thead>"
      "<tbody><tr><td>x</td><td>1</td><td>2</td></tr></tbody></table>";
  const std::string lower =
      "<table><tr><td rowspan=\"2\"> Item </td><td colspan=2>Ｑ1</td></tr>"
      "<tr><td>Jan</td><td>F e b</td></tr>"
      "<tr><td>y</td><td>3</td><td>4</td></tr></table>";
  Json doc = TwoPages(Table(upper), Table(lower));
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)),
            "<table><thead><tr><th rowspan=\"2\">Item</th><th colspan=\"2\">Q1</th></tr>"
            "<tr><th>Jan</th><th>Feb</th></tr></thead>"
            "<tbody><tr><td>x</td><td>1</td><td>2</td></tr>"
            "<tr><td>y</td><td>3</td><td>4</td></tr></tbody></table>");
  EXPECT_TRUE(Absorbed(Lower(doc)));
}

TEST(TableMergeTest, NoRepeatedHeaderAppendsAllRows) {
  const std::string lower = "<table><tr><td>b</td><td>2</td></tr></table>";
  Json doc = TwoPages(Table(kUpper), Table(lower));
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)), kMerged);
}

TEST(TableMergeTest, CaptionWithoutContinuationMarkerBlocks) {
  Json doc = TwoPages(Table(kUpper), Table(kLower, 500, {"Table 2: Results"}));
  const Json before = doc;
  MergeCrossPageTables(doc);
  EXPECT_EQ(doc, before);
}

TEST(TableMergeTest, ContinuationMarkersAllowMerge) {
  for (const std::string caption :
       {"Table 1 (续)", "表1（续表）", "续表", "Table 1 (Continued)", "TABLE 1 (CONT.)",
        "Table 1 (cont\u2019d)", "Table 1 (continued) from page 3", "表 1（续上表）"}) {
    Json doc = TwoPages(Table(kUpper), Table(kLower, 500, {caption}));
    MergeCrossPageTables(doc);
    EXPECT_EQ(HtmlOf(Upper(doc)), kMerged) << caption;
  }
  for (const std::string caption : {"Table 1 continued", "(续) Table 1", "Table 1 (cont)"}) {
    Json doc = TwoPages(Table(kUpper), Table(kLower, 500, {caption}));
    MergeCrossPageTables(doc);
    EXPECT_EQ(HtmlOf(Upper(doc)), kUpper) << caption;
  }
}

TEST(TableMergeTest, FootnoteConditions) {
  // No caption below: any footnote above blocks.
  {
    Json doc = TwoPages(Table(kUpper, 500, {}, {"note"}), Table(kLower));
    MergeCrossPageTables(doc);
    EXPECT_EQ(HtmlOf(Upper(doc)), kUpper);
    EXPECT_FALSE(Absorbed(Lower(doc)));
  }
  // Continuation caption below: one footnote above is allowed and replaced by the lower ones.
  {
    Json doc = TwoPages(Table(kUpper, 500, {"Table 1"}, {"upper note"}),
                        Table(kLower, 500, {"Table 1 (续)"}, {"lower note"}));
    MergeCrossPageTables(doc);
    EXPECT_EQ(HtmlOf(Upper(doc)), kMerged);
    const Json& blocks = Upper(doc)["blocks"];
    ASSERT_EQ(blocks.size(), 3u);
    EXPECT_EQ(blocks[0]["type"], "table_caption");
    EXPECT_EQ(blocks[2]["type"], "table_footnote");
    EXPECT_EQ(MergeParaText(blocks[2]), "lower note");
    EXPECT_EQ(blocks[2]["cross_page"], true);
  }
  // Continuation caption below: two footnotes above block.
  {
    Json doc = TwoPages(Table(kUpper, 500, {}, {"n1", "n2"}), Table(kLower, 500, {"Table 1 (续)"}));
    MergeCrossPageTables(doc);
    EXPECT_EQ(HtmlOf(Upper(doc)), kUpper);
  }
}

TEST(TableMergeTest, WidthDifferenceOfTenPercentBlocks) {
  {
    Json doc = TwoPages(Table(kUpper, 500), Table(kLower, 550));  // 50/500 = 10%
    MergeCrossPageTables(doc);
    EXPECT_EQ(HtmlOf(Upper(doc)), kUpper);
  }
  {
    Json doc = TwoPages(Table(kUpper, 500), Table(kLower, 549));
    MergeCrossPageTables(doc);
    EXPECT_EQ(HtmlOf(Upper(doc)), kMerged);
  }
}

TEST(TableMergeTest, ColumnMismatchBlocks) {
  const std::string lower =
      "<table><tr><td>b</td><td>2</td><td>x</td></tr><tr><td>c</td><td>3</td><td>y</td></tr>"
      "</table>";
  Json doc = TwoPages(Table(kUpper), Table(lower));
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)), kUpper);
  EXPECT_FALSE(Absorbed(Lower(doc)));
}

TEST(TableMergeTest, MissingHtmlBlocks) {
  Json doc = TwoPages(Table(kUpper), Table(""));
  const Json before = doc;
  MergeCrossPageTables(doc);
  EXPECT_EQ(doc, before);
}

TEST(TableMergeTest, OnlyFirstAndLastBlocksAreCandidates) {
  Json doc =
      Json::array({Page({Table(kUpper), TextBlock("after table")}, 0), Page({Table(kLower)}, 1)});
  const Json before = doc;
  MergeCrossPageTables(doc);
  EXPECT_EQ(doc, before);
}

TEST(TableMergeTest, LowerRowsWidenedByReferenceColspans) {
  // Upper: 3 columns, last row "x | y(colspan 2)". Lower: 2 cells per row; its rows shaped like
  // its first data row take the upper last row's colspans, others extend their last cell.
  const std::string upper =
      "<table><tr><td>A</td><td>B</td><td>C</td></tr><tr><td>x</td><td colspan=\"2\">y</td></tr>"
      "</table>";
  const std::string lower =
      "<table><tr><td>p</td><td>q</td></tr><tr><td>r</td></tr><tr><td>s</td><td colspan='1'>t"
      "</td></tr></table>";
  Json doc = TwoPages(Table(upper), Table(lower));
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)),
            "<table><tr><td>A</td><td>B</td><td>C</td></tr><tr><td>x</td><td colspan=\"2\">y</td>"
            "</tr><tr><td>p</td><td colspan=\"2\">q</td></tr><tr><td colspan=\"3\">r</td></tr>"
            "<tr><td>s</td><td colspan='2'>t</td></tr></table>");
}

TEST(TableMergeTest, UpperRowsWidenedWhenLowerIsWider) {
  const std::string upper =
      "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td colspan='1'>d</td></tr></table>";
  const std::string lower = "<table><tr><td colspan='2'>e</td><td>f</td></tr></table>";
  Json doc = TwoPages(Table(upper), Table(lower));
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)),
            "<table><tr><td colspan=\"2\">a</td><td>b</td></tr><tr><td colspan=\"2\">c</td>"
            "<td colspan='1'>d</td></tr><tr><td colspan='2'>e</td><td>f</td></tr></table>");
}

TEST(TableMergeTest, ChainsAcrossThreePages) {
  const std::string row3 = "<table><tr><td>c</td><td>3</td></tr></table>";
  Json doc =
      Json::array({Page({Table(kUpper)}, 0), Page({Table(kLower)}, 1), Page({Table(row3)}, 2)});
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(doc[0]["para_blocks"][0]),
            "<table><tr><td>Name</td><td>Value</td></tr><tr><td>a</td><td>1</td></tr>"
            "<tr><td>b</td><td>2</td></tr><tr><td>c</td><td>3</td></tr></table>");
  EXPECT_TRUE(Absorbed(doc[1]["para_blocks"][0]));
  EXPECT_TRUE(Absorbed(doc[2]["para_blocks"][0]));
}

TEST(TableMergeTest, UnclosedRowsAndEntities) {
  const std::string upper = "<table><tr><td>A&amp;B<td>C</tr><tr><td>1<td>2</table>";
  const std::string lower = "<table><tr><td>A&B</td><td>C</td><tr><td>3<td>4</table>";
  Json doc = TwoPages(Table(upper), Table(lower));
  MergeCrossPageTables(doc);
  EXPECT_EQ(HtmlOf(Upper(doc)),
            "<table><tr><td>A&amp;B<td>C</tr><tr><td>1<td>2<tr><td>3<td>4</tr></table>");
}

TEST(TableMergeTest, ColumnCounts) {
  EXPECT_EQ(TableColumnCount("<table><tr><td>a</td><td>b</td></tr></table>"), 2);
  EXPECT_EQ(TableColumnCount("<table><tr><td colspan=\"3\">a</td></tr></table>"), 3);
  EXPECT_EQ(TableColumnCount("<table><tr><td rowspan=2>a</td><td>b</td></tr>"
                             "<tr><td>c</td><td>d</td></tr></table>"),
            3);
  EXPECT_EQ(TableColumnCount("<TABLE><TR><TH>a</TH></TR></TABLE>"), 1);
  EXPECT_EQ(TableColumnCount("<table></table>"), 0);
  EXPECT_FALSE(TableColumnCount("<tr><td>no table</td></tr>"));
  EXPECT_FALSE(
      TableColumnCount("<table><tr><td><table><tr><td>x</td></tr></table></td></tr>"
                       "</table>"));
  EXPECT_FALSE(TableColumnCount("<table><tr><td colspan=\"abc\">x</td></tr></table>"));
  EXPECT_FALSE(TableColumnCount("<table><tr><td colspan=\"0\">x</td></tr></table>"));
  EXPECT_FALSE(TableColumnCount("<table><tr><td rowspan=\"99999\">x</td></tr></table>"));
  EXPECT_FALSE(TableColumnCount("<table><tr><td class=\"x>y</td></tr></table>"));
  EXPECT_FALSE(TableColumnCount("<table><tr><td"));
  EXPECT_FALSE(TableColumnCount("<table><!-- open"));
}

TEST(TableMergeTest, MalformedHtmlIsNotMerged) {
  for (const std::string bad :
       {"<table><tr><td colspan=\"x\">b</td><td>2</td></tr></table>",
        "<table><tr><td><table><tr><td>b</td></tr></table></td><td>2</td></tr></table>",
        "<tr><td>b</td><td>2</td></tr>", "<table><tr><td>b</td><td", "not html at all"}) {
    Json doc = TwoPages(Table(kUpper), Table(bad));
    const Json before = doc;
    MergeCrossPageTables(doc);
    EXPECT_EQ(doc, before) << bad;
  }
}

TEST(TableMergeTest, MalformedJsonShapesNeverThrow) {
  Json not_array = Json::object();
  MergeCrossPageTables(not_array);
  Json table_without_bbox = Table(kLower);
  table_without_bbox.erase("bbox");
  Json zero_width = Table(kLower, 0);
  Json docs = Json::array(
      {Json::array({1, "x", nullptr}),
       Json::array({Json{{"para_blocks", "x"}}, Json{{"para_blocks", {Table(kLower)}}}}),
       Json::array({Json{{"para_blocks", {Json{{"type", "table"}}}}},
                    Json{{"para_blocks", {Json{{"type", "table"}, {"blocks", 4}}}}}}),
       Json::array({Page({Table(kUpper)}, 0), Page({table_without_bbox}, 1)}),
       Json::array({Page({Table(kUpper, 0)}, 0), Page({zero_width}, 1)}),
       Json::array(
           {Page({Json{{"type", "table"},
                       {"bbox", {0, 0, 500, 1}},
                       {"blocks",
                        {1, Json{{"type", "table_body"}, {"lines", {1}}},
                         Json{{"type", "table_body"}, {"lines", {Json{{"spans", {"s"}}}}}}}}}},
                 0),
            Page({Table(kLower)}, 1)}),
       Json::array({Page({Table(kUpper)}, 0),
                    Page({Json{{"type", "table"},
                               {"bbox", {50, 100, 550, 700}},
                               {"blocks", {7, Body(kLower), TextSub("table_footnote", "f")}}}},
                         1)})});
  for (Json& doc : docs) MergeCrossPageTables(doc);
  // The last one is well-formed enough to merge; its non-object sub-block is left as it was.
  const Json& last = docs.back();
  EXPECT_EQ(HtmlOf(last[0]["para_blocks"][0]), kMerged);
  EXPECT_EQ(last[1]["para_blocks"][0]["blocks"][0], 7);
}

}  // namespace
}  // namespace mineru::pipeline
