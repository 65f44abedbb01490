// SPDX-License-Identifier: Apache-2.0
// Table HTML of mineru-vl-utils 1.2.1: OTSL with its pass-through (TV-10 .. TV-13, checked
// against the converter mineru.cpp already uses for 2509), image re-insertion (TV-14), formula
// wrapping (TV-15), Markdown tables (TV-16, TV-17) and the pure-table rule.
#include "pipeline/table_html.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/otsl_to_html.h"

namespace mineru::pipeline {
namespace {

using TokenMap = std::vector<std::pair<std::string, std::string>>;

std::string Repeat(std::string_view piece, size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

// 2049 x 2049 cells: one more row than kMaxOtslGridCells allows.
std::string OversizedOtsl() { return Repeat("<fcel>", 2049) + Repeat("<nl><fcel>", 2048); }

std::string Converted(std::string_view content) {
  Result<std::string> html = TableContentToHtml(content);
  EXPECT_TRUE(html.has_value()) << content;
  return html ? *html : std::string("<error>");
}

TEST(TableContentToHtmlTest, Tv10SpansAndEscaping) {
  const std::string in = "<fcel>A<fcel>B<lcel><nl><fcel>1 & 2<ecel><fcel>\\(x<y\\)<nl>";
  const std::string expected =
      "<table><tr><td>A</td><td colspan=\"2\">B</td></tr><tr><td>1 &amp; 2</td><td></td>"
      "<td>\\(x&lt;y\\)</td></tr></table>";
  EXPECT_EQ(Converted(in), expected);
  EXPECT_EQ(OtslToHtml(in), expected);  // the converter the 2509 profile uses agrees
}

TEST(TableContentToHtmlTest, Tv11ShortRowsPadded) {
  EXPECT_EQ(Converted("<fcel>a<nl><fcel>b<fcel>c<nl>"),
            "<table><tr><td>a</td><td></td></tr><tr><td>b</td><td>c</td></tr></table>");
}

TEST(TableContentToHtmlTest, Tv12ChedIsCellText) {
  EXPECT_EQ(Converted("<fcel>a<ched>b<nl>"), "<table><tr><td>a&lt;ched&gt;b</td></tr></table>");
}

TEST(TableContentToHtmlTest, Tv13PassThroughIsExact) {
  EXPECT_EQ(Converted("<table><tr><td>a</td></tr></table>"), "<table><tr><td>a</td></tr></table>");
  EXPECT_EQ(Converted("<table><tr><td>a</td></tr></table>\n"), "");
  EXPECT_EQ(Converted("plain text no tokens"), "");
  EXPECT_TRUE(IsHtmlTable("<table border=\"1\"></table>"));
  EXPECT_FALSE(IsHtmlTable(" <table></table>"));
  EXPECT_FALSE(IsHtmlTable("<TABLE></TABLE>"));
  EXPECT_FALSE(IsHtmlTable(""));
}

TEST(TableContentToHtmlTest, OversizedOtslFails) {
  EXPECT_FALSE(TableContentToHtml(OversizedOtsl()).has_value());
}

TEST(ReplaceTableImageTokensTest, Tv14PaddedToken) {
  EXPECT_EQ(ReplaceTableImageTokens("<table><tr><td>Logo</td><td>[ AC2G ]</td></tr></table>",
                                    {{"[AC2G]", "data:image/jpeg;base64,QUJD"}}),
            "<table><tr><td>Logo</td><td><img src=\"data:image/jpeg;base64,QUJD\"/></td></tr>"
            "</table>");
}

TEST(ReplaceTableImageTokensTest, WhitespaceCaseAndLiteralMatching) {
  const TokenMap map = {{"[AC2G]", "U"}};
  EXPECT_EQ(ReplaceTableImageTokens("[AC2G][\nAC2G\t][\u3000AC2G\u00a0]", map),
            "<img src=\"U\"/><img src=\"U\"/><img src=\"U\"/>");
  EXPECT_EQ(ReplaceTableImageTokens("[ac2g] [AC 2G] [AC2G [[AC2G]", map),
            "[ac2g] [AC 2G] [AC2G [<img src=\"U\"/>");
  // The inner code is literal: a regex metacharacter in it matches only itself.
  EXPECT_EQ(ReplaceTableImageTokens("[AxB] [A.B]", {{"[A.B]", "U"}}), "[AxB] <img src=\"U\"/>");
}

TEST(ReplaceTableImageTokensTest, GreedyWhitespaceGivesBackForAnInnerSpace) {
  // Inner " X": `\s*` first takes both spaces, then gives one back.
  EXPECT_EQ(ReplaceTableImageTokens("[  X] [X]", {{"[ X]", "U"}}), "<img src=\"U\"/> [X]");
  // An empty inner (token "[]", or a one-character token) matches brackets around whitespace.
  EXPECT_EQ(ReplaceTableImageTokens("[] [ ] [x]", {{"[]", "U"}}),
            "<img src=\"U\"/> <img src=\"U\"/> [x]");
  EXPECT_EQ(ReplaceTableImageTokens("[]", {{"[", "U"}}), "<img src=\"U\"/>");
}

TEST(ReplaceTableImageTokensTest, TokensApplyInOrderToTheTextSoFar) {
  const TokenMap map = {{"[AB]", "x[CD]y"}, {"[CD]", "z"}};
  EXPECT_EQ(ReplaceTableImageTokens("[AB] [CD]", map),
            "<img src=\"x<img src=\"z\"/>y\"/> <img src=\"z\"/>");
}

TEST(ReplaceTableImageTokensTest, EmptyInputsAndForeignBytes) {
  EXPECT_EQ(ReplaceTableImageTokens("", {{"[AB]", "U"}}), "");
  EXPECT_EQ(ReplaceTableImageTokens("[AB]", {}), "[AB]");
  EXPECT_EQ(ReplaceTableImageTokens("\xff[AB]\xfe[", {{"[AB]", "U"}}), "\xff<img src=\"U\"/>\xfe[");
}

TEST(WrapTableFormulasTest, Tv15InlineDisplayAndExistingEq) {
  EXPECT_EQ(WrapTableFormulas("<table><tr><td>\\(a_1\\)</td><td>\\[b\\]</td><td><eq>c</eq> "
                              "\\(d\\)</td></tr></table>"),
            "<table><tr><td><eq>a_1</eq></td><td><eq>b</eq></td><td><eq>c</eq> <eq>d</eq></td>"
            "</tr></table>");
}

TEST(WrapTableFormulasTest, Semantics) {
  EXPECT_EQ(WrapTableFormulas(""), "");
  EXPECT_EQ(WrapTableFormulas("\\(  a \n\\)"), "<eq>a</eq>");  // trimmed
  EXPECT_EQ(WrapTableFormulas("\\(a\nb\\)"), "<eq>a\nb</eq>");
  EXPECT_EQ(WrapTableFormulas("\\( \\)"), "<eq></eq>");
  // X must be non-empty: the closing pair right after the opening one is skipped.
  EXPECT_EQ(WrapTableFormulas("\\(\\)"), "\\(\\)");
  EXPECT_EQ(WrapTableFormulas("\\(\\) \\)"), "<eq>\\)</eq>");
  EXPECT_EQ(WrapTableFormulas("\\(a"), "\\(a");
  // Inline first, then display on the result.
  EXPECT_EQ(WrapTableFormulas("\\[\\(a\\)\\]"), "<eq><eq>a</eq></eq>");
  // Existing <eq> segments, across lines, stay; an unclosed <eq> is plain text.
  EXPECT_EQ(WrapTableFormulas("<eq>\\(x\\)\n</eq>\\(y\\)"), "<eq>\\(x\\)\n</eq><eq>y</eq>");
  EXPECT_EQ(WrapTableFormulas("<eq>\\(a\\)"), "<eq><eq>a</eq>");
  EXPECT_EQ(WrapTableFormulas("\xff\\(\xfe\\)"), "\xff<eq>\xfe</eq>");
}

TEST(MarkdownTableToHtmlTest, Tv16EscapedPipe) {
  EXPECT_EQ(MarkdownTableToHtml("| Year | Sales |\n| --- | ---: |\n| 2020 | 1 |\n| 2021 | 2\\|3 |"),
            "<table><tr><th>Year</th><th>Sales</th></tr><tr><td>2020</td><td>1</td></tr><tr>"
            "<td>2021</td><td>2|3</td></tr></table>");
}

TEST(MarkdownTableToHtmlTest, Tv17ShortRowFails) {
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n| --- | --- |\n| 1 |"), std::nullopt);
}

TEST(MarkdownTableToHtmlTest, SeparatorForms) {
  const std::string header_only = "<table><tr><th>a</th><th>b</th></tr></table>";
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n|:---|---:|"), header_only);
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n|---|---|"), header_only);
  EXPECT_EQ(MarkdownTableToHtml("a | b\n--- | :---:"), header_only);
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n| -- | --- |"), std::nullopt);     // 2 dashes
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n| --- |"), std::nullopt);          // one cell
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n| --- | --- | |"), std::nullopt);  // empty cell
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n| --- | x |"), std::nullopt);
  EXPECT_EQ(MarkdownTableToHtml("| a | b | c |\n| --- | --- |"), std::nullopt);  // counts
}

TEST(MarkdownTableToHtmlTest, RowsAndCells) {
  EXPECT_EQ(MarkdownTableToHtml(""), std::nullopt);
  EXPECT_EQ(MarkdownTableToHtml(" \n "), std::nullopt);
  EXPECT_EQ(MarkdownTableToHtml("| a | b |"), std::nullopt);
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n\n| --- | --- |"), std::nullopt);  // blank line
  EXPECT_EQ(MarkdownTableToHtml("a b\n| --- | --- |"), std::nullopt);
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n| --- | --- |\nfoo"), std::nullopt);
  // Escapes: `\|` is a pipe, other backslashes stay; the header's escaped pipe is one cell.
  EXPECT_EQ(MarkdownTableToHtml("| a \\| b | c\\d |\n| --- | --- |\n| x\\ | y |"),
            "<table><tr><th>a | b</th><th>c\\d</th></tr><tr><td>x\\</td><td>y</td></tr></table>");
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n| --- | --- |\n| x \\| y |"), std::nullopt);
  // HTML escaping with quotes.
  EXPECT_EQ(MarkdownTableToHtml("| <b> | \"q\" |\n| --- | --- |\n| a&b | 'c' |"),
            "<table><tr><th>&lt;b&gt;</th><th>&quot;q&quot;</th></tr><tr><td>a&amp;b</td>"
            "<td>&#x27;c&#x27;</td></tr></table>");
}

TEST(MarkdownTableToHtmlTest, PythonLineBoundariesAndWhitespace) {
  const std::string one_row =
      "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr>"
      "</table>";
  EXPECT_EQ(MarkdownTableToHtml("  | a | b |\r\n| --- | --- |\u2028| 1 | 2 |\n"), one_row);
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\x1e| --- | --- |\x0b| 1 | 2 |"), one_row);
  EXPECT_EQ(MarkdownTableToHtml("|\u3000a | b\u00a0|\n| --- | --- |\n| 1 | 2 |"), one_row);
  // \r\n is one boundary, \n\r two (so an empty line).
  EXPECT_EQ(MarkdownTableToHtml("| a | b |\n\r| --- | --- |"), std::nullopt);
  EXPECT_EQ(MarkdownTableToHtml("| \xff | b |\n|---|---|"),
            "<table><tr><th>\xff</th><th>b</th></tr></table>");
}

TEST(PureTableToHtmlTest, Rule) {
  EXPECT_EQ(PureTableToHtml(""), "");
  EXPECT_EQ(PureTableToHtml(" \n\t"), "");
  // HTML: trimmed, any ASCII case.
  EXPECT_EQ(PureTableToHtml("  <TABLE><tr><td>x</td></tr></Table>\n"),
            "<TABLE><tr><td>x</td></tr></Table>");
  // Markdown (TV-16) before OTSL.
  EXPECT_EQ(PureTableToHtml("| Year | Sales |\n| --- | ---: |\n| 2020 | 1 |\n| 2021 | 2\\|3 |"),
            "<table><tr><th>Year</th><th>Sales</th></tr><tr><td>2020</td><td>1</td></tr><tr>"
            "<td>2021</td><td>2|3</td></tr></table>");
  EXPECT_EQ(PureTableToHtml("| a | b |\n| --- | --- |\n| <fcel> | x |"),
            "<table><tr><th>a</th><th>b</th></tr><tr><td>&lt;fcel&gt;</td><td>x</td></tr></table>");
  // TV-17's content is neither Markdown table nor OTSL.
  EXPECT_EQ(PureTableToHtml("| a | b |\n| --- | --- |\n| 1 |"), "");
  EXPECT_EQ(PureTableToHtml("\n<fcel>a<fcel>b<nl>\n"),
            "<table><tr><td>a</td><td>b</td></tr></table>");
  EXPECT_EQ(PureTableToHtml("<nl><nl>"), "");       // tokens but no cell
  EXPECT_EQ(PureTableToHtml("<ched>a"), "");        // not an OTSL token
  EXPECT_EQ(PureTableToHtml(OversizedOtsl()), "");  // conversion error
  EXPECT_EQ(PureTableToHtml("just words"), "");
}

TEST(ProcessTableContentTest, TheTableBlockSteps) {
  const TokenMap map = {{"[KT7Z]", "data:image/jpeg;base64,QQ=="}};
  EXPECT_EQ(ProcessTableContent("<fcel>[ KT7Z ]<fcel>\\(a<b\\)<nl>", map, true),
            "<table><tr><td><img src=\"data:image/jpeg;base64,QQ==\"/></td><td><eq>a&lt;b</eq>"
            "</td></tr></table>");
  EXPECT_EQ(ProcessTableContent("<fcel>\\(a\\)<nl>", {}, false),
            "<table><tr><td>\\(a\\)</td></tr></table>");
  EXPECT_EQ(ProcessTableContent("<table><td>[KT7Z]</td></table>", map, false),
            "<table><td><img src=\"data:image/jpeg;base64,QQ==\"/></td></table>");
  // A failed conversion keeps the raw text, which still gets the images.
  const std::string raw = OversizedOtsl() + "[KT7Z]";
  EXPECT_EQ(ProcessTableContent(raw, map, true),
            OversizedOtsl() + "<img src=\"data:image/jpeg;base64,QQ==\"/>");
}

TEST(TableHtmlTest, MegabyteInputsTakeLinearTime) {
  const std::string brackets = Repeat("[ ", 1 << 19);
  const std::string spaces = "[" + std::string(1 << 20, ' ') + "x";
  const std::string formulas = "<eq>" + Repeat("\\(", 1 << 19);
  const std::string rows = "| a | b |\n| --- | --- |\n" + Repeat("| 1 | 2 |\n", 1 << 17);
  // No bound on time here (tests never assert on time): a scan that is quadratic in its input
  // would not finish these inputs within the test timeout.
  EXPECT_EQ(ReplaceTableImageTokens(brackets, {{"[ X]", "U"}, {"[AB]", "V"}}), brackets);
  EXPECT_EQ(ReplaceTableImageTokens(spaces, {{"[ ]", "U"}}), spaces);  // inner " "
  EXPECT_EQ(WrapTableFormulas(formulas), formulas);
  std::optional<std::string> html = MarkdownTableToHtml(rows);
  ASSERT_TRUE(html.has_value());
  EXPECT_EQ(html->size(), std::string("<table><tr><th>a</th><th>b</th></tr></table>").size() +
                              (1 << 17) * std::string("<tr><td>1</td><td>2</td></tr>").size());
}

}  // namespace
}  // namespace mineru::pipeline
