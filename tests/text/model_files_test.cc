// SPDX-License-Identifier: Apache-2.0
// The tokenizer files make-model writes: built from the Qwen2 vocabulary, they load back with
// Qwen2-VL's special tokens at their ids, MinerU's tokens after them, the same ids as the source
// for ordinary text, and a tokenizer_config.json that carries the chat template.
#include "text/model_files.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/chat_template.h"
#include "text_test_util.h"

namespace mineru::text {
namespace {

struct Built {
  ModelTokenizerFiles files;
  std::unique_ptr<Tokenizer> tokenizer;
  Json config;
};

const Built* BuildFromQwen() {
  static const Built* built = []() -> Built* {
    auto source = ReadJsonFile(testing::kQwenTokenizerPath, kDefaultMaxTokenizerFileBytes);
    if (!source) return nullptr;
    auto files = BuildModelTokenizerFiles(*source, testing::kQwenTokenizerPath);
    EXPECT_TRUE(files) << files.error().ToString();
    if (!files) return nullptr;
    auto json = ParseJson(files->tokenizer_json, "tokenizer.json");
    EXPECT_TRUE(json) << json.error().ToString();
    if (!json) return nullptr;
    auto tokenizer = Tokenizer::FromJson(*json, "tokenizer.json");
    EXPECT_TRUE(tokenizer) << tokenizer.error().ToString();
    auto config = ParseJson(files->tokenizer_config_json, "tokenizer_config.json");
    EXPECT_TRUE(config) << config.error().ToString();
    if (!tokenizer || !config) return nullptr;
    return new Built{std::move(*files), std::move(*tokenizer), std::move(*config)};
  }();
  return built;
}

TEST(ModelFilesTest, SpecialTokensAndMineruTokens) {
  ASSERT_NE(testing::Qwen(), nullptr);
  const Built* built = BuildFromQwen();
  ASSERT_NE(built, nullptr);
  const Tokenizer& t = *built->tokenizer;
  EXPECT_EQ(t.vocab_size(), 151643u);
  int32_t id = 151643;
  for (std::string_view token : Qwen2VlSpecialTokens()) {
    EXPECT_EQ(t.TokenToId(token), id) << token;
    EXPECT_TRUE(t.IsSpecial(id++));
  }
  EXPECT_EQ(t.TokenToId("<|image_pad|>"), 151655);
  EXPECT_EQ(t.TokenToId("<|box_start|>"), 151648);
  for (std::string_view token : MineruAddedTokens()) EXPECT_EQ(t.TokenToId(token), id++) << token;
  EXPECT_EQ(id, 151672);
  EXPECT_EQ(t.id_limit(), 151672);
  // Layout and table output tokenizes to one id per token.
  const std::string layout =
      "<|box_start|>012 034 567 890<|box_end|><|ref_start|>table<|ref_end|><|rotate_up|>\n"
      "<fcel>a<ecel><lcel><ucel><xcel><nl>";
  const std::vector<int32_t> ids = testing::Ids(t, layout);
  for (std::string_view token :
       {"<|box_start|>", "<|box_end|>", "<|ref_start|>", "<|ref_end|>", "<|rotate_up|>", "<fcel>",
        "<ecel>", "<lcel>", "<ucel>", "<xcel>", "<nl>"}) {
    EXPECT_EQ(std::count(ids.begin(), ids.end(), *t.TokenToId(token)), 1) << token;
  }
  EXPECT_EQ(testing::Text(t, ids), layout);  // MinerU decodes with special tokens kept
}

// Ordinary text: the same ids as the source tokenizer (only added tokens differ).
TEST(ModelFilesTest, OrdinaryTextKeepsItsIds) {
  const Tokenizer* qwen = testing::Qwen();
  ASSERT_NE(qwen, nullptr);
  const Built* built = BuildFromQwen();
  ASSERT_NE(built, nullptr);
  for (const char* text : {"\nText Recognition:", "The response of flow duration curves",
                           "中文文本识别：表格", "e\u0301t\u00e9 \U0001F600  \n\n x",
                           "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"}) {
    EXPECT_EQ(testing::Ids(*built->tokenizer, text), testing::Ids(*qwen, text)) << text;
  }
}

TEST(ModelFilesTest, TokenizerConfig) {
  ASSERT_NE(testing::Qwen(), nullptr);
  const Built* built = BuildFromQwen();
  ASSERT_NE(built, nullptr);
  const Json& config = built->config;
  EXPECT_EQ(config.value("chat_template", ""), kQwen2VlChatTemplate);
  EXPECT_EQ(config.value("eos_token", ""), "<|im_end|>");
  EXPECT_EQ(config.value("pad_token", ""), "<|endoftext|>");
  EXPECT_EQ(config.value("tokenizer_class", ""), "Qwen2Tokenizer");
  EXPECT_TRUE(config["bos_token"].is_null());
  const Json& decoder = config["added_tokens_decoder"];
  ASSERT_EQ(decoder.size(), 29u);
  for (const AddedToken& token : built->tokenizer->added_tokens()) {
    const Json& entry = decoder[std::to_string(token.id)];
    EXPECT_EQ(entry.value("content", ""), token.content);
    EXPECT_EQ(entry.value("special", false), token.special);
  }
  // The tokenizer.json lists its added tokens in id order with tokenizers' field names.
  auto json = ParseJson(built->files.tokenizer_json, "tokenizer.json");
  ASSERT_TRUE(json);
  EXPECT_EQ((*json)["added_tokens"][0].value("id", 0), 151643);
  EXPECT_EQ((*json)["model"]["merges"].size(), 151387u);
}

TEST(ModelFilesTest, SourceMustBeDenseBpe) {
  Json source = testing::FixtureJson();
  source["model"]["vocab"]["<big>"] = 600;  // ids are no longer 0..N-1
  source["added_tokens"] = Json::array();
  auto files = BuildModelTokenizerFiles(source, "small.json");
  ASSERT_FALSE(files);
  EXPECT_NE(files.error().message.find("small.json"), std::string::npos);
  Json broken = testing::FixtureJson();
  broken.erase("model");
  EXPECT_FALSE(BuildModelTokenizerFiles(broken, "broken.json"));
  // A small vocabulary is accepted: the added tokens follow it.
  Json small = testing::FixtureJson();
  small["added_tokens"] = Json::array();
  small["model"]["vocab"].erase("xyz");
  auto ok = BuildModelTokenizerFiles(small, "small.json");
  ASSERT_TRUE(ok) << ok.error().ToString();
  auto reloaded = Tokenizer::FromJson(*ParseJson(ok->tokenizer_json, "t"), "t");
  ASSERT_TRUE(reloaded) << reloaded.error().ToString();
  EXPECT_EQ((*reloaded)->TokenToId("<|endoftext|>"), 271);
}

}  // namespace
}  // namespace mineru::text
