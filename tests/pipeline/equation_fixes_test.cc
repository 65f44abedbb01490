// SPDX-License-Identifier: Apache-2.0
// The equation repairs of mineru-vl-utils 0.1.22 post_process (step 3 of post_process/__init__.py),
// each on small hand-checked inputs.
#include "pipeline/equation_fixes.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

TEST(PythonStripTest, StripsPythonWhitespace) {
  EXPECT_EQ(PythonStrip(" \t\n a b \r\f\v"), "a b");
  EXPECT_EQ(PythonStrip("\u3000\u00a0x\u2003\x1c"), "x");
  EXPECT_EQ(PythonStrip("   "), "");
  EXPECT_EQ(PythonStrip("中"), "中");
  EXPECT_FALSE(IsPythonSpace(0x200B));  // zero-width space is not whitespace
}

TEST(CountDelimitersTest, FollowsTheClientRegexes) {
  EXPECT_EQ(CountLeftDelimiters("\\left( \\left\\{ \\left. \\left\\langle"), 4u);
  // \left) and \left/ are not in the counting regex.
  EXPECT_EQ(CountLeftDelimiters("\\left) \\left/"), 0u);
  EXPECT_EQ(CountRightDelimiters("\\right) \\right\\} \\right. \\right\\rangle"), 4u);
  // `\right` followed by any character counts, newline excepted.
  EXPECT_EQ(CountRightDelimiters("\\rightarrow \\right/ \\right\n"), 2u);
}

TEST(FixLeftRightTest, BalancedInputUnchanged) {
  EXPECT_EQ(FixLeftRight("  \\left( x \\right)  "), "  \\left( x \\right)  ");
  EXPECT_EQ(FixLeftRight("x + y"), "x + y");
}

TEST(FixLeftRightTest, UnmatchedLeftGetsRightDot) {
  EXPECT_EQ(FixLeftRight("\\left( x"), "\\left( \\right. x");
  EXPECT_EQ(FixLeftRight(" \\left\\{ a \\left[ b \\right] "),
            "\\left\\{ \\right. a \\left[ b \\right]");
}

TEST(FixLeftRightTest, UnmatchedRightGetsLeftDot) {
  EXPECT_EQ(FixLeftRight("a \\right] b"), "a \\left. \\right] b");
  EXPECT_EQ(FixLeftRight("\\left. x \\right) \\right|"), "\\left. x \\right)\\left. \\right|");
}

TEST(FixLeftRightTest, OnlyTrimsWhenNothingPairs) {
  // "\rightarrow" counts as a right delimiter, so the fix runs, finds no valid token and
  // returns the trimmed input.
  EXPECT_EQ(FixLeftRight("  a \\rightarrow b  "), "a \\rightarrow b");
}

TEST(FixLeftRightTest, PairsFollowTheClientTable) {
  // \lvert closes with \right\lvert in the client's table, not with \right\rvert.
  EXPECT_EQ(FixLeftRight("\\left\\lvert x \\right\\rvert \\left("),
            "\\left\\lvert \\right. x \\left. \\right\\rvert\\left( \\right.");
  // \left) is not counted and not split out, but as a whole piece the matcher pairs it with
  // \right(.
  EXPECT_EQ(FixLeftRight("\\left)\\right(\\right]"), "\\left)\\right(\\left. \\right]");
  EXPECT_EQ(FixLeftRight("\\left) a \\right( \\right]"),
            "\\left) a \\left. \\right(\\left. \\right]");
}

TEST(FixLeftRightTest, UnequalArrayCountsLeftAlone) {
  EXPECT_EQ(FixLeftRight("\\begin{array}{l} \\left( a"), "\\begin{array}{l} \\left( a");
}

TEST(FixLeftRightTest, BalancesPerArrayCell) {
  // Fragments are trimmed and rejoined without the separators' surrounding spaces.
  EXPECT_EQ(FixLeftRight("\\begin{array}{l} \\left( a \\\\ b \\end{array}"),
            "\\begin{array}{l}\\left( \\right. a\\\\b\\end{array}");
  // Each cell is paired on its own: the \left( of cell 0 and the \right) of cell 1 do not pair;
  // the fragment after the array is a cell of its own.
  EXPECT_EQ(
      FixLeftRight("\\begin{array}{cc} \\left( a & b \\right) \\\\ c & d \\end{array} \\left["),
      "\\begin{array}{cc}\\left( \\right. a&b \\left. \\right)\\\\c&d\\end{array}\\left[ \\right.");
}

TEST(FixLeftRightTest, NestedArraysUseInnermostCell) {
  // The inner array's two cells are paired on their own; the outer cell 1 holds "\right)".
  const std::string in =
      "\\begin{array}{cc} x & \\begin{array}{c} \\left[ p \\\\ q \\right] \\end{array} "
      "\\right) \\\\ y & z \\end{array}";
  EXPECT_EQ(FixLeftRight(in),
            "\\begin{array}{cc}x&\\begin{array}{c}\\left[ \\right. p\\\\q \\left. \\right]"
            "\\end{array}\\left. \\right)\\\\y&z\\end{array}");
}

TEST(FixLeftRightTest, UnmatchedEndArrayIsSkipped) {
  // \end{array} before \begin{array}: the counts are equal, the stray end is ignored.
  EXPECT_EQ(FixLeftRight("a \\end{array} \\left( b \\begin{array}{c} c"),
            "a\\end{array}\\left( b\\begin{array}{c}c");
}

TEST(RemoveDoubleSubscriptsTest, RemovesPairs) {
  EXPECT_EQ(RemoveDoubleSubscripts("x_{i}_{j}"), "x");
  EXPECT_EQ(RemoveDoubleSubscripts("x_{a} _ {b}+y"), "x+y");
  EXPECT_EQ(RemoveDoubleSubscripts("x_{a_{1}}_{b}"), "x");  // one nesting level
  EXPECT_EQ(RemoveDoubleSubscripts("a_{1}_{2}_{3}"), "a_{3}");
}

TEST(RemoveDoubleSubscriptsTest, KeepsEverythingElse) {
  EXPECT_EQ(RemoveDoubleSubscripts("x_{i}^{2}"), "x_{i}^{2}");
  EXPECT_EQ(RemoveDoubleSubscripts("x_i_j"), "x_i_j");
  EXPECT_EQ(RemoveDoubleSubscripts("x_{a_{b_{c}}}_{d}"), "x_{a_{b_{c}}}_{d}");  // two levels
  EXPECT_EQ(RemoveDoubleSubscripts("x_{a"), "x_{a");
}

TEST(FixColonEqualsTest, Replaces) {
  EXPECT_EQ(FixColonEquals("a \\coloneqq b \\eqqcolon c"), "a := b =: c");
}

TEST(FixSizedDelimitersTest, EveryCommandAndDelimiter) {
  const std::vector<std::string> commands = {
      "\\big", "\\bigl", "\\bigr", "\\bigm", "\\bigg", "\\biggl", "\\biggr", "\\biggm",
      "\\Big", "\\Bigl", "\\Bigr", "\\Bigm", "\\Bigg", "\\Biggl", "\\Biggr", "\\Biggm"};
  const std::vector<std::pair<std::string, std::string>> delimiters = {{"(", "("},
                                                                       {")", ")"},
                                                                       {"\\{", "\\{"},
                                                                       {"\\}", "\\}"},
                                                                       {"|", "|"},
                                                                       {"\\|", "\\|"},
                                                                       {"[", "["},
                                                                       {"]", "]"},
                                                                       {"\\langle", "\\langle "},
                                                                       {"\\rangle", "\\rangle "}};
  for (const std::string& cmd : commands) {
    for (const auto& [d, replacement] : delimiters) {
      for (const std::string space : {"", " "}) {
        std::string in = "a" + cmd + space + "{" + d + "}b";
        EXPECT_EQ(FixSizedDelimiters(in), "a" + cmd + replacement + "b") << in;
      }
    }
  }
}

TEST(FixSizedDelimitersTest, OtherFormsUntouched) {
  EXPECT_EQ(FixSizedDelimiters("\\big  {(}"), "\\big  {(}");  // two spaces
  EXPECT_EQ(FixSizedDelimiters("\\big{x}"), "\\big{x}");
  EXPECT_EQ(FixSizedDelimiters("\\bigx{(}"), "\\bigx{(}");
  EXPECT_EQ(FixSizedDelimiters("\\big{(}"), "\\big(");
  EXPECT_EQ(FixSizedDelimiters("\\Big {\\langle}x\\Big{\\rangle}"),
            "\\Big\\langle x\\Big\\rangle ");
}

TEST(FixSizedDelimitersTest, BigTimes) {
  EXPECT_EQ(FixSizedDelimiters("\\bigtimes_{i} A_i"), "\\times_{i} A_i");
}

TEST(SpaceLessThanTest, AddsSpace) {
  EXPECT_EQ(SpaceLessThan("a<b<c"), "a< b< c");
  EXPECT_EQ(SpaceLessThan("a \\leq b"), "a \\leq b");
}

TEST(RemoveUnbalancedBracesTest, DropsUnpaired) {
  EXPECT_EQ(RemoveUnbalancedBraces("{a}}"), "{a}");
  EXPECT_EQ(RemoveUnbalancedBraces("{{a}"), "{a}");
  EXPECT_EQ(RemoveUnbalancedBraces("}{"), "");
  EXPECT_EQ(RemoveUnbalancedBraces("\\frac{a}{b"), "\\frac{a}b");
}

TEST(RemoveUnbalancedBracesTest, EscapedBracesIgnored) {
  EXPECT_EQ(RemoveUnbalancedBraces("\\{a\\}}"), "\\{a\\}");
  EXPECT_EQ(RemoveUnbalancedBraces("\\{ x"), "\\{ x");
  EXPECT_EQ(RemoveUnbalancedBraces("\\\\{a}"), "\\\\{a}");    // even backslashes: a real brace
  EXPECT_EQ(RemoveUnbalancedBraces("\\\\{a"), "\\\\a");       // ... which is unpaired
  EXPECT_EQ(RemoveUnbalancedBraces("\\\\\\{a"), "\\\\\\{a");  // odd: escaped
}

TEST(FixEquationTest, AppliesTheStepsInOrder) {
  EXPECT_EQ(FixEquation("\\left( x_{a}_{b} \\coloneqq \\big{(} < }"),
            "\\left( \\right. x := \\big( <  ");
  EXPECT_EQ(FixEquation("E = mc^{2}"), "E = mc^{2}");
}

TEST(FixEquationTest, RandomInputNeverCrashesAndStaysUtf8) {
  const std::vector<std::string> alphabet = {"\\left(",
                                             "\\right)",
                                             "\\left[",
                                             "\\right]",
                                             "\\left.",
                                             "\\right.",
                                             "\\left\\{",
                                             "\\right\\}",
                                             "\\left|",
                                             "\\right\\|",
                                             "\\rightarrow",
                                             "\\begin{array}{cc}",
                                             "\\end{array}",
                                             "&",
                                             "\\\\",
                                             " ",
                                             "x",
                                             "_{a}",
                                             "_{b_{c}}",
                                             "{",
                                             "}",
                                             "\\{",
                                             "<",
                                             "\\big{(}",
                                             "\\Biggm {]}",
                                             "\\bigtimes",
                                             "\\coloneqq",
                                             "é",
                                             "\u3000",
                                             "中"};
  std::mt19937 rng(7);
  for (int iter = 0; iter < 500; ++iter) {
    std::string latex;
    int n = static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) latex += alphabet[rng() % alphabet.size()];
    std::string fixed = FixEquation(latex);
    EXPECT_TRUE(text::IsValidUtf8(fixed)) << latex;
    EXPECT_EQ(RemoveUnbalancedBraces(fixed), fixed) << latex;  // braces end up balanced
  }
  // Bytes that are not UTF-8 do not crash either.
  EXPECT_EQ(FixEquation("\\left(\xff"), "\\left( \\right.\xff");
  EXPECT_EQ(CountRightDelimiters("\\right\xff"), 1u);
}

}  // namespace
}  // namespace mineru::pipeline
