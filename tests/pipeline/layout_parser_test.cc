// SPDX-License-Identifier: Apache-2.0
// The layout answer parser (mineru-vl-utils 0.1.22 mineru_client.py) and the per-block request
// choices (structs.py, DEFAULT_PROMPTS, DEFAULT_SAMPLING_PARAMS),
// against hand-derived expectations: separators, rotate tokens, coordinates, labels, the
// table-coverage rule, and malformed, truncated and random answers.
#include "pipeline/layout_parser.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "pipeline/block_requests.h"

namespace mineru::pipeline {
namespace {

std::string Region(std::string_view coords, std::string_view label,
                   std::string_view rotate = "<|rotate_up|>") {
  return "<|box_start|>" + std::string(coords) + "<|box_end|><|ref_start|>" + std::string(label) +
         "<|ref_end|>" + std::string(rotate);
}

ContentBlock Expect(BlockType type, double x1, double y1, double x2, double y2,
                    std::optional<int> angle = 0) {
  ContentBlock b;
  b.type = type;
  b.bbox = {x1, y1, x2, y2};
  b.angle = angle;
  return b;
}

std::vector<ContentBlock> Parse(std::string_view text, std::vector<std::string>* warnings) {
  return ParseLayout(text, warnings);
}

TEST(LayoutParserTest, NewlineSpaceAndNoSeparatorsGiveTheSameBlocks) {
  const std::string a = Region("030 343 132 397", "title");
  const std::string b = Region("100 400 900 800", "text", "<|rotate_right|>");
  const std::vector<ContentBlock> want = {
      Expect(BlockType::kTitle, 0.030, 0.343, 0.132, 0.397),
      Expect(BlockType::kText, 0.1, 0.4, 0.9, 0.8, 90),
  };
  for (const std::string& text : {a + "\n" + b + "\n", a + " " + b, a + b, a + "\r\n" + b}) {
    std::vector<std::string> warnings;
    EXPECT_EQ(Parse(text, &warnings), want) << text;
    EXPECT_TRUE(warnings.empty()) << text;
  }
}

TEST(LayoutParserTest, EveryRotateToken) {
  const std::string text = Region("0 0 10 10", "text", "<|rotate_up|>") +
                           Region("0 0 10 10", "text", "<|rotate_right|>") +
                           Region("0 0 10 10", "text", "<|rotate_down|>") +
                           Region("0 0 10 10", "text", "<|rotate_left|>");
  std::vector<std::string> warnings;
  const std::vector<ContentBlock> blocks = Parse(text, &warnings);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].angle, 0);
  EXPECT_EQ(blocks[1].angle, 90);
  EXPECT_EQ(blocks[2].angle, 180);
  EXPECT_EQ(blocks[3].angle, 270);
  EXPECT_TRUE(warnings.empty());
}

TEST(LayoutParserTest, MissingOrMisplacedRotateKeepsTheBlockWithoutAngle) {
  // No token at all, and a token not right after <|ref_end|> (later grammar: optional token in
  // that exact place; anything else is tail).
  const std::string text = Region("0 0 10 10", "text", "") + "\n" +
                           Region("0 0 10 10", "header", " <|rotate_left|>") +
                           Region("0 0 10 10", "footer", "<|rotate_sideways|>");
  std::vector<std::string> warnings;
  const std::vector<ContentBlock> blocks = Parse(text, &warnings);
  ASSERT_EQ(blocks.size(), 3u);
  for (const ContentBlock& b : blocks) EXPECT_EQ(b.angle, std::nullopt);
  EXPECT_EQ(warnings.size(), 3u);
  EXPECT_EQ(blocks[1].type, BlockType::kHeader);
}

TEST(LayoutParserTest, CoordinateRules) {
  const std::string text = Region("0 0 1000 1000", "text") +               // full page: kept
                           Region("0 0 1001 500", "text") +                // > 1000: dropped
                           Region("900 800 100 200", "table") +            // reversed: swapped
                           Region("20 20 20 30", "text") +                 // zero width: dropped
                           Region("20 30 40 30", "text") +                 // zero height: dropped
                           Region("99999999999999999999 0 1 1", "text") +  // huge: dropped
                           Region("0001 0002\t0003\n0004", "image");       // padding, any \s
  std::vector<std::string> warnings;
  const std::vector<ContentBlock> blocks = Parse(text, &warnings);
  const std::vector<ContentBlock> want = {
      Expect(BlockType::kText, 0.0, 0.0, 1.0, 1.0),
      Expect(BlockType::kTable, 0.1, 0.2, 0.9, 0.8),
      Expect(BlockType::kImage, 0.001, 0.002, 0.003, 0.004),
  };
  EXPECT_EQ(blocks, want);
  EXPECT_EQ(warnings.size(), 4u);
}

TEST(LayoutParserTest, LabelRules) {
  const std::string text = Region("0 0 10 10", "TEXT") +            // lower-cased
                           Region("0 0 10 10", "unknown") +         // -> image
                           Region("0 0 10 10", "inline_formula") +  // dropped silently
                           Region("0 0 10 10", "doc_title") +       // Pro label: dropped
                           Region("0 0 10 10", "t\xc3\xa9xt") +     // non-ASCII: dropped
                           Region("0 0 10 10", "page_footnote");
  std::vector<std::string> warnings;
  const std::vector<ContentBlock> blocks = Parse(text, &warnings);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].type, BlockType::kText);
  EXPECT_EQ(blocks[1].type, BlockType::kImage);
  EXPECT_EQ(blocks[2].type, BlockType::kPageFootnote);
  EXPECT_EQ(warnings.size(), 2u);
}

TEST(LayoutParserTest, EveryTypeOfTheSetParses) {
  for (int t = 0; t < kBlockTypeCount; ++t) {
    const auto type = static_cast<BlockType>(t);
    const std::vector<ContentBlock> blocks = Parse(Region("1 2 3 4", BlockTypeName(type)), nullptr);
    ASSERT_EQ(blocks.size(), 1u) << BlockTypeName(type);
    EXPECT_EQ(blocks[0].type, type == BlockType::kUnknown ? BlockType::kImage : type);
  }
}

TEST(LayoutParserTest, TableCoverageAtTheNinetyPercentBoundary) {
  const std::string text = Region("400 0 500 100", "text") +          // 100% inside: dropped
                           Region("410 0 510 100", "text") +          // exactly 90%: dropped
                           Region("411 0 511 100", "text") +          // 89%: kept
                           Region("0 0 500 500", "table") +           // the table (after some)
                           Region("10 10 20 20", "equation") +        // dropped
                           Region("10 30 20 40", "equation_block") +  // dropped
                           Region("10 50 20 60", "title") +           // other types stay
                           Region("10 70 20 80", "image") +
                           Region("400 0 500 100", "table_caption");
  std::vector<std::string> warnings;
  const std::vector<ContentBlock> blocks = Parse(text, &warnings);
  const std::vector<ContentBlock> want = {
      Expect(BlockType::kText, 0.411, 0.0, 0.511, 0.1),
      Expect(BlockType::kTable, 0.0, 0.0, 0.5, 0.5),
      Expect(BlockType::kTitle, 0.01, 0.05, 0.02, 0.06),
      Expect(BlockType::kImage, 0.01, 0.07, 0.02, 0.08),
      Expect(BlockType::kTableCaption, 0.4, 0.0, 0.5, 0.1),
  };
  EXPECT_EQ(blocks, want);
  EXPECT_TRUE(warnings.empty());
}

TEST(LayoutParserTest, CoverageCountsAnyTableAndOnlyTables) {
  // Two tables each covering half: no single table covers 90%, so the text stays. A text
  // covered by an image stays too.
  const std::string text = Region("0 0 100 100", "table") + Region("100 0 200 100", "table") +
                           Region("50 0 150 100", "text") + Region("300 0 400 100", "image") +
                           Region("300 0 400 100", "text");
  const std::vector<ContentBlock> blocks = Parse(text, nullptr);
  ASSERT_EQ(blocks.size(), 5u);
  EXPECT_EQ(blocks[2].type, BlockType::kText);
  EXPECT_EQ(blocks[4].type, BlockType::kText);
}

TEST(LayoutParserTest, MalformedRegionsAreSkippedAndScanningResumes) {
  const std::string good = Region("1 2 3 4", "text");
  const std::string text = "garbage before " + std::string("<|box_start|>1 2 3<|box_end|>") +
                           "<|ref_start|>text<|ref_end|>\n" + good +
                           "<|box_start|>1 2 3 4<|box_end|><|ref_start|><|ref_end|>" +  // no label
                           "<|box_start|>1 2 3 4<|box_end|>text<|ref_end|>" +  // no ref_start
                           "<|box_start|>a b c d<|box_end|><|ref_start|>text<|ref_end|>" + good +
                           " trailing <|ref_end|> noise <|box_start|>";
  std::vector<std::string> warnings;
  const std::vector<ContentBlock> blocks = Parse(text, &warnings);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0], Expect(BlockType::kText, 0.001, 0.002, 0.003, 0.004));
  EXPECT_EQ(blocks[1], blocks[0]);
  EXPECT_EQ(warnings.size(), 5u);
}

TEST(LayoutParserTest, EmptyAndTextOnlyAnswers) {
  std::vector<std::string> warnings;
  EXPECT_TRUE(Parse("", &warnings).empty());
  EXPECT_TRUE(Parse("no regions here\n", &warnings).empty());
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(Parse("x", nullptr).empty());  // null warnings is allowed
}

TEST(LayoutParserTest, EveryTruncationOfAnAnswerIsSafe) {
  const std::string first = Region("100 100 200 200", "title", "<|rotate_down|>");
  const std::string text = first + "\n" + Region("100 300 900 400", "text") + "\n";
  for (size_t n = 0; n <= text.size(); ++n) {
    std::vector<std::string> warnings;
    const std::vector<ContentBlock> blocks = Parse(text.substr(0, n), &warnings);
    ASSERT_LE(blocks.size(), 2u);
    if (n >= first.size()) {
      ASSERT_GE(blocks.size(), 1u) << n;
      EXPECT_EQ(blocks[0], Expect(BlockType::kTitle, 0.1, 0.1, 0.2, 0.2, 180));
    } else if (!blocks.empty()) {
      // The head is complete but the rotate token is cut: kept without an angle.
      EXPECT_EQ(blocks[0].angle, std::nullopt) << n;
    }
  }
}

TEST(LayoutParserTest, RandomAnswersFromTheGrammarPiecesNeverBreakInvariants) {
  const std::vector<std::string> pieces = {"<|box_start|>",
                                           "<|box_end|>",
                                           "<|ref_start|>",
                                           "<|ref_end|>",
                                           "<|rotate_up|>",
                                           "<|rotate_right|>",
                                           "<|rotate_down|>",
                                           "<|rotate_left|>",
                                           "0",
                                           "1000",
                                           "1001",
                                           "500",
                                           "042",
                                           " ",
                                           "\n",
                                           "\t",
                                           "text",
                                           "table",
                                           "unknown",
                                           "inline_formula",
                                           "equation",
                                           "TITLE",
                                           "<|",
                                           "|>",
                                           "<",
                                           "\xff",
                                           "\xc3",
                                           "99999999999999999999999",
                                           "_",
                                           "list"};
  std::mt19937 rng(20250919);
  for (int iter = 0; iter < 500; ++iter) {
    std::string text;
    const int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      if (rng() % 4 == 0) {
        // A well-formed region now and then, so the parser's accepting paths run too.
        text += Region(std::to_string(rng() % 1100) + " " + std::to_string(rng() % 1100) + " " +
                           std::to_string(rng() % 1100) + " " + std::to_string(rng() % 1100),
                       pieces[rng() % pieces.size()], pieces[rng() % pieces.size()]);
      } else {
        text += pieces[rng() % pieces.size()];
      }
    }
    std::vector<std::string> warnings;
    for (const ContentBlock& b : Parse(text, &warnings)) {
      EXPECT_NE(b.type, BlockType::kUnknown);
      EXPECT_GE(b.bbox[0], 0.0);
      EXPECT_GE(b.bbox[1], 0.0);
      EXPECT_LE(b.bbox[2], 1.0);
      EXPECT_LE(b.bbox[3], 1.0);
      EXPECT_LT(b.bbox[0], b.bbox[2]);
      EXPECT_LT(b.bbox[1], b.bbox[3]);
      if (b.angle) {
        EXPECT_TRUE(*b.angle == 0 || *b.angle == 90 || *b.angle == 180 || *b.angle == 270);
      }
      EXPECT_EQ(b.content, std::nullopt);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Block requests (MINERU.md 2.3, 2.5).

TEST(BlockRequestsTest, SkipListAndCallerTypes) {
  for (int t = 0; t < kBlockTypeCount; ++t) {
    const auto type = static_cast<BlockType>(t);
    const bool skipped =
        type == BlockType::kImage || type == BlockType::kList || type == BlockType::kEquationBlock;
    EXPECT_EQ(IsRecognised(type), !skipped) << BlockTypeName(type);
  }
  const std::vector<BlockType> extra = {BlockType::kHeader, BlockType::kTable};
  EXPECT_FALSE(IsRecognised(BlockType::kHeader, extra));
  EXPECT_FALSE(IsRecognised(BlockType::kTable, extra));
  EXPECT_TRUE(IsRecognised(BlockType::kText, extra));
  EXPECT_FALSE(IsRecognised(BlockType::kImage, extra));
}

TEST(BlockRequestsTest, NotExtractListNames) {
  std::vector<std::string> warnings;
  const std::vector<std::string> names = {"table", "bogus", "table", "page_number"};
  EXPECT_EQ(ParseNotExtractList(names, &warnings),
            (std::vector<BlockType>{BlockType::kTable, BlockType::kPageNumber}));
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(BlockRequestsTest, Prompts) {
  EXPECT_EQ(kLayoutPrompt, "\nLayout Detection:");
  EXPECT_EQ(RecognitionPrompt(BlockType::kTable), "\nTable Recognition:");
  EXPECT_EQ(RecognitionPrompt(BlockType::kEquation), "\nFormula Recognition:");
  for (BlockType t : {BlockType::kText, BlockType::kTitle, BlockType::kCode, BlockType::kAlgorithm,
                      BlockType::kTableCaption, BlockType::kHeader, BlockType::kUnknown,
                      BlockType::kEquationBlock, BlockType::kPhonetic}) {
    EXPECT_EQ(RecognitionPrompt(t), "\nText Recognition:") << BlockTypeName(t);
  }
}

void ExpectSampling(const engine::SamplingParams& p, float presence, float frequency) {
  EXPECT_EQ(p.temperature, 0.0f);
  EXPECT_FLOAT_EQ(p.top_p, 0.01f);
  EXPECT_EQ(p.top_k, 1);
  EXPECT_FLOAT_EQ(p.presence_penalty, presence);
  EXPECT_FLOAT_EQ(p.frequency_penalty, frequency);
  EXPECT_EQ(p.repetition_penalty, 1.0f);
  EXPECT_EQ(p.no_repeat_ngram_size, 100);
}

TEST(BlockRequestsTest, SamplingPresets) {
  ExpectSampling(LayoutSampling(), 0.0f, 0.0f);
  ExpectSampling(RecognitionSampling(BlockType::kTable), 1.0f, 0.005f);
  ExpectSampling(RecognitionSampling(BlockType::kEquation), 1.0f, 0.05f);
  ExpectSampling(RecognitionSampling(BlockType::kText), 1.0f, 0.05f);
  ExpectSampling(RecognitionSampling(BlockType::kCode), 1.0f, 0.05f);
  ExpectSampling(RecognitionSampling(BlockType::kTableCaption), 1.0f, 0.05f);
}

}  // namespace
}  // namespace mineru::pipeline
