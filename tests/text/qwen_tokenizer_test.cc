// SPDX-License-Identifier: Apache-2.0
// The tokenizer on the real Qwen2 vocabulary (151,643 BPE tokens, the vocabulary of Qwen2,
// Qwen2-VL and MinerU2.5): the ids transformers' own tests assert, identical ids to the reference
// implementation on every string of tests/data/tokenizer/qwen_expected.jsonl, and
// decode(encode(s)) = NFC(s).
#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "text/utf8.h"
#include "text_test_util.h"

namespace mineru::text {
namespace {

using testing::Qwen;

struct Expectation {
  std::string text;
  std::vector<int32_t> ids;
};

const std::vector<Expectation>& Expectations() {
  static const std::vector<Expectation> all = [] {
    std::vector<Expectation> out;
    std::ifstream in(testing::kTokenizerData + "/qwen_expected.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      auto json = ParseJson(line, "qwen_expected.jsonl");
      if (!json) break;
      out.push_back(
          {(*json)["text"].get<std::string>(), (*json)["ids"].get<std::vector<int32_t>>()});
    }
    return out;
  }();
  return all;
}

std::string Nfc(const std::string& s) {
  utf8proc_uint8_t* raw = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
      &raw, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::string out(reinterpret_cast<const char*>(raw), n < 0 ? 0 : static_cast<size_t>(n));
  std::free(raw);
  return out;
}

std::string Show(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) {
    s += ' ';
    s += std::to_string(id);
  }
  return s;
}

// transformers' Qwen2 tokenizer tests and the MinerU prompt of the specification.
TEST(QwenTokenizerTest, KnownIds) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  const std::vector<std::pair<std::string, std::vector<int32_t>>> known = {
      {"system", {8948}},
      {"\n", {198}},
      {"You", {2610}},
      {" are", {525}},
      {" a", {264}},
      {" helpful", {10950}},
      {" assistant", {17847}},
      {".", {13}},
      {"user", {872}},
      {"assistant", {77091}},
      {"What", {3838}},
      {"'s", {594}},
      {" that", {429}},
      {" sound", {5112}},
      {"?", {30}},
      {"\nText Recognition:", {198, 1178, 47598, 25}},
      {"\nWhat's that sound?", {198, 3838, 594, 429, 5112, 30}},
      {"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n",
       {151644, 8948, 198, 2610, 525, 264, 10950, 17847, 13, 151645, 198}},
  };
  for (const auto& [text, ids] : known) EXPECT_EQ(testing::Ids(*t, text), ids) << text;
  EXPECT_EQ(t->vocab_size(), 151643u);
  EXPECT_EQ(t->TokenToId("<|endoftext|>"), 151643);
  EXPECT_EQ(t->TokenToId("<|image_pad|>"), 151655);
}

TEST(QwenTokenizerTest, SameIdsAsTheReference) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  const std::vector<Expectation>& all = Expectations();
  ASSERT_GE(all.size(), 5000u) << "tests/data/tokenizer/qwen_expected.jsonl is incomplete";
  int mismatches = 0;
  for (const Expectation& e : all) {
    auto ids = t->Encode(e.text);
    ASSERT_TRUE(ids) << ids.error().ToString();
    if (*ids == e.ids) continue;
    if (++mismatches <= 10) {
      ADD_FAILURE() << "text " << Json(e.text).dump() << "\n  reference:" << Show(e.ids)
                    << "\n  ours:     " << Show(*ids);
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << all.size() << " strings";
}

TEST(QwenTokenizerTest, DecodeOfEncodeIsNfc) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  int mismatches = 0;
  for (const Expectation& e : Expectations()) {
    auto text = t->Decode(e.ids);
    ASSERT_TRUE(text) << text.error().ToString();
    if (*text != Nfc(e.text) && ++mismatches <= 10) {
      ADD_FAILURE() << Json(e.text).dump() << " decodes to " << Json(*text).dump();
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// Not UTF-8: every maximal ill-formed subpart becomes U+FFFD before anything else.
TEST(QwenTokenizerTest, InvalidUtf8) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  for (const std::string bad :
       {"abc\xFF", "\xC3(", "e\xCC", "\xF0\x9F\x98 smile", "\xED\xA0\x80 surrogate",
        "<|im_end|>\xE4\xB8", "caf\xC3\xA9\xC3", "\x80\x80\x80", "\xF8\x88\x80\x80\x80"}) {
    const std::string repaired = RepairUtf8(bad);
    EXPECT_EQ(testing::Ids(*t, bad), testing::Ids(*t, repaired)) << Json(repaired).dump();
    EXPECT_EQ(testing::Text(*t, testing::Ids(*t, bad)), Nfc(repaired));
  }
}

// Special tokens written in the text: recognised by default, ordinary text with
// parse_special=false (transformers' split_special_tokens).
TEST(QwenTokenizerTest, SplitSpecialTokens) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(testing::Ids(*t, "<|im_start|>", false),
            (std::vector<int32_t>{27, 91, 318, 4906, 91, 29}));
  EXPECT_EQ(testing::Text(*t, {151644, 872, 151645}, /*skip_special=*/true), "user");
}

}  // namespace
}  // namespace mineru::text
