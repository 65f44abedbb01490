// SPDX-License-Identifier: Apache-2.0
// The shared HTML table model: parser, markup round trip, edits, MinerU 3.4.4's structure
// helpers, and the Python str helpers the merge prompt uses.
#include "pipeline/html_table.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "pipeline/python_str.h"

namespace mineru::pipeline {
namespace {

TableModel Model(const std::string& html, bool nested = false) {
  std::optional<TableModel> model = BuildTableModel(html, {.allow_nested_tables = nested});
  EXPECT_TRUE(model.has_value()) << html;
  return model.value_or(TableModel{});
}

std::vector<std::string> Texts(const TableRow& row) {
  std::vector<std::string> out;
  for (const TableCell& cell : row.cells) out.push_back(cell.text);
  return out;
}

TEST(HtmlTableTest, SerializeReproducesTheSource) {
  for (const std::string html : {
           "<table><tr><td>a</td><td>b</td></tr></table>",
           "<table>\n  <thead><tr><th rowspan='2'>H</th></tr></thead>\n<tbody>\n"
           "<tr> <td colspan=2>x &amp; y</td> </tr>\n</tbody></table>\n",
           "<table><tr><td>1<td>2<tr><td>3</table>",
           "<p>before</p><table><tr><td><b>bold</b><br/>x</td></tr></table><p>after</p>",
           "<table><tr><td>no end",
       }) {
    EXPECT_EQ(SerializeTable(Model(html)), html);
  }
}

TEST(HtmlTableTest, CellsTextsSpansAndMedia) {
  TableModel model = Model(
      "<table><tr><td colspan=\"3\" rowspan='2'> A&amp;B <i>c</i></td><th>&#x4E2D;&nbsp;</th>"
      "</tr><tr><td><img src=\"x.jpg\"/></td><td><eq>x^2</eq></td></tr></table>");
  ASSERT_EQ(model.rows.size(), 2u);
  ASSERT_EQ(model.rows[0].cells.size(), 2u);
  EXPECT_EQ(model.rows[0].cells[0].colspan, 3);
  EXPECT_EQ(model.rows[0].cells[0].rowspan, 2);
  EXPECT_EQ(Texts(model.rows[0]), (std::vector<std::string>{" A&B c", "中\u00A0"}));
  EXPECT_EQ(model.rows[0].cells[1].name, "th");
  EXPECT_FALSE(model.rows[0].cells[0].has_media);
  EXPECT_TRUE(model.rows[1].cells[0].has_media);
  EXPECT_TRUE(model.rows[1].cells[1].has_media);
  EXPECT_EQ(model.rows[1].cells[1].text, "x^2");
}

TEST(HtmlTableTest, ImplicitlyClosedCellsAndRows) {
  TableModel model = Model("<table><tr><td>1<td>2<tr><td>3</table>");
  ASSERT_EQ(model.rows.size(), 2u);
  EXPECT_EQ(Texts(model.rows[0]), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(model.rows[0].end_tag, "");
  EXPECT_EQ(model.rows[0].cells[0].end_tag, "");
  EXPECT_EQ(SerializeRow(model.rows[0], /*close=*/true), "<tr><td>1<td>2</tr>");
}

TEST(HtmlTableTest, RejectsMalformedAndHugeSpans) {
  for (const std::string bad : {
           "",
           "no table at all",
           "<tr><td>row without table</td></tr>",
           "<table><tr><td",
           "<table><!-- open",
           "<table><tr><td class=\"x>y</td></tr></table>",
           "<table><tr><td colspan=\"abc\">x</td></tr></table>",
           "<table><tr><td colspan=\"0\">x</td></tr></table>",
           "<table><tr><td rowspan=\"1001\">x</td></tr></table>",
           "<table><tr><td colspan=\"99999999999999999999\">x</td></tr></table>",
           "<table><tr><td><table><tr><td>nested</td></tr></table></td></tr></table>",
       }) {
    EXPECT_FALSE(BuildTableModel(bad).has_value()) << bad;
  }
  // Within the span limit but past the occupancy budget: five 1000 × 1000 cells.
  std::string heavy = "<table><tr>";
  for (int i = 0; i < 5; ++i) heavy += "<td colspan=\"1000\" rowspan=\"1000\">x</td>";
  heavy += "</tr></table>";
  ASSERT_TRUE(BuildTableModel(heavy).has_value());
  EXPECT_FALSE(BuildTableState(heavy).has_value());
  // One such cell is fine: 1000 columns, 999 rows carried below the table.
  std::optional<TableState> one =
      BuildTableState("<table><tr><td colspan=\"1000\" rowspan=\"1000\">x</td></tr></table>");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->scan.total_cols, 1000);
  EXPECT_EQ(one->scan.tail.size(), 999u);
}

TEST(HtmlTableTest, NestedTablesFollowFindAll) {
  const std::string html =
      "<table><tr><td>a</td><td><table><tr><td>x</td><td>y</td></tr></table></td></tr>"
      "<tr><td>b</td><td>c</td></tr></table>";
  EXPECT_FALSE(BuildTableModel(html).has_value());
  TableModel model = Model(html, /*nested=*/true);
  EXPECT_TRUE(model.nested);
  ASSERT_EQ(model.rows.size(), 3u);
  // The outer row lists the nested cells too; the nested row is a row of its own.
  EXPECT_EQ(Texts(model.rows[0]), (std::vector<std::string>{"a", "xy", "x", "y"}));
  EXPECT_TRUE(model.rows[0].cells[1].has_media);
  EXPECT_EQ(Texts(model.rows[1]), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(Texts(model.rows[2]), (std::vector<std::string>{"b", "c"}));
  // Nesting is bounded.
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "<table><tr><td>";
  EXPECT_FALSE(BuildTableModel(deep, {.allow_nested_tables = true}).has_value());
  std::string ok;
  for (size_t i = 0; i < kMaxTableNesting; ++i) ok += "<table><tr><td>";
  EXPECT_TRUE(BuildTableModel(ok, {.allow_nested_tables = true}).has_value());
}

TEST(HtmlTableTest, SpanAttributeEdits) {
  EXPECT_EQ(WithSpanAttribute("<td>", "colspan", 3), "<td colspan=\"3\">");
  EXPECT_EQ(WithSpanAttribute("<td class=x/>", "colspan", 3), "<td class=x colspan=\"3\"/>");
  EXPECT_EQ(WithSpanAttribute("<td colspan='1' x>", "colspan", 12), "<td colspan='12' x>");
  EXPECT_EQ(WithSpanAttribute("<td colspan=2>", "colspan", 5), "<td colspan=5>");
  EXPECT_EQ(WithSpanAttribute("<td a=\"1\"  rowspan=\"3\" b>", "rowspan", std::nullopt),
            "<td a=\"1\" b>");
  EXPECT_EQ(WithSpanAttribute("<td>", "rowspan", std::nullopt), "<td>");
  EXPECT_EQ(WithSpanAttribute("not a tag", "rowspan", 2), "not a tag");
}

TEST(HtmlTableTest, AppendRowsAtTheInsertionPoint) {
  TableModel upper = Model(
      "<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>a</td></tr>\n</tbody>"
      "<tfoot><tr><td>f</td></tr></tfoot></table>");
  TableModel lower = Model("<table><tr><td>b</td></tr> <tr><td>c</td></table>");
  AppendRows(&upper, std::move(lower.rows));
  EXPECT_EQ(SerializeTable(upper),
            "<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>a</td></tr>\n"
            "<tr><td>b</td></tr><tr><td>c</td></tr></tbody><tfoot><tr><td>f</td></tr></tfoot>"
            "</table>");
  // Without tbody: before </table>.
  TableModel plain = Model("<table><tr><td>a</td></tr></table>");
  AppendRows(&plain, Model("<table><tr><td>b</td></tr></table>").rows);
  EXPECT_EQ(SerializeTable(plain), "<table><tr><td>a</td></tr><tr><td>b</td></tr></table>");
}

TEST(HtmlTableTest, ScanMetricsAndTail) {
  TableModel model = Model(
      "<table><tr><td rowspan=\"3\">a</td><td colspan=\"2\">b</td></tr>"
      "<tr><td>c</td></tr><tr></tr></table>");
  std::optional<RowScan> scan = ScanRows(model.rows);
  ASSERT_TRUE(scan.has_value());
  ASSERT_EQ(scan->rows.size(), 3u);
  EXPECT_EQ(scan->total_cols, 3);
  EXPECT_EQ(scan->rows[0].effective_cols, 3);
  EXPECT_EQ(scan->rows[0].actual_cols, 2 + 1);
  EXPECT_EQ(scan->rows[0].visual_cols, 2);
  EXPECT_EQ(scan->rows[1].effective_cols, 2);  // the rowspan holds column 0, c sits at 1
  EXPECT_EQ(scan->rows[2].effective_cols, 1);  // only the rowspan
  ASSERT_TRUE(scan->last_data_row.has_value());
  EXPECT_EQ(scan->last_data_row->row, 1u);
  EXPECT_TRUE(scan->tail.empty());
  // Carried-in occupancy: the first row's cells move right of it; it counts in total_cols.
  std::optional<RowScan> carried =
      ScanRows(Model("<table><tr><td>x</td></tr></table>").rows, Occupancy{{0, 1}, {4}}, 7);
  ASSERT_TRUE(carried.has_value());
  EXPECT_EQ(carried->rows[0].row, 7u);
  EXPECT_EQ(carried->rows[0].effective_cols, 3);
  EXPECT_EQ(carried->total_cols, 5);
  EXPECT_EQ(carried->tail, (Occupancy{{4}}));
}

TEST(HtmlTableTest, RenderedSegmentsAndVisualColumns) {
  // TV-28's upper table: 11 columns, last row in two segments.
  TableModel t1 = Model(
      "<table><tr><td>合计</td><td>--</td><td>49,031.73</td><td>50,199.76</td><td>7,973.94</td>"
      "<td>30,191.52</td><td>--</td><td>--</td><td>3,207.97</td><td>--</td><td>--</td></tr>"
      "<tr><td>分项目说明未达到计划进度、预计收益的情况和原因(含</td><td colspan=\"10\">不适用</td>"
      "</tr></table>");
  EXPECT_EQ(RenderedSegments(t1.rows, 1),
            (std::vector<RenderedSegment>{
                {"分项目说明未达到计划进度、预计收益的情况和原因(含", 0, 1}, {"不适用", 1, 11}}));
  EXPECT_EQ(VisualColumnMap(t1.rows, 1), (std::vector<int>{0, 1}));
  EXPECT_TRUE(RenderedSegments(t1.rows, 2).empty());
  // Rowspans from above render in the row; unowned columns end a segment; texts are stripped
  // and full→half-width.
  TableModel t2 = Model(
      "<table><tr><td rowspan=\"2\"> Ａ１ </td><td>b</td><td>c</td><td>d</td></tr>"
      "<tr><td>e</td></tr></table>");
  EXPECT_EQ(RenderedSegments(t2.rows, 1),
            (std::vector<RenderedSegment>{{"A1", 0, 1}, {"e", 1, 2}}));
  EXPECT_EQ(VisualColumnMap(t2.rows, 1), (std::vector<int>{1}));
  EXPECT_EQ(VisualColumnMaps(t2.rows, 2), (std::vector<std::vector<int>>{{0, 1, 2, 3}, {1}}));
  // Carried-in columns are segments of their own with no text.
  EXPECT_EQ(RenderedSegments(Model("<table><tr><td>x</td></tr></table>").rows, 0, {{0, 1}}),
            (std::vector<RenderedSegment>{{"", 0, 1}, {"", 1, 2}, {"x", 2, 3}}));
}

TEST(HtmlTableTest, HeaderRowsAndStructure) {
  auto state = [](const std::string& html) {
    std::optional<TableState> s = BuildTableState(html);
    EXPECT_TRUE(s.has_value()) << html;
    return s.value_or(TableState{});
  };
  const TableState upper =
      state("<table><tr><th>Name</th><th>Qty</th></tr><tr><td>apple</td><td>3</td></tr></table>");
  // Strict: same structure and whitespace-insensitive, full→half-width texts.
  EXPECT_EQ(DetectHeaderRows(upper, state("<table><tr><td> Na me</td><td>Ｑty</td></tr>"
                                          "<tr><td>pear</td><td>1</td></tr></table>")),
            1u);
  // Visual fallback: equal texts and rendered segments although the spans differ.
  const TableState spans = state(
      "<table><tr><td>A</td><td colspan=\"2\">B</td></tr><tr><td>1</td><td>2</td><td>3</td>"
      "</tr></table>");
  EXPECT_EQ(
      DetectHeaderRows(spans, state("<table><tr><td>A</td><td colspan=\"3\">B</td></tr></table>")),
      1u);
  EXPECT_EQ(DetectHeaderRows(upper, state("<table><tr><td>x</td><td>y</td></tr></table>")), 0u);
  // Rowspan expansion.
  const TableState lower = state(
      "<table><tr><td rowspan=\"3\">a</td><td>b</td></tr><tr><td>c</td></tr>"
      "<tr><td>d</td></tr><tr><td>e</td><td>f</td></tr></table>");
  EXPECT_EQ(ExpandHeaderRowsByRowspan(lower.table.rows, 1), 3u);
  EXPECT_EQ(ExpandHeaderRowsByRowspan(lower.table.rows, 0), 0u);
  EXPECT_EQ(ExpandHeaderRowsByRowspan(
                state("<table><tr><td rowspan=\"9\">a</td></tr></table>").table.rows, 1),
            1u);
  // Structure: width, equal columns, boundary rows.
  const TableState three = state("<table><tr><td>a</td><td>b</td><td>c</td></tr></table>");
  EXPECT_TRUE(CanMergeByStructure(upper, upper));
  EXPECT_FALSE(CanMergeByStructure(upper, upper, TableBox{0, 0, 0.5, 1}, TableBox{0, 0, 0.56, 1}));
  EXPECT_TRUE(CanMergeByStructure(upper, upper, TableBox{0, 0, 0.5, 1}, TableBox{0, 0, 0.54, 1}));
  EXPECT_TRUE(CanMergeByStructure(upper, upper, TableBox{0, 0, 0, 1}, TableBox{0, 0, 0.9, 1}));
  EXPECT_FALSE(CanMergeByStructure(three, upper));
  EXPECT_FALSE(BoundaryRowsMatch(upper, three));
}

TEST(PythonStrTest, Repr) {
  EXPECT_EQ(PythonRepr("abc"), "'abc'");
  EXPECT_EQ(PythonRepr("it's"), "\"it's\"");
  EXPECT_EQ(PythonRepr("a\\b"), "'a\\\\b'");
  EXPECT_EQ(PythonRepr("say \"x\""), "'say \"x\"'");
  EXPECT_EQ(PythonRepr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(PythonRepr("tab\there\nnl\rcr"), "'tab\\there\\nnl\\rcr'");
  EXPECT_EQ(PythonRepr(std::string("\x00\x1f\x7f", 3)), "'\\x00\\x1f\\x7f'");
  EXPECT_EQ(PythonRepr("\u00A0\u00AD\u2028\u3000\U000E0001"),
            "'\\xa0\\xad\\u2028\\u3000\\U000e0001'");
  EXPECT_EQ(PythonRepr("中文“引号”é😀"), "'中文“引号”é😀'");
  EXPECT_EQ(PythonRepr("\xff"), "'\uFFFD'");
  EXPECT_EQ(PythonListRepr({}), "[]");
  EXPECT_EQ(PythonListRepr({"it's", "a\\b"}), "[\"it's\", 'a\\\\b']");
}

TEST(PythonStrTest, CharacterClasses) {
  EXPECT_TRUE(IsPythonDigit('7'));
  EXPECT_TRUE(IsPythonDigit(U'\uFF11'));  // full-width 1
  EXPECT_TRUE(IsPythonDigit(U'\u00B2'));  // superscript two: isdigit, not isdecimal
  EXPECT_FALSE(IsPythonDecimal(U'\u00B2'));
  EXPECT_TRUE(IsPythonDigit(U'\u2460'));  // circled one
  EXPECT_FALSE(IsPythonDigit(U'\u4E00'));
  EXPECT_TRUE(IsPythonDecimal(U'\u0663'));  // Arabic-Indic three
  EXPECT_TRUE(IsPythonUpper('A'));
  EXPECT_TRUE(IsPythonUpper(U'\u00C9'));
  EXPECT_TRUE(IsPythonUpper(U'\u2160'));  // Roman numeral one
  EXPECT_FALSE(IsPythonUpper('a'));
  EXPECT_FALSE(IsPythonUpper(U'\u01C5'));  // title case
  EXPECT_FALSE(IsPythonUpper(U'\u4E2D'));
  EXPECT_TRUE(IsPythonAlpha(U'\u8868'));
  EXPECT_TRUE(IsPythonAlpha('z'));
  EXPECT_FALSE(IsPythonAlpha('1'));
  EXPECT_FALSE(IsPythonAlpha('('));
  EXPECT_TRUE(IsPythonPrintable(' '));
  EXPECT_FALSE(IsPythonPrintable(U'\u3000'));
  EXPECT_FALSE(IsPythonPrintable(0x110000));
}

}  // namespace
}  // namespace mineru::pipeline
