// SPDX-License-Identifier: Apache-2.0
// HtmlEscapeNoQuote, HtmlUnescape and FormatEmbeddedTableHtml against Python's html module and
// MinerU 3.4.4 _format_embedded_html (expected values from CPython 3 html.unescape).
#include "pipeline/html_text.h"

#include <gtest/gtest.h>

#include <string>

namespace mineru::pipeline {
namespace {

TEST(HtmlTextTest, EscapeWithoutQuotes) {
  EXPECT_EQ(HtmlEscapeNoQuote("a<b & c>d \"q\" 'x'"), "a&lt;b &amp; c&gt;d \"q\" 'x'");
  EXPECT_EQ(HtmlEscapeNoQuote(""), "");
}

TEST(HtmlTextTest, UnescapeLikePython) {
  EXPECT_EQ(HtmlUnescape("a &amp; b"), "a & b");
  EXPECT_EQ(HtmlUnescape("&lt;&gt;&quot;&apos;&#39;"), "<>\"''");
  EXPECT_EQ(HtmlUnescape("&amp"), "&");
  EXPECT_EQ(HtmlUnescape("&ampx;"), "&x;");
  EXPECT_EQ(HtmlUnescape("&ltfoo"), "<foo");
  EXPECT_EQ(HtmlUnescape("&apos"), "&apos");
  EXPECT_EQ(HtmlUnescape("&nbsp;x"), "\u00a0x");
  EXPECT_EQ(HtmlUnescape("&#65;&#x42;&#X43"), "ABC");
  EXPECT_EQ(HtmlUnescape("&#0;&#13;&#128;&#x81;"), "\ufffd\r\u20ac\u0081");
  EXPECT_EQ(HtmlUnescape("&#xD800;&#1114112;&#99999999999999;"), "\ufffd\ufffd\ufffd");
  EXPECT_EQ(HtmlUnescape("&#1;&#11;&#x7f;&#xFFFE;&#x10FFFF;&#xFDD0;"), "");
  EXPECT_EQ(HtmlUnescape("&#;&#x;&# 1"), "&#;&#x;&# 1");
  EXPECT_EQ(HtmlUnescape("&"), "&");
  EXPECT_EQ(HtmlUnescape("&&lt;"), "&<");
  EXPECT_EQ(HtmlUnescape("&Lt;&Gt;&GT&QUOT;"), "\u226a\u226b>\"");
  EXPECT_EQ(HtmlUnescape("&verylongnamethatexceedsthirtytwocharacterslimit;"),
            "&verylongnamethatexceedsthirtytwocharacterslimit;");
  EXPECT_EQ(HtmlUnescape("&amp;lt;"), "&lt;");
  EXPECT_EQ(HtmlUnescape("a&b c"), "a&b c");
  EXPECT_EQ(HtmlUnescape("&é;&amp;é"), "&é;&é");
  EXPECT_EQ(HtmlUnescape("&lt\n"), "<\n");
  EXPECT_EQ(HtmlUnescape("no references"), "no references");
}

TEST(HtmlTextTest, UnknownNamedReferencesStay) {
  // Deviation: Python knows every HTML5 name ("&notin;" is U+2209 there).
  EXPECT_EQ(HtmlUnescape("&notin; &alpha;"), "&notin; &alpha;");
}

TEST(HtmlTextTest, TableImageSourcesGetTheImageDirectory) {
  MarkdownOptions options;
  EXPECT_EQ(FormatEmbeddedTableHtml("<img src=\"a.jpg\"/><img src=\"data:image/png;base64,AA\"/>"
                                    "<img src=\"\"/><img data-src=\"b.png\">",
                                    options),
            "<img src=\"images/a.jpg\"/><img src=\"data:image/png;base64,AA\"/><img src=\"\"/>"
            "<img data-src=\"images/b.png\">");
  // A failed match does not hide a later one; an unclosed value stays.
  EXPECT_EQ(FormatEmbeddedTableHtml("src=\"data:x src=\"y\"", options),
            "src=\"data:x src=\"images/y\"");
  EXPECT_EQ(FormatEmbeddedTableHtml("<img src=\"open", options), "<img src=\"open");
  options.image_dir = "";
  EXPECT_EQ(FormatEmbeddedTableHtml("<img src=\"a.jpg\"/>", options), "<img src=\"a.jpg\"/>");
}

TEST(HtmlTextTest, EqTagsBecomeInlineFormulas) {
  MarkdownOptions options;
  EXPECT_EQ(FormatEmbeddedTableHtml("<td><eq>x^2</eq></td><td><eq>a&lt;\nb</eq></td>", options),
            "<td> $x^2$ </td><td> $a<\nb$ </td>");
  // Shortest match; an unclosed tag stays.
  EXPECT_EQ(FormatEmbeddedTableHtml("<eq>a</eq>b</eq><eq>c", options), " $a$ b</eq><eq>c");
  options.inline_left = "\\(";
  options.inline_right = "\\)";
  EXPECT_EQ(FormatEmbeddedTableHtml("<eq></eq>", options), " \\(\\) ");
  EXPECT_EQ(FormatEmbeddedTableHtml("", options), "");
}

}  // namespace
}  // namespace mineru::pipeline
