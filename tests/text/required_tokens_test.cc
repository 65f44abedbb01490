// SPDX-License-Identifier: Apache-2.0
// The added-token checks: required tokens present and special (the error names every missing
// one), and added_tokens.json / tokenizer_config.json agreeing with tokenizer.json. Built on the
// fixture tokenizer (text_test_util.h) with MinerU-style tokens appended to its added tokens.
#include "text/required_tokens.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../apps/cli_test_util.h"
#include "text_test_util.h"

namespace mineru::text {
namespace {

using apps::testing::TestDir;
using apps::testing::WriteFile;

// The fixture plus <|box_start|> (281, special), <ched> (282, special), <nl> (283, not special).
Json WithMineruTokens() {
  Json json = testing::FixtureJson();
  int id = 281;
  for (const auto& [content, special] : std::vector<std::pair<std::string, bool>>{
           {"<|box_start|>", true}, {"<ched>", true}, {"<nl>", false}}) {
    json["added_tokens"].push_back({{"id", id++},
                                    {"content", content},
                                    {"single_word", false},
                                    {"lstrip", false},
                                    {"rstrip", false},
                                    {"normalized", false},
                                    {"special", special}});
  }
  return json;
}

const Tokenizer& Mineru() {
  static const std::unique_ptr<Tokenizer> tokenizer = testing::Load(WithMineruTokens());
  return *tokenizer;
}

TEST(RequiredTokensTest, PresentAndSpecial) {
  const std::vector<std::string_view> required = {"<|box_start|>", "<ched>", "<|im_end|>"};
  EXPECT_TRUE(CheckRequiredTokens(Mineru(), required, "the pro profile", "m/tokenizer.json"));
  EXPECT_TRUE(CheckRequiredTokens(Mineru(), {}, "nothing", "m/tokenizer.json"));
}

TEST(RequiredTokensTest, MissingTokenIsNamed) {
  const std::vector<std::string_view> required = {"<|box_start|>", "<|paratext|>"};
  const Status status =
      CheckRequiredTokens(Mineru(), required, "the pro profile", "m/tokenizer.json");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(status.error().message,
            "m/tokenizer.json: no added token <|paratext|> (the pro profile needs it)");
  // Every missing token, in the order asked.
  const std::vector<std::string_view> several = {"<|txt_contd|>", "<ched>", "<|paratext|>"};
  const Status both = CheckRequiredTokens(Mineru(), several, "the pro profile", "t.json");
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().message,
            "t.json: no added token <|txt_contd|> <|paratext|> (the pro profile needs them)");
}

TEST(RequiredTokensTest, NotSpecialIsNamed) {
  const std::vector<std::string_view> required = {"<nl>"};
  const Status status = CheckRequiredTokens(Mineru(), required, "the 2509 profile", "t.json");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message,
            "t.json: added token <nl> is not marked special (the 2509 profile needs it special)");
}

// A string the vocabulary spells as an ordinary token is not an added token.
TEST(RequiredTokensTest, VocabularyTokenIsNotAnAddedToken) {
  const std::vector<std::string_view> required = {"xyz"};
  ASSERT_TRUE(Mineru().TokenToId("xyz").has_value());
  EXPECT_FALSE(CheckRequiredTokens(Mineru(), required, "a test", "t.json"));
}

TEST(AddedTokenFilesTest, AgreeingFiles) {
  const std::string dir = TestDir();
  EXPECT_TRUE(CheckAddedTokenFiles(dir, Mineru()));  // neither file
  WriteFile(dir + "/added_tokens.json", "{\"<|box_start|>\": 281, \"<nl>\": 283}");
  WriteFile(dir + "/tokenizer_config.json",
            Json{{"added_tokens_decoder",
                  {{"282", {{"content", "<ched>"}, {"special", true}}},
                   {"283", {{"content", "<nl>"}, {"special", false}}}}}}
                .dump());
  EXPECT_TRUE(CheckAddedTokenFiles(dir, Mineru()));
  // tokenizer_config.json without a decoder is fine.
  WriteFile(dir + "/tokenizer_config.json", "{\"eos_token\": \"<|im_end|>\"}");
  EXPECT_TRUE(CheckAddedTokenFiles(dir, Mineru()));
}

TEST(AddedTokenFilesTest, Disagreements) {
  auto fails = [](const std::string& file, const std::string& text,
                  const std::vector<std::string>& parts) {
    const std::string dir = TestDir();
    WriteFile(dir + "/" + file, text);
    const Status status = CheckAddedTokenFiles(dir, Mineru());
    ASSERT_FALSE(status) << text;
    EXPECT_NE(status.error().message.find(dir + "/" + file), std::string::npos)
        << status.error().message;
    for (const std::string& part : parts) {
      EXPECT_NE(status.error().message.find(part), std::string::npos)
          << part << " in " << status.error().message;
    }
  };
  fails("added_tokens.json", "{\"<ched>\": 281}", {"<ched>", "281", "282"});
  fails("added_tokens.json", "{\"<|paratext|>\": 300}", {"<|paratext|>", "no such added token"});
  fails("added_tokens.json", "{\"<ched>\": \"282\"}", {"<ched>", "integer"});
  fails("added_tokens.json", "[1]", {"JSON object"});
  fails("added_tokens.json", "{", {"JSON"});
  fails("tokenizer_config.json",
        Json{{"added_tokens_decoder", {{"282", {{"content", "<nl>"}}}}}}.dump(),
        {"<nl>", "<ched>"});
  fails("tokenizer_config.json",
        Json{{"added_tokens_decoder", {{"283", {{"content", "<nl>"}, {"special", true}}}}}}.dump(),
        {"<nl>", "is special here but not special in tokenizer.json"});
  fails("tokenizer_config.json", Json{{"added_tokens_decoder", {{"x1", Json::object()}}}}.dump(),
        {"\"x1\" is not an id"});
  fails("tokenizer_config.json", Json{{"added_tokens_decoder", {{"-3", Json::object()}}}}.dump(),
        {"\"-3\""});
  fails("tokenizer_config.json", Json{{"added_tokens_decoder", {{"999", Json::object()}}}}.dump(),
        {"added_tokens_decoder[999]"});
  fails("tokenizer_config.json", Json{{"added_tokens_decoder", {{"282", 5}}}}.dump(),
        {"expected an object"});
  fails("tokenizer_config.json", Json{{"added_tokens_decoder", Json::array()}}.dump(),
        {"'added_tokens_decoder' must be an object"});
}

}  // namespace
}  // namespace mineru::text
