// SPDX-License-Identifier: Apache-2.0
// The equation chain of mineru-vl-utils 1.2.1 (post_process/__init__.py _process_equation, then
// _add_equation_brackets): the vectors TV-06 .. TV-09, the delimiter trim, the array-nesting
// guard, and linear-time behaviour on megabyte formulas.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "pipeline/equation_fixes.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

std::string Repeat(std::string_view piece, size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

// The client's order: the chain, then the bracket wrapping.
std::string ProcessEquation(std::string_view latex) {
  return WrapDisplayEquation(FixEquationPro(latex));
}

TEST(FixEquationProTest, Tv06DelimitersThenChain) {
  EXPECT_EQ(ProcessEquation("\\[a \\coloneqq \\frac{1}{2}\\]"), "\\[\na := \\frac{1}{2}\n\\]");
}

TEST(TrimEquationDelimitersTest, Tv06StepAlone) {
  EXPECT_EQ(TrimEquationDelimiters("  \\[a \\coloneqq b\\]  "), "a \\coloneqq b");
  EXPECT_EQ(TrimEquationDelimiters("\\[\nx\n\\]"), "x");
}

TEST(TrimEquationDelimitersTest, EachSideOnItsOwn) {
  EXPECT_EQ(TrimEquationDelimiters(""), "");
  EXPECT_EQ(TrimEquationDelimiters("\\["), "");
  EXPECT_EQ(TrimEquationDelimiters("\\]"), "");
  EXPECT_EQ(TrimEquationDelimiters("\\[\\]"), "");
  EXPECT_EQ(TrimEquationDelimiters("\\[x"), "x");
  EXPECT_EQ(TrimEquationDelimiters("x\\]"), "x");
  EXPECT_EQ(TrimEquationDelimiters("\\[\\[x\\]\\]"), "\\[x\\]");  // one pair only
  EXPECT_EQ(TrimEquationDelimiters("\u3000\\[ x \\]\u00a0"), "x");
  EXPECT_EQ(TrimEquationDelimiters("\\(x\\)"), "\\(x\\)");
  EXPECT_EQ(TrimEquationDelimiters("\\\\[x"), "\\\\[x");  // starts with `\\`, not `\[`
  EXPECT_EQ(TrimEquationDelimiters("\xff\\]"), "\xff");
}

TEST(FixEquationProTest, Tv07MixedFixes) {
  EXPECT_EQ(ProcessEquation("a<b \\Big{(} x_{1}_{2} \\}"), "\\[\na< b \\Big( x \\}\n\\]");
}

TEST(FixLeftRightGuardedTest, Tv08BrokenArrayNestingLeftAlone) {
  const std::string in = "\\end{array} \\left( a \\begin{array}{c} b";
  EXPECT_EQ(FixLeftRightGuarded(in), in);
  EXPECT_EQ(FixEquationPro(in), in);
  // The unguarded repair (mineru.cpp's 2509 chain) skips the stray \end{array} instead.
  EXPECT_EQ(FixLeftRight(in), "\\end{array}\\left( a\\begin{array}{c}b");
}

TEST(FixLeftRightGuardedTest, Tv09UnmatchedLeft) {
  EXPECT_EQ(FixLeftRightGuarded("\\left( x + y"), "\\left( \\right. x + y");
}

TEST(FixLeftRightGuardedTest, GuardFollowsTheFragments) {
  // Two \begin{array} without a column spec fall into one fragment, which opens one array; the
  // second \end{array} then has none to close.
  const std::string two_in_one =
      "\\begin{array} \\begin{array} y \\end{array} \\end{array} \\left(";
  EXPECT_EQ(FixLeftRightGuarded(two_in_one), two_in_one);
  // Properly nested arrays are repaired exactly as by FixLeftRight().
  const std::string nested =
      "\\begin{array}{cc} x & \\begin{array}{c} \\left[ p \\\\ q \\right] \\end{array} "
      "\\right) \\\\ y & z \\end{array}";
  EXPECT_EQ(FixLeftRightGuarded(nested), FixLeftRight(nested));
  EXPECT_EQ(FixLeftRightGuarded("\\begin{array}{l} \\left( a \\\\ b \\end{array}"),
            "\\begin{array}{l}\\left( \\right. a\\\\b\\end{array}");
}

TEST(FixLeftRightGuardedTest, UnchangedWhenNothingToDo) {
  EXPECT_EQ(FixLeftRightGuarded(""), "");
  EXPECT_EQ(FixLeftRightGuarded("  \\left( x \\right)  "), "  \\left( x \\right)  ");
  // Unequal array counts: unchanged, as before.
  EXPECT_EQ(FixLeftRightGuarded("\\begin{array}{l} \\left( a"), "\\begin{array}{l} \\left( a");
}

TEST(FixEquationProTest, DiffersFromFixEquationOnlyByTrimAndGuard) {
  // Without delimiters and with sound arrays the two chains agree.
  for (const std::string in : {"\\left( x_{a}_{b} \\coloneqq \\big{(} < }", "E = mc^{2}",
                               "\\begin{array}{cc} \\left( a & b \\end{array}"}) {
    EXPECT_EQ(FixEquationPro(in), FixEquation(in)) << in;
  }
  // The display delimiters go first, so \big{[} inside is still repaired.
  EXPECT_EQ(FixEquationPro("\\[\\big{[} x\\]"), "\\big[ x");
  EXPECT_EQ(FixEquationPro(""), "");
}

TEST(WrapDisplayEquationTest, AddsMissingBrackets) {
  EXPECT_EQ(WrapDisplayEquation(" x "), "\\[\nx\n\\]");
  EXPECT_EQ(WrapDisplayEquation("\\[x\\]"), "\\[x\\]");
  EXPECT_EQ(WrapDisplayEquation("\\[x"), "\\[x\n\\]");
  EXPECT_EQ(WrapDisplayEquation("x\\]"), "\\[\nx\\]");
  EXPECT_EQ(WrapDisplayEquation(""), "\\[\n\n\\]");
}

TEST(FixEquationProTest, RandomInputNeverCrashesAndStaysUtf8) {
  const std::vector<std::string> alphabet = {"\\left(",
                                             "\\right)",
                                             "\\left[",
                                             "\\right]",
                                             "\\left.",
                                             "\\right.",
                                             "\\[",
                                             "\\]",
                                             "\\begin{array}{cc}",
                                             "\\begin{array}",
                                             "\\end{array}",
                                             "&",
                                             "\\\\",
                                             " ",
                                             "x",
                                             "_{a}",
                                             "{",
                                             "}",
                                             "\\{",
                                             "<",
                                             "\\Big{(}",
                                             "\\coloneqq",
                                             "\u00e9",
                                             "\u4e2d",
                                             "\u3000",
                                             "\n"};
  std::mt19937 rng(20260813);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> length(0, 40);
  for (int round = 0; round < 3000; ++round) {
    std::string in;
    for (int i = length(rng); i > 0; --i) in += alphabet[pick(rng)];
    std::string out = WrapDisplayEquation(FixEquationPro(in));
    ASSERT_TRUE(text::IsValidUtf8(out)) << in;
    // The guard never does more than the unguarded repair.
    std::string guarded = FixLeftRightGuarded(in);
    ASSERT_TRUE(guarded == in || guarded == FixLeftRight(in)) << in;
  }
}

TEST(FixEquationProTest, MegabyteFormulasTakeLinearTime) {
  // Unbalanced \left with no array; a million-cell array; deep nesting past the work bound.
  const std::string lefts = Repeat("\\left( ", 150000);
  const std::string cells = "\\left( \\begin{array}{c} " + Repeat("a & ", 250000) + "\\end{array}";
  const std::string deep =
      "\\left( " + Repeat("\\begin{array}{c} ", 40000) + Repeat("\\end{array} ", 40000);
  const std::string braces = Repeat("{", 1 << 19) + Repeat("\\", 1 << 19) + "}";
  // The last `{` pairs with the `}` (2^19 backslashes are an even run); the rest go.
  const std::string fixed_braces = braces.substr((1 << 19) - 1);
  std::string fixed_lefts;
  std::string fixed_cells;
  // No bound on time here (tests never assert on time): a scan that is quadratic in its input
  // would not finish these inputs within the test timeout.
  [&] {
    fixed_lefts = FixEquationPro(lefts);
    fixed_cells = FixEquationPro(cells);
    EXPECT_EQ(FixLeftRightGuarded(deep), deep);
    EXPECT_EQ(FixEquationPro(braces), fixed_braces);
  }();
  // Every \left( closed; the whitespace between the pieces goes.
  EXPECT_EQ(fixed_lefts, Repeat("\\left( \\right.", 150000));
  EXPECT_EQ(fixed_cells,
            "\\left( \\right.\\begin{array}{c}" + Repeat("a&", 250000) + "\\end{array}");
}

}  // namespace
}  // namespace mineru::pipeline
