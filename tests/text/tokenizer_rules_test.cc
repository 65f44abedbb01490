// SPDX-License-Identifier: Apache-2.0
// Every encoding and decoding rule on the hand-written fixture tokenizer (ids in
// text_test_util.h): pre-tokenizer pieces, merge order, NFC, added-token flags, special tokens,
// decoding, and the repair of bytes that are not UTF-8.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/pre_tokenizer.h"
#include "text/utf8.h"
#include "text_test_util.h"

namespace mineru::text {
namespace {

using testing::Fixture;
using testing::FixtureJson;
using testing::Ids;
using testing::Load;
using testing::Text;
using Pieces = std::vector<std::string>;

Pieces Split(const PreTokenizer& pre, std::string_view s) {
  std::vector<Span> spans;
  const Status status = pre.Split(s, &spans);
  EXPECT_TRUE(status) << status.error().ToString();
  Pieces pieces;
  for (const Span& span : spans) pieces.emplace_back(s.substr(span.begin, span.end - span.begin));
  return pieces;
}

PreTokenizer PreTokenizerOf(const Json& json) {
  auto pre = PreTokenizer::FromJson(json, "test");
  EXPECT_TRUE(pre) << pre.error().ToString();
  return pre ? std::move(*pre) : PreTokenizer();
}

// The Qwen2 pattern as the fixture carries it (read from the file, as the runtime does).
TEST(PreTokenizerTest, QwenPatternPieces) {
  const PreTokenizer pre = PreTokenizerOf(FixtureJson()["pre_tokenizer"]);
  EXPECT_EQ(Split(pre, "Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(Split(pre, "\nWhat's that sound?"),
            (Pieces{"\n", "What", "'s", " that", " sound", "?"}));
  EXPECT_EQ(Split(pre, "IT'S WE'LL"), (Pieces{"IT", "'S", " WE", "'LL"}));
  EXPECT_EQ(Split(pre, "a  b"), (Pieces{"a", " ", " b"}));
  EXPECT_EQ(Split(pre, "x   "), (Pieces{"x", "   "}));
  EXPECT_EQ(Split(pre, "12345"), (Pieces{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(Split(pre, "a\r\n\r\nb"), (Pieces{"a", "\r\n\r\n", "b"}));
  EXPECT_EQ(Split(pre, "end...\n\n"), (Pieces{"end", "...\n\n"}));
  EXPECT_EQ(Split(pre, " ?!x"), (Pieces{" ?!", "x"}));
  EXPECT_EQ(Split(pre, "  \n  x"), (Pieces{"  \n", " ", " x"}));
  EXPECT_EQ(Split(pre, ""), (Pieces{}));
}

// Oniguruma's \s includes U+0085 and excludes U+FEFF (JavaScript's does the opposite).
TEST(PreTokenizerTest, WhitespaceIsOniguruma) {
  const PreTokenizer pre = PreTokenizerOf(FixtureJson()["pre_tokenizer"]);
  EXPECT_EQ(Split(pre, "a\u0085\u0085b"), (Pieces{"a", "\u0085", "\u0085b"}));
  EXPECT_EQ(Split(pre, "a\uFEFF\uFEFFb"), (Pieces{"a", "\uFEFF\uFEFF", "b"}));
  EXPECT_EQ(Split(pre, "\u3000\u3000x"), (Pieces{"\u3000", "\u3000x"}));
  EXPECT_EQ(Split(pre, "\u200B\u200Bx"), (Pieces{"\u200B\u200B", "x"}));  // ZWSP is not space
}

TEST(PreTokenizerTest, StringPatternAndGpt2ByteLevel) {
  const PreTokenizer dash = PreTokenizerOf(Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"String": "-"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})"));
  EXPECT_EQ(Split(dash, "a-b--c-"), (Pieces{"a", "-", "b", "-", "-", "c", "-"}));
  const PreTokenizer gpt2 =
      PreTokenizerOf(Json::parse(R"({"type": "ByteLevel", "add_prefix_space": false})"));
  EXPECT_EQ(Split(gpt2, "Hello world's 123  x"),
            (Pieces{"Hello", " world", "'s", " 123", " ", " x"}));
  // A regex that matches the empty string splits between code points, as tokenizers does.
  const PreTokenizer empty = PreTokenizerOf(Json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "x*"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "use_regex": false}]})"));
  EXPECT_EQ(Split(empty, "aéxxb"), (Pieces{"a", "é", "xx", "b"}));
}

using Ids32 = std::vector<int32_t>;

TEST(TokenizerRulesTest, MergesByRankLeftmostFirst) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t, "abc"), (Ids32{267}));  // b+c (rank 9) before a+b (rank 10), then a+bc
  EXPECT_EQ(Ids(t, "ab"), (Ids32{266}));
  EXPECT_EQ(Ids(t, "aab"), (Ids32{'a', 266}));  // a+b (rank 10) before a+a (rank 12)
  EXPECT_EQ(Ids(t, "aaa"), (Ids32{268, 'a'}));  // equal ranks: the leftmost pair first
  EXPECT_EQ(Ids(t, "aaaa"), (Ids32{268, 268}));
  EXPECT_EQ(Ids(t, " the thing"), (Ids32{258, 256, 'h', 260}));
  EXPECT_EQ(Ids(t, "xyz"), (Ids32{'x', 'y', 'z'}));  // in the vocab, but no merge makes it
  EXPECT_EQ(Ids(t, "\n\n\n"), (Ids32{264, '\n'}));
  EXPECT_EQ(Ids(t, ""), (Ids32{}));
}

// Merges as "a b" strings (older files) mean the same as ["a", "b"] pairs; a pair listed twice
// takes its later rank.
TEST(TokenizerRulesTest, MergeFormats) {
  Json strings = FixtureJson();
  for (Json& merge : strings["model"]["merges"]) {
    merge = merge[0].get<std::string>() + " " + merge[1].get<std::string>();
  }
  const auto t = Load(strings);
  ASSERT_NE(t, nullptr);
  for (const char* text : {"abc", "aab", "aaa", " the thing", "xyz", "é\n\n\n"}) {
    EXPECT_EQ(Ids(*t, text), Ids(Fixture(), text)) << text;
  }
  Json duplicate = FixtureJson();
  duplicate["model"]["merges"].push_back(Json::array({"a", "b"}));
  const auto d = Load(duplicate);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(Ids(*d, "aab"), (Ids32{268, 'b'}));  // a+b now ranks after a+a
}

TEST(TokenizerRulesTest, IgnoreMergesTakesWholeWords) {
  Json json = FixtureJson();
  json["model"]["ignore_merges"] = true;
  const auto t = Load(json);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Ids(*t, "xyz"), (Ids32{271}));
  EXPECT_EQ(Ids(*t, "xyzz"), (Ids32{'x', 'y', 270}));  // "zz" is an added token first
}

// A byte with no vocabulary entry is dropped, or becomes unk_token (fused with fuse_unk).
TEST(TokenizerRulesTest, MissingBytes) {
  Json json = FixtureJson();
  json["model"]["vocab"].erase("q");
  const auto dropped = Load(json);
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(Ids(*dropped, "aqa"), (Ids32{268}));  // its neighbours then meet, and merge
  json["model"]["vocab"]["<unk>"] = 300;
  json["model"]["unk_token"] = "<unk>";
  const auto unk = Load(json);
  ASSERT_NE(unk, nullptr);
  EXPECT_EQ(Ids(*unk, "aqqa"), (Ids32{'a', 300, 300, 'a'}));
  json["model"]["fuse_unk"] = true;
  const auto fused = Load(json);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(Ids(*fused, "aqqa"), (Ids32{'a', 300, 'a'}));
}

TEST(TokenizerRulesTest, NfcBeforeBpe) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t, "\u00e9"), (Ids32{269}));
  EXPECT_EQ(Ids(t, "e\u0301"), (Ids32{269}));
  EXPECT_EQ(Ids(t, "\u00c3\u00a9"), Ids(t, "\u00c3\u00a9"));  // Ã© as text: two code points
  Json json = FixtureJson();
  json["normalizer"] = nullptr;
  const auto raw = Load(json);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(Ids(*raw, "e\u0301"), (Ids32{'e', 0xCC, 0x81}));
}

TEST(TokenizerRulesTest, SpecialTokens) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t, "<|im_start|>hi<|im_end|>"), (Ids32{273, 'h', 'i', 274}));
  EXPECT_EQ(Ids(t, "x<|endoftext|><|endoftext|>"), (Ids32{'x', 272, 272}));
  // Without parse_special they are text; non-special added tokens still match.
  const Ids32 plain = Ids(t, "<|im_start|>hi", /*parse_special=*/false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 273), 0);
  EXPECT_EQ(Text(t, plain), "<|im_start|>hi");
  EXPECT_EQ(Ids(t, "<lstrip>", false), (Ids32{275}));
  // An ignored special match still consumes its text: "start" inside it is not matched.
  const Ids32 inside = Ids(t, "<|im_start|>", false);
  EXPECT_EQ(std::count(inside.begin(), inside.end(), 280), 0);
  EXPECT_EQ(Ids(t, "restart"), (Ids32{'r', 'e', 280}));
  EXPECT_EQ(Ids(t, "<|im_start"), Ids(t, "<|im_start", false));  // incomplete: plain text
}

TEST(TokenizerRulesTest, LstripAndRstrip) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t, "a   <lstrip>b"), (Ids32{'a', 275, 'b'}));
  EXPECT_EQ(Ids(t, "\t\u3000<lstrip>"), (Ids32{275}));
  EXPECT_EQ(Ids(t, "<lstrip>  b"), (Ids32{275, ' ', ' ', 'b'}));  // lstrip keeps the right side
  EXPECT_EQ(Ids(t, "<rstrip> \n b"), (Ids32{276, 'b'}));
  EXPECT_EQ(Ids(t, "a  <rstrip>"), (Ids32{'a', 263, 276}));
  // Whitespace an rstrip token took is not taken again by the next lstrip token.
  EXPECT_EQ(Ids(t, "<rstrip>  <lstrip>"), (Ids32{276, 275}));
}

TEST(TokenizerRulesTest, SingleWord) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t, "[MASK]"), (Ids32{277}));
  EXPECT_EQ(Ids(t, "a [MASK] b"), (Ids32{'a', ' ', 277, ' ', 'b'}));
  EXPECT_EQ(Ids(t, "[MASK],"), (Ids32{277, ','}));
  for (const char* text : {"x[MASK]", "[MASK]_", "\u00e9[MASK]", "[MASK]7", "a\u0301[MASK]"}) {
    const Ids32 ids = Ids(t, text);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 277), 0) << text;
  }
}

// normalized=true tokens match the NFC text (their content normalised too); normalized=false
// ones match the raw text before NFC.
TEST(TokenizerRulesTest, NormalizedFlag) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t, "caf\u00e9"), (Ids32{278}));
  EXPECT_EQ(Ids(t, "cafe\u0301"), (Ids32{278}));
  EXPECT_EQ(Ids(t, "e\u0301!"), (Ids32{279}));
  EXPECT_EQ(Ids(t, "\u00e9!"), (Ids32{269, '!'}));
}

TEST(TokenizerRulesTest, AddedTokenAlsoInVocab) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t, "zz"), (Ids32{270}));
  EXPECT_EQ(Ids(t, "zzz"), (Ids32{270, 'z'}));
  EXPECT_EQ(t.TokenToId("zz"), 270);
  EXPECT_EQ(t.TokenToId("<|im_end|>"), 274);
  EXPECT_EQ(t.TokenToId("Ġthe"), 258);
  EXPECT_FALSE(t.TokenToId("nothing"));
  EXPECT_EQ(t.IdToToken(258), "Ġthe");
  EXPECT_EQ(t.IdToToken(277), "[MASK]");
  EXPECT_FALSE(t.IdToToken(281));
  EXPECT_TRUE(t.IsSpecial(272));
  EXPECT_FALSE(t.IsSpecial(275));
  EXPECT_FALSE(t.IsSpecial(97));
  EXPECT_EQ(t.id_limit(), 281);
  EXPECT_EQ(t.vocab_size(), 272u);
}

TEST(TokenizerRulesTest, Decode) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Text(t, {273, 'h', 'i', 274}), "<|im_start|>hi<|im_end|>");
  EXPECT_EQ(Text(t, {273, 'h', 'i', 274}, /*skip_special=*/true), "hi");
  EXPECT_EQ(Text(t, {275, 272}, true), "<lstrip>");  // only special tokens are skipped
  EXPECT_EQ(Text(t, {258, 32, 10}), " the \n");
  EXPECT_EQ(Text(t, {0xC3, 0xA9}), "\u00e9");
  EXPECT_EQ(Text(t, {0xC3}), "\uFFFD");  // half a character: repaired like any bad UTF-8
  EXPECT_EQ(Text(t, {0xC3, 'x', 0xA9}), "\uFFFDx\uFFFD");
  EXPECT_EQ(Text(t, {278}), "cafe\u0301");  // outside the alphabet: the token's own text
  EXPECT_EQ(Text(t, {}), "");
  for (int32_t bad : {-1, 281, 299, 1 << 30}) {
    auto text = t.Decode(Ids32{'a', bad});
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(text.error().message.find(std::to_string(bad)), std::string::npos);
  }
  std::string bytes;
  EXPECT_TRUE(t.AppendTokenBytes(0xC3, &bytes));
  EXPECT_EQ(bytes, "\xC3");
  EXPECT_FALSE(t.AppendTokenBytes(-5, &bytes));
}

TEST(TokenizerRulesTest, RoundTripIsNfc) {
  const Tokenizer& t = Fixture();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"the thing's 123", "the thing's 123"},
      {"e\u0301t\u00e9 \t\r\n", "\u00e9t\u00e9 \t\r\n"},
      {"<|im_start|>user\nhi<|im_end|>\n", "<|im_start|>user\nhi<|im_end|>\n"},
      {"\u4e2d\u6587 \U0001F600 \u05e9\u05dc\u05d5\u05dd",
       "\u4e2d\u6587 \U0001F600 \u05e9\u05dc\u05d5\u05dd"},
      {std::string("nul\0byte", 8), std::string("nul\0byte", 8)},
  };
  for (const auto& [text, nfc] : cases) EXPECT_EQ(Text(t, Ids(t, text)), nfc);
}

// Bytes that are not UTF-8 are repaired first (each maximal ill-formed subpart becomes one
// U+FFFD), so they tokenize and decode as U+FFFD.
TEST(TokenizerRulesTest, InvalidUtf8IsRepairedFirst) {
  const Tokenizer& t = Fixture();
  EXPECT_EQ(Ids(t,
                "a\xFF\xFE"
                "b"),
            Ids(t, "a\uFFFD\uFFFDb"));
  EXPECT_EQ(Ids(t, "\xE2\x82"), Ids(t, "\uFFFD"));
  EXPECT_EQ(Ids(t, "\xED\xA0\x80"), Ids(t, "\uFFFD\uFFFD\uFFFD"));  // a surrogate
  EXPECT_EQ(Ids(t, "<|im_start|>\xC3"), Ids(t, "<|im_start|>\uFFFD"));
  EXPECT_EQ(Ids(t, "<|im_\xFFstart|>"), Ids(t, "<|im_\uFFFDstart|>"));
  for (const std::string bad : {"x\xF0\x9F\x98", "\xC0\xAF", "e\xCC",
                                "\x80\x80"
                                "abc\xFF"}) {
    EXPECT_EQ(Text(t, Ids(t, bad)), RepairUtf8(bad));
  }
}

}  // namespace
}  // namespace mineru::text
