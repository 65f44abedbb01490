// SPDX-License-Identifier: Apache-2.0
// The text-block repairs of mineru-vl-utils 1.2.1 (post_process/text_display2inline.py,
// text_inline_spacing.py, text_move_underscores_outside.py): the vectors TV-01 .. TV-05 and the
// regex semantics around them (non-greedy, across lines, Unicode \d and \s), byte pass-through
// and linear time.
#include "pipeline/text_fixes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace mineru::pipeline {
namespace {

std::string Repeat(std::string_view piece, size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

TEST(DisplayToInlineTest, Tv01FormulaBecomesInlineCitationStays) {
  EXPECT_EQ(DisplayToInline("where \\[x^2\\] holds and \\[1, 2\\] cites"),
            "where \\(x^2\\) holds and \\[1, 2\\] cites");
}

TEST(DisplayToInlineTest, Tv02EnDashCitationKept) {
  EXPECT_EQ(DisplayToInline("see \\[3\u20135\\]"), "see \\[3\u20135\\]");
}

TEST(DisplayToInlineTest, CitationCharacterSet) {
  // Hyphen, comma and whitespace of every kind, including newlines and U+3000.
  EXPECT_EQ(DisplayToInline("\\[1-3,\n 7\\]"), "\\[1-3,\n 7\\]");
  EXPECT_EQ(DisplayToInline("\\[2\u30003\\]"), "\\[2\u30003\\]");
  EXPECT_EQ(DisplayToInline("\\[ \\]"), "\\[ \\]");  // whitespace alone matches the class
  // Unicode decimal digits: Arabic-Indic, Devanagari, fullwidth, mathematical bold.
  EXPECT_EQ(DisplayToInline("\\[\u0663\u2013\u0665\\]"), "\\[\u0663\u2013\u0665\\]");
  EXPECT_EQ(DisplayToInline("\\[\u0967, \uff12\\]"), "\\[\u0967, \uff12\\]");
  EXPECT_EQ(DisplayToInline("\\[\U0001D7CF\\]"), "\\[\U0001D7CF\\]");
  // Other dashes, superscript and circled digits, letters: a formula.
  EXPECT_EQ(DisplayToInline("\\[1\u20142\\]"), "\\(1\u20142\\)");  // em dash
  EXPECT_EQ(DisplayToInline("\\[1\u22122\\]"), "\\(1\u22122\\)");  // minus sign
  EXPECT_EQ(DisplayToInline("\\[\u00b2\\]"), "\\(\u00b2\\)");
  EXPECT_EQ(DisplayToInline("\\[\u2460\\]"), "\\(\u2460\\)");
  EXPECT_EQ(DisplayToInline("\\[1a\\]"), "\\(1a\\)");
  EXPECT_EQ(DisplayToInline("\\[1.5\\]"), "\\(1.5\\)");
}

TEST(DisplayToInlineTest, EmptyAndUnmatched) {
  EXPECT_EQ(DisplayToInline(""), "");
  EXPECT_EQ(DisplayToInline("no math"), "no math");
  EXPECT_EQ(DisplayToInline("\\[\\]"), "\\(\\)");  // empty X is no citation
  EXPECT_EQ(DisplayToInline("\\[x"), "\\[x");
  EXPECT_EQ(DisplayToInline("x\\]"), "x\\]");
  EXPECT_EQ(DisplayToInline("\\[a\\] and \\[b"), "\\(a\\) and \\[b");
}

TEST(DisplayToInlineTest, NonGreedyAcrossLinesNotNested) {
  EXPECT_EQ(DisplayToInline("\\[a\\] b \\]"), "\\(a\\) b \\]");
  EXPECT_EQ(DisplayToInline("\\[a\nb\\]"), "\\(a\nb\\)");
  // The first closing pair ends the match; X is not trimmed.
  EXPECT_EQ(DisplayToInline("\\[ \\[x\\] \\]"), "\\( \\[x\\) \\]");
  // A backslash before the opening pair changes nothing: the regex sees `\[` at offset 1.
  EXPECT_EQ(DisplayToInline("\\\\[x\\]"), "\\\\(x\\)");
}

TEST(DisplayToInlineTest, BytesThatAreNotUtf8PassThrough) {
  EXPECT_EQ(DisplayToInline("\xff\xfe \\[\xc3\\] \x80"), "\xff\xfe \\(\xc3\\) \x80");
  EXPECT_EQ(DisplayToInline("\\[1\xe2\x80\\]"), "\\(1\xe2\x80\\)");  // truncated en dash
}

TEST(IsPythonDecimalDigitTest, RunsOfTen) {
  EXPECT_TRUE(IsPythonDecimalDigit('0'));
  EXPECT_TRUE(IsPythonDecimalDigit('9'));
  EXPECT_FALSE(IsPythonDecimalDigit('/'));
  EXPECT_FALSE(IsPythonDecimalDigit(':'));
  EXPECT_TRUE(IsPythonDecimalDigit(0x0660));
  EXPECT_TRUE(IsPythonDecimalDigit(0x0669));
  EXPECT_FALSE(IsPythonDecimalDigit(0x066A));
  EXPECT_TRUE(IsPythonDecimalDigit(0xFF19));
  EXPECT_FALSE(IsPythonDecimalDigit(0xFF1A));
  EXPECT_TRUE(IsPythonDecimalDigit(0x1D7CE));
  EXPECT_TRUE(IsPythonDecimalDigit(0x1D7FF));
  EXPECT_FALSE(IsPythonDecimalDigit(0x1D800));
  EXPECT_TRUE(IsPythonDecimalDigit(0x11F59));  // Kawi (Unicode 15.0)
  EXPECT_FALSE(IsPythonDecimalDigit(0x00B2));  // superscript two is No, not Nd
  EXPECT_FALSE(IsPythonDecimalDigit(0x4E00));
  EXPECT_FALSE(IsPythonDecimalDigit(0x10FFFF));
}

TEST(FixMacroSpacingTest, Tv03OnlyInsideInlineMath) {
  EXPECT_EQ(
      FixMacroSpacing("map \\( f: A \\toB \\) and \\( x \\inS \\), \\( \\topo \\), text \\timesY"),
      "map \\( f: A \\to B \\) and \\( x \\in S \\), \\( \\topo \\), text \\timesY");
}

TEST(FixMacroSpacingTest, EveryMacroAndTheKnownCommands) {
  EXPECT_EQ(FixMacroSpacing("\\(\\congA \\subsetB \\timesC \\tox \\inT\\)"),
            "\\(\\cong A \\subset B \\times C \\to x \\in T\\)");
  EXPECT_EQ(FixMacroSpacing("\\(\\inf \\int_0 \\top\\)"), "\\(\\inf \\int_0 \\top\\)");
  // Two letters, a digit, a non-ASCII letter or nothing after the macro: untouched.
  EXPECT_EQ(FixMacroSpacing("\\(\\toXY \\to1 \\to\u00e9 \\to\\)"),
            "\\(\\toXY \\to1 \\to\u00e9 \\to\\)");
  // A byte that is not UTF-8 after the letter is no letter.
  EXPECT_EQ(FixMacroSpacing("\\(\\tob\xff\\)"), "\\(\\to b\xff\\)");
  EXPECT_EQ(FixMacroSpacing("\\(\\subseteq \\notin \\cong\\)"), "\\(\\subseteq \\notin \\cong\\)");
}

TEST(FixMacroSpacingTest, SegmentsAreNonGreedyAndMayBeEmpty) {
  EXPECT_EQ(FixMacroSpacing("\\( a \\) \\toB \\( \\toC \\)"), "\\( a \\) \\toB \\( \\to C \\)");
  EXPECT_EQ(FixMacroSpacing("\\(\\) \\toB"), "\\(\\) \\toB");
  EXPECT_EQ(FixMacroSpacing("\\(\n\\toB\n\\)"), "\\(\n\\to B\n\\)");
}

TEST(FixMacroSpacingTest, EmptyAndUnterminated) {
  EXPECT_EQ(FixMacroSpacing(""), "");
  EXPECT_EQ(FixMacroSpacing("\\( \\toB"), "\\( \\toB");
  EXPECT_EQ(FixMacroSpacing("\\toB \\)"), "\\toB \\)");
}

TEST(MoveUnderscoresOutsideTest, Tv04RunSplitsTheFormula) {
  EXPECT_EQ(MoveUnderscoresOutside("xxx = \\( \\sigma ___ = \\lambda \\)"),
            "xxx = \\( \\sigma \\) ___ \\( = \\lambda \\)");
}

TEST(MoveUnderscoresOutsideTest, Tv05UnderscoresOnly) {
  EXPECT_EQ(MoveUnderscoresOutside("fill \\( ____ \\) here"), "fill ____ here");
}

TEST(MoveUnderscoresOutsideTest, Runs) {
  EXPECT_EQ(MoveUnderscoresOutside("\\( a __ b \\)"), "\\( a __ b \\)");  // two are no run
  EXPECT_EQ(MoveUnderscoresOutside("\\(___\\)"), "___");
  EXPECT_EQ(MoveUnderscoresOutside("\\( a ______ b \\)"), "\\( a \\) ______ \\( b \\)");
  EXPECT_EQ(MoveUnderscoresOutside("\\(a___b___c\\)"), "\\(a\\) ___ \\(b\\) ___ \\(c\\)");
  EXPECT_EQ(MoveUnderscoresOutside("\\(a___\\)\\(___b\\)"), "\\(a\\) ______ \\(b\\)");
  // Whitespace-only pieces (Python whitespace) are dropped, others keep their spaces.
  EXPECT_EQ(MoveUnderscoresOutside("\\(\u3000___\n\\)"), "___");
  EXPECT_EQ(MoveUnderscoresOutside("\\(a\n___\nb\\)"), "\\(a\n\\) ___ \\(\nb\\)");
}

TEST(MoveUnderscoresOutsideTest, MatchNeedsNonEmptyInner) {
  EXPECT_EQ(MoveUnderscoresOutside(""), "");
  EXPECT_EQ(MoveUnderscoresOutside("\\(\\)"), "\\(\\)");
  // `.+?` skips the closing pair right after the opening one and runs to the next.
  EXPECT_EQ(MoveUnderscoresOutside("\\(\\) ___ \\)"), "\\(\\) \\) ___");
  EXPECT_EQ(MoveUnderscoresOutside("\\( ___ "), "\\( ___ ");
}

TEST(FixTextBlockTest, ChainOrder) {
  // Display -> inline first, so the other two see the formula.
  EXPECT_EQ(FixTextBlock("\\[x \\toB ___ y\\] and \\[1\u20133\\]"),
            "\\(x \\to B \\) ___ \\( y\\) and \\[1\u20133\\]");
  EXPECT_EQ(FixTextBlock(""), "");
  EXPECT_EQ(FixTextBlock("\xff plain \\toB ___"), "\xff plain \\toB ___");
}

TEST(TextFixesTest, MegabyteInputsTakeLinearTime) {
  const std::string unterminated = "\\[" + std::string(1 << 20, 'x');
  const std::string openers = Repeat("\\(\\[", 1 << 18);
  const std::string formulas = Repeat("\\(\\toB ___ c\\) \\[1\u20132\\] ", 1 << 15);
  const std::string underscores = "\\(" + std::string(1 << 20, '_') + "\\)";
  std::string fixed;
  // No bound on time here (tests never assert on time): a scan that is quadratic in its input
  // would not finish these inputs within the test timeout.
  [&] {
    EXPECT_EQ(FixTextBlock(unterminated), unterminated);
    EXPECT_EQ(FixTextBlock(openers), openers);
    fixed = FixTextBlock(formulas);
    EXPECT_EQ(FixTextBlock(underscores), std::string(1 << 20, '_'));
  }();
  EXPECT_EQ(fixed, Repeat("\\(\\to B \\) ___ \\( c\\) \\[1\u20132\\] ", 1 << 15));
}

}  // namespace
}  // namespace mineru::pipeline
