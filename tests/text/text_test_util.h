// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the tokenizer tests: the hand-written fixture tokenizer
// (tests/data/tokenizer/fixture_tokenizer.json, ids listed below), variants of it built by
// editing its JSON, and the Qwen2 tokenizer.json the parity tests read.
//
// Fixture ids: byte b's token has id b (0..255); 256 "Ġt", 257 "he", 258 "Ġthe", 259 "in",
// 260 "ing", 261 "Ġa", 262 "Ġin", 263 "ĠĠ", 264 "ĊĊ", 265 "bc", 266 "ab", 267 "abc", 268 "aa",
// 269 "é" (spelled "Ã©"), 270 "zz" (also an added token), 271 "xyz" (no merge makes it).
// Merge ranks: Ġ t, h e, Ġt he, i n, in g, Ġ a, Ġ in, Ġ Ġ, Ċ Ċ, b c, a b, a bc, a a, Ã ©, z z.
// Added tokens: 272 <|endoftext|>, 273 <|im_start|>, 274 <|im_end|> (special); 275 <lstrip>
// (lstrip), 276 <rstrip> (rstrip), 277 [MASK] (single_word), 278 "cafe\u0301" (normalized),
// 279 "e\u0301!" (not normalized), 280 "start".
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/mapped_file.h"
#include "text/tokenizer.h"

namespace mineru::text::testing {

inline const std::string kTokenizerData = std::string(MINERU_TEST_DATA_DIR) + "/tokenizer";
inline const std::string kFixturePath = kTokenizerData + "/fixture_tokenizer.json";

inline Json FixtureJson() {
  auto json = ReadJsonFile(kFixturePath, 1 << 20);
  EXPECT_TRUE(json) << json.error().ToString();
  return json ? *json : Json();
}

// Loads a tokenizer from JSON, failing the test (and returning nullptr) when it does not load.
inline std::unique_ptr<Tokenizer> Load(const Json& json, const TokenizerLimits& limits = {}) {
  auto tokenizer = Tokenizer::FromJson(json, "fixture", limits);
  EXPECT_TRUE(tokenizer) << tokenizer.error().ToString();
  return tokenizer ? std::move(*tokenizer) : nullptr;
}

inline const Tokenizer& Fixture() {
  static const std::unique_ptr<Tokenizer> tokenizer = Load(FixtureJson());
  return *tokenizer;
}

inline std::vector<int32_t> Ids(const Tokenizer& tokenizer, std::string_view text,
                                bool parse_special = true) {
  auto ids = tokenizer.Encode(text, parse_special);
  EXPECT_TRUE(ids) << ids.error().ToString();
  return ids ? *ids : std::vector<int32_t>{-1};
}

inline std::string Text(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                        bool skip_special = false) {
  auto text = tokenizer.Decode(ids, skip_special);
  EXPECT_TRUE(text) << text.error().ToString();
  return text ? *text : std::string("<error>");
}

#ifdef MINERU_QWEN_TOKENIZER
// The Qwen2 tokenizer.json (the vocabulary of Qwen2, Qwen2-VL and MinerU2.5), written by the
// CTest fixture text_qwen_tokenizer. Fails the test with the command that creates it when absent.
inline const std::string kQwenTokenizerPath = MINERU_QWEN_TOKENIZER;

inline const Tokenizer* Qwen() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    std::unique_ptr<Tokenizer> loaded;
    auto result = Tokenizer::Load(kQwenTokenizerPath);
    if (result) loaded = std::move(*result);
    return loaded;
  }();
  if (tokenizer == nullptr) {
    ADD_FAILURE() << kQwenTokenizerPath
                  << " does not load; create it with\n  tools/tokenizer-reference/fetch.sh "
                  << std::string(kQwenTokenizerPath).substr(0, kQwenTokenizerPath.rfind('/'))
                  << "\n(ctest runs this as the fixture test text_qwen_tokenizer)";
  }
  return tokenizer.get();
}
#endif

}  // namespace mineru::text::testing
