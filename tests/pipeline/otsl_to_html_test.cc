// SPDX-License-Identifier: Apache-2.0
// OTSL -> HTML (mineru-vl-utils 0.1.22 post_process/otsl2html.py); every expectation is derived
// by hand from its four steps.
#include "pipeline/otsl_to_html.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

TEST(OtslToHtmlTest, PlainGrid) {
  EXPECT_EQ(OtslToHtml("<fcel>a<fcel>b<nl><fcel>c<fcel>d<nl>"),
            "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>");
}

TEST(OtslToHtmlTest, ColumnSpan) {
  EXPECT_EQ(OtslToHtml("<fcel>h<lcel><lcel><nl><fcel>a<fcel>b<fcel>c<nl>"),
            "<table><tr><td colspan=\"3\">h</td></tr>"
            "<tr><td>a</td><td>b</td><td>c</td></tr></table>");
}

TEST(OtslToHtmlTest, RowSpan) {
  EXPECT_EQ(OtslToHtml("<fcel>x<fcel>a<nl><ucel><fcel>b<nl><ucel><fcel>c<nl>"),
            "<table><tr><td rowspan=\"3\">x</td><td>a</td></tr>"
            "<tr><td>b</td></tr><tr><td>c</td></tr></table>");
}

TEST(OtslToHtmlTest, TwoDimensionalSpan) {
  // x spans 2 columns (<lcel> to its right) and 2 rows (<ucel> below); <xcel> is covered.
  EXPECT_EQ(OtslToHtml("<fcel>x<lcel><fcel>a<nl><ucel><xcel><fcel>b<nl><fcel>c<fcel>d<fcel>e<nl>"),
            "<table><tr><td rowspan=\"2\" colspan=\"2\">x</td><td>a</td></tr>"
            "<tr><td>b</td></tr><tr><td>c</td><td>d</td><td>e</td></tr></table>");
}

TEST(OtslToHtmlTest, XcelRunsCountTowardBothSpans) {
  // Row span counts <ucel>/<xcel> below, column span <lcel>/<xcel> to the right.
  EXPECT_EQ(OtslToHtml("<fcel>x<xcel><nl><xcel><xcel><nl>"),
            "<table><tr><td rowspan=\"2\" colspan=\"2\">x</td></tr><tr></tr></table>");
}

TEST(OtslToHtmlTest, EmptyCellSpans) {
  EXPECT_EQ(OtslToHtml("<ecel><lcel><nl>"), "<table><tr><td colspan=\"2\"></td></tr></table>");
}

TEST(OtslToHtmlTest, RaggedRowsPaddedWithEmptyCells) {
  EXPECT_EQ(OtslToHtml("<fcel>a<fcel>b<fcel>c<nl><fcel>d<nl>"),
            "<table><tr><td>a</td><td>b</td><td>c</td></tr>"
            "<tr><td>d</td><td></td><td></td></tr></table>");
  // The last row needs no trailing <nl>.
  EXPECT_EQ(OtslToHtml("<fcel>a<fcel>b<nl><fcel>c"),
            "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td></td></tr></table>");
}

TEST(OtslToHtmlTest, EscapesAndTrimsCellText) {
  EXPECT_EQ(OtslToHtml("<fcel> a & b <fcel><x> \"q\" 'p'<nl>"),
            "<table><tr><td>a &amp; b</td>"
            "<td>&lt;x&gt; &quot;q&quot; &#x27;p&#x27;</td></tr></table>");
  // Known client behaviour (MinerU issue #3520): existing entities are escaped again.
  EXPECT_EQ(OtslToHtml("<fcel>&lt;<nl>"), "<table><tr><td>&amp;lt;</td></tr></table>");
  // Inline LaTeX is left alone.
  EXPECT_EQ(OtslToHtml("<fcel>\\( x^2 \\)<nl>"), "<table><tr><td>\\( x^2 \\)</td></tr></table>");
}

TEST(OtslToHtmlTest, WhitespaceOnlyPiecesDropped) {
  // The " \n " after the second <fcel> is no text, and newlines between rows are ignored.
  EXPECT_EQ(OtslToHtml("<fcel>  a  <fcel> \n <nl>\n<fcel>b<ecel><nl>\n"),
            "<table><tr><td>a</td><td></td></tr><tr><td>b</td><td></td></tr></table>");
  // Python's strip() also removes Unicode spaces such as U+3000 and U+00A0.
  EXPECT_EQ(OtslToHtml("<fcel>\u3000中文\u00a0<nl>"), "<table><tr><td>中文</td></tr></table>");
}

TEST(OtslToHtmlTest, EcelIgnoresFollowingText) {
  EXPECT_EQ(OtslToHtml("<ecel>lost<fcel>kept<nl>"),
            "<table><tr><td></td><td>kept</td></tr></table>");
}

TEST(OtslToHtmlTest, UncoveredSpanTokensBecomeEmptyCells) {
  EXPECT_EQ(OtslToHtml("<lcel><fcel>a<nl>"), "<table><tr><td></td><td>a</td></tr></table>");
  // The padding <ecel> above a <ucel> spans down like any cell.
  EXPECT_EQ(OtslToHtml("<fcel>a<nl><ucel><ucel><nl>"),
            "<table><tr><td rowspan=\"2\">a</td><td rowspan=\"2\"></td></tr><tr></tr></table>");
}

TEST(OtslToHtmlTest, LaterCellOverwritesOverlappingSpan) {
  EXPECT_EQ(OtslToHtml("<fcel>A<lcel><nl><ucel><fcel>B<nl>"),
            "<table><tr><td rowspan=\"2\" colspan=\"2\">A</td></tr><tr><td>B</td></tr></table>");
}

TEST(OtslToHtmlTest, TextAfterNewlineLosesAlignmentAsInTheClient) {
  // The client's stream rebuild expects a row to start right after <nl>; "b" breaks that and
  // every later text piece is dropped.
  EXPECT_EQ(OtslToHtml("<fcel>a<nl>b<fcel>c<nl>"),
            "<table><tr><td>a</td></tr><tr><td></td></tr></table>");
  // A repeated <nl> makes no empty row but shifts the later texts by one row.
  EXPECT_EQ(OtslToHtml("<fcel>a<nl><nl><fcel>b<nl><fcel>c<nl>"),
            "<table><tr><td>a</td></tr><tr><td></td></tr><tr><td>b</td></tr></table>");
}

TEST(OtslToHtmlTest, EmptyTables) {
  EXPECT_EQ(OtslToHtml(""), "");
  EXPECT_EQ(OtslToHtml("   \n"), "");
  EXPECT_EQ(OtslToHtml("<nl><nl>"), "");
  EXPECT_EQ(OtslToHtml("no tokens at all"), "");
  EXPECT_EQ(OtslToHtml("<lcel><ucel><nl><xcel><lcel>"), "");  // no cell starts anywhere
  EXPECT_EQ(OtslToHtml("<ecel><nl>"), "<table><tr><td></td></tr></table>");
}

TEST(OtslToHtmlTest, PartialTokensAreText) {
  EXPECT_EQ(OtslToHtml("<fcel><fce<nl>"), "<table><tr><td>&lt;fce</td></tr></table>");
}

TEST(OtslToHtmlTest, OversizedGridFails) {
  std::string otsl;
  for (int i = 0; i < 2100; ++i) otsl += "<fcel>x<nl>";
  for (int i = 0; i < 2100; ++i) otsl += "<ecel>";
  Result<std::string> html = ConvertOtslToHtml(otsl);
  ASSERT_FALSE(html);
  EXPECT_EQ(html.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(OtslToHtml(otsl), otsl);  // unconvertible content comes back as it was
}

TEST(OtslToHtmlTest, RandomTokenSoupNeverCrashesAndStaysUtf8) {
  const std::vector<std::string> alphabet = {
      "<nl>", "<fcel>", "<ecel>", "<lcel>", "<ucel>", "<xcel>", "a",  "b c",    " ",   "\n",
      "&",    "<",      ">",      "'",      "\"",     "é",      "中", "\u3000", "<fc", "el>"};
  std::mt19937 rng(20250919);
  for (int iter = 0; iter < 500; ++iter) {
    std::string otsl;
    int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) otsl += alphabet[rng() % alphabet.size()];
    Result<std::string> html = ConvertOtslToHtml(otsl);
    ASSERT_TRUE(html) << otsl;
    EXPECT_TRUE(text::IsValidUtf8(*html)) << otsl;
    if (!html->empty()) {
      EXPECT_TRUE(html->starts_with("<table><tr>")) << otsl;
      EXPECT_TRUE(html->ends_with("</tr></table>")) << otsl;
    }
  }
  // Bytes that are not UTF-8 are carried through without crashing.
  EXPECT_EQ(OtslToHtml("<fcel>\xff\xfe<nl>"), "<table><tr><td>\xff\xfe</td></tr></table>");
}

}  // namespace
}  // namespace mineru::pipeline
