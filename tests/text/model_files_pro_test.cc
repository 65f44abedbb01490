// SPDX-License-Identifier: Apache-2.0
// The Pro-2605 tokenizer files make-model writes for --config pro / pro-tiny: the 31-token
// added table (ids 151643..151673 in MinerU2.5-Pro-2605's order, all special), a
// tokenizer_config.json without the template, chat_template.jinja, special_tokens_map.json and
// added_tokens.json, all agreeing with tokenizer.json; the 2509 files stay as they were.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "text/chat_template.h"
#include "text/chat_template_file.h"
#include "text/model_files.h"
#include "text_test_util.h"

namespace mineru::text {
namespace {

// MinerU2.5-Pro-2605's table (wilhelmjung/ds4 mineru/mu.c), in id order from 151643.
constexpr std::array<std::string_view, 31> kProTable = {"<|endoftext|>",
                                                        "<|im_start|>",
                                                        "<|im_end|>",
                                                        "<|object_ref_start|>",
                                                        "<|object_ref_end|>",
                                                        "<|box_start|>",
                                                        "<|box_end|>",
                                                        "<|quad_start|>",
                                                        "<|quad_end|>",
                                                        "<|vision_start|>",
                                                        "<|vision_end|>",
                                                        "<|vision_pad|>",
                                                        "<|image_pad|>",
                                                        "<|video_pad|>",
                                                        "<|ref_start|>",
                                                        "<|ref_end|>",
                                                        "<|md_start|>",
                                                        "<|md_end|>",
                                                        "<ched>",
                                                        "<ecel>",
                                                        "<fcel>",
                                                        "<lcel>",
                                                        "<ucel>",
                                                        "<xcel>",
                                                        "<nl>",
                                                        "<|rotate_up|>",
                                                        "<|rotate_down|>",
                                                        "<|rotate_left|>",
                                                        "<|rotate_right|>",
                                                        "<|txt_contd|>",
                                                        "<|paratext|>"};

struct BuiltPro {
  ModelTokenizerFiles files;
  std::unique_ptr<Tokenizer> tokenizer;
};

const BuiltPro* BuildPro() {
  static const BuiltPro* built = []() -> BuiltPro* {
    auto source = ReadJsonFile(testing::kQwenTokenizerPath, kDefaultMaxTokenizerFileBytes);
    if (!source) return nullptr;
    auto files = BuildModelTokenizerFiles(*source, testing::kQwenTokenizerPath, TokenTable::kPro);
    EXPECT_TRUE(files) << files.error().ToString();
    if (!files) return nullptr;
    auto json = ParseJson(files->tokenizer_json, "tokenizer.json");
    if (!json) return nullptr;
    auto tokenizer = Tokenizer::FromJson(*json, "tokenizer.json");
    EXPECT_TRUE(tokenizer) << tokenizer.error().ToString();
    if (!tokenizer) return nullptr;
    return new BuiltPro{std::move(*files), std::move(*tokenizer)};
  }();
  return built;
}

TEST(ProModelFilesTest, TheThirtyOneTokenTable) {
  ASSERT_NE(testing::Qwen(), nullptr);
  const BuiltPro* built = BuildPro();
  ASSERT_NE(built, nullptr);
  const Tokenizer& t = *built->tokenizer;
  const std::vector<AddedToken>& added = t.added_tokens();
  ASSERT_EQ(added.size(), 31u);
  for (size_t i = 0; i < kProTable.size(); ++i) {
    EXPECT_EQ(added[i].id, 151643 + static_cast<int32_t>(i));
    EXPECT_EQ(added[i].content, kProTable[i]);
    EXPECT_TRUE(added[i].special) << kProTable[i];
    EXPECT_EQ(t.TokenToId(kProTable[i]), 151643 + static_cast<int32_t>(i));
    EXPECT_TRUE(t.IsSpecial(151643 + static_cast<int32_t>(i)));
  }
  EXPECT_EQ(t.id_limit(), 151674);
  EXPECT_EQ(t.TokenToId("<|rotate_down|>"), 151669);  // not the 2509 table's order
  EXPECT_EQ(t.TokenToId("<|rotate_right|>"), 151671);
  // Each output token is one id, and decodes back whole.
  const std::string text =
      "<|box_start|>1 2 3 4<|box_end|><|ref_start|>text<|ref_end|>"
      "<|rotate_left|><|txt_contd|><ched>a<fcel>b<nl><|paratext|>";
  const std::vector<int32_t> ids = testing::Ids(t, text);
  for (std::string_view token : {"<|box_start|>", "<|rotate_left|>", "<|txt_contd|>", "<ched>",
                                 "<fcel>", "<nl>", "<|paratext|>"}) {
    EXPECT_EQ(std::count(ids.begin(), ids.end(), *t.TokenToId(token)), 1) << token;
  }
  EXPECT_EQ(testing::Text(t, ids), text);
  // Strings the Pro model writes that are not added tokens stay ordinary text.
  EXPECT_GT(testing::Ids(t, "<|txt_contd_tgt|>").size(), 1u);
}

TEST(ProModelFilesTest, SideFilesAgree) {
  ASSERT_NE(testing::Qwen(), nullptr);
  const BuiltPro* built = BuildPro();
  ASSERT_NE(built, nullptr);
  const ModelTokenizerFiles& files = built->files;
  EXPECT_EQ(files.chat_template_jinja, kQwen2VlChatTemplate);
  EXPECT_EQ(MatchChatTemplate(files.chat_template_jinja), ChatTemplateMatch::kBuiltIn);
  auto config = ParseJson(files.tokenizer_config_json, "tokenizer_config.json");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_FALSE(config->contains("chat_template"));  // it lives in chat_template.jinja
  EXPECT_EQ(config->value("eos_token", ""), "<|im_end|>");
  EXPECT_EQ(config->value("pad_token", ""), "<|endoftext|>");
  const Json& decoder = (*config)["added_tokens_decoder"];
  ASSERT_EQ(decoder.size(), 31u);
  EXPECT_EQ(decoder["151661"].value("content", ""), "<ched>");
  EXPECT_EQ(decoder["151673"].value("special", false), true);
  EXPECT_EQ((*config)["additional_special_tokens"].size(), 30u);

  auto added = ParseJson(files.added_tokens_json, "added_tokens.json");
  ASSERT_TRUE(added) << added.error().ToString();
  ASSERT_EQ(added->size(), 31u);
  for (size_t i = 0; i < kProTable.size(); ++i) {
    EXPECT_EQ((*added)[std::string(kProTable[i])], 151643 + static_cast<int64_t>(i));
  }
  auto map = ParseJson(files.special_tokens_map_json, "special_tokens_map.json");
  ASSERT_TRUE(map) << map.error().ToString();
  EXPECT_EQ((*map)["eos_token"].value("content", ""), "<|im_end|>");
  EXPECT_EQ((*map)["pad_token"].value("content", ""), "<|endoftext|>");
  EXPECT_EQ((*map)["additional_special_tokens"].size(), 30u);
}

// The 2509 table is untouched by the Pro one: same bytes with and without the argument.
TEST(ProModelFilesTest, TheDefaultTableIsStill2509) {
  ASSERT_NE(testing::Qwen(), nullptr);
  auto source = ReadJsonFile(testing::kQwenTokenizerPath, kDefaultMaxTokenizerFileBytes);
  ASSERT_TRUE(source);
  auto plain = BuildModelTokenizerFiles(*source, "q");
  auto explicit_2509 = BuildModelTokenizerFiles(*source, "q", TokenTable::k2509);
  ASSERT_TRUE(plain && explicit_2509);
  EXPECT_EQ(plain->tokenizer_json, explicit_2509->tokenizer_json);
  EXPECT_EQ(plain->tokenizer_config_json, explicit_2509->tokenizer_config_json);
  EXPECT_TRUE(plain->chat_template_jinja.empty());
  EXPECT_TRUE(plain->special_tokens_map_json.empty());
  EXPECT_TRUE(plain->added_tokens_json.empty());
  EXPECT_EQ(ProAddedTokens().size(), 17u);
  EXPECT_EQ(MineruAddedTokens().size(), 15u);
}

}  // namespace
}  // namespace mineru::text
