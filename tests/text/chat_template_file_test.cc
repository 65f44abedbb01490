// SPDX-License-Identifier: Apache-2.0
// The checkpoint's chat template: where it is looked for (chat_template.jinja, then
// chat_template.json, then tokenizer_config.json), how it is matched against the built-in
// Qwen2-VL renderer, and what the loader refuses. Also the rendered forms MinerU's prompts take:
// text only (the cross-page table merge prompt) and several images in message order.
#include "text/chat_template_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../apps/cli_test_util.h"
#include "base/json.h"
#include "text/chat_template.h"

namespace mineru::text {
namespace {

using apps::testing::TestDir;
using apps::testing::WriteFile;

std::optional<ChatTemplateSource> Find(const std::string& dir) {
  auto found = FindChatTemplate(dir);
  EXPECT_TRUE(found) << found.error().ToString();
  return found ? *found : std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Rendering (the built-in renderer, which the checks below vouch for).

TEST(ChatTemplateFormsTest, TextOnly) {
  const std::vector<ChatMessage> messages = {
      {"user", {ChatPart::Text("Please merge the next two tables.")}}};
  EXPECT_EQ(RenderChatTemplate(messages),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nPlease merge the next two tables.<|im_end|>\n"
            "<|im_start|>assistant\n");
  // With the client's own system turn: the same text.
  const std::vector<ChatMessage> with_system = {
      {"system", {ChatPart::Text("You are a helpful assistant.")}}, messages[0]};
  EXPECT_EQ(RenderChatTemplate(with_system), RenderChatTemplate(messages));
}

TEST(ChatTemplateFormsTest, SeveralImagesInMessageOrder) {
  const std::vector<ChatMessage> messages = {
      {"user",
       {ChatPart::Text("A"), ChatPart::Image({1, 2, 2}), ChatPart::Text("B"),
        ChatPart::Image({1, 4, 2}), ChatPart::Text("C")}}};
  // One placeholder per image where it stands, the text verbatim between, no "Picture N:".
  EXPECT_EQ(RenderChatTemplate(messages),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nA<|vision_start|><|image_pad|><|vision_end|>B"
            "<|vision_start|><|image_pad|><|vision_end|>C<|im_end|>\n"
            "<|im_start|>assistant\n");
  const std::vector<ChatMessage> leading = {
      {"user", {ChatPart::Image({1, 2, 2}), ChatPart::Image({1, 2, 2}), ChatPart::Text("\nX")}}};
  EXPECT_EQ(RenderChatTemplate(leading),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"
            "<|vision_start|><|image_pad|><|vision_end|>\nX<|im_end|>\n"
            "<|im_start|>assistant\n");
}

// ---------------------------------------------------------------------------------------------
// Where the template is.

TEST(ChatTemplateFileTest, NoneAnywhere) {
  const std::string dir = TestDir();
  EXPECT_FALSE(Find(dir).has_value());
  WriteFile(dir + "/tokenizer_config.json", "{\"eos_token\": \"<|im_end|>\"}");
  EXPECT_FALSE(Find(dir).has_value());
  WriteFile(dir + "/tokenizer_config.json", "{\"chat_template\": null}");
  EXPECT_FALSE(Find(dir).has_value());
  EXPECT_TRUE(CheckChatTemplate(std::nullopt));
}

TEST(ChatTemplateFileTest, LookupOrder) {
  const std::string dir = TestDir();
  WriteFile(dir + "/tokenizer_config.json", Json{{"chat_template", "from config"}}.dump());
  auto found = Find(dir);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->text, "from config");
  EXPECT_EQ(found->path, dir + "/tokenizer_config.json#chat_template");

  WriteFile(dir + "/chat_template.json", Json{{"chat_template", "from json"}}.dump());
  found = Find(dir);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->text, "from json");
  EXPECT_EQ(found->path, dir + "/chat_template.json#chat_template");

  WriteFile(dir + "/chat_template.jinja", "from jinja\n");
  found = Find(dir);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->text, "from jinja\n");
  EXPECT_EQ(found->path, dir + "/chat_template.jinja");
}

TEST(ChatTemplateFileTest, ChatTemplateJsonWithoutTemplateFallsThrough) {
  const std::string dir = TestDir();
  WriteFile(dir + "/chat_template.json", "{}");
  WriteFile(dir + "/tokenizer_config.json", Json{{"chat_template", "t"}}.dump());
  auto found = Find(dir);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->text, "t");
}

TEST(ChatTemplateFileTest, NamedTemplates) {
  const std::string dir = TestDir();
  WriteFile(dir + "/tokenizer_config.json",
            Json{{"chat_template", Json::array({Json{{"name", "tool_use"}, {"template", "tools"}},
                                                Json{{"name", "default"}, {"template", "plain"}}})}}
                .dump());
  auto found = Find(dir);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->text, "plain");
  WriteFile(
      dir + "/tokenizer_config.json",
      Json{{"chat_template", Json::array({Json{{"name", "tool_use"}, {"template", "x"}}})}}.dump());
  auto missing = FindChatTemplate(dir);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("\"default\""), std::string::npos);
}

TEST(ChatTemplateFileTest, BadFiles) {
  const std::string dir = TestDir();
  const std::string config = dir + "/tokenizer_config.json";
  for (const std::string text : {"{\"chat_template\": 3}", "[1, 2]",
                                 "{\"chat_template\": ", "{\"chat_template\": {\"a\": 1}}"}) {
    WriteFile(config, text);
    auto found = FindChatTemplate(dir);
    ASSERT_FALSE(found) << text;
    EXPECT_EQ(found.error().code, ErrorCode::kCorrupt) << found.error().ToString();
    EXPECT_NE(found.error().message.find(config), std::string::npos) << found.error().message;
  }
  // The byte limit, at its boundary.
  const std::string jinja = dir + "/chat_template.jinja";
  WriteFile(jinja, std::string(kQwen2VlChatTemplate));
  EXPECT_TRUE(FindChatTemplate(dir, kQwen2VlChatTemplate.size()));
  auto big = FindChatTemplate(dir, kQwen2VlChatTemplate.size() - 1);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(big.error().message.find(jinja), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Matching and the loader's rule.

TEST(ChatTemplateMatchTest, BuiltInCompatibleForeign) {
  const std::string qwen(kQwen2VlChatTemplate);
  EXPECT_EQ(MatchChatTemplate(qwen), ChatTemplateMatch::kBuiltIn);
  EXPECT_EQ(MatchChatTemplate(qwen + "\n"), ChatTemplateMatch::kBuiltIn);  // file's newline
  EXPECT_EQ(MatchChatTemplate("\n  " + qwen + "\r\n"), ChatTemplateMatch::kBuiltIn);
  // Reformatted: the same markers, other Jinja around them.
  std::string variant = qwen;
  variant.insert(0, "{#- a comment -#}");
  EXPECT_EQ(MatchChatTemplate(variant), ChatTemplateMatch::kCompatible);
  // Another system prompt, another placeholder, no ChatML: foreign.
  std::string system = qwen;
  system.replace(system.find("You are a helpful assistant."), 5, "Thou art");
  EXPECT_EQ(MatchChatTemplate(system), ChatTemplateMatch::kForeign);
  std::string placeholder = qwen;
  placeholder.replace(placeholder.find("<|image_pad|>"), 13, "<image>");
  EXPECT_EQ(MatchChatTemplate(placeholder), ChatTemplateMatch::kForeign);
  EXPECT_EQ(MatchChatTemplate("{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"),
            ChatTemplateMatch::kForeign);
  EXPECT_EQ(MatchChatTemplate(""), ChatTemplateMatch::kForeign);
  EXPECT_EQ(ChatTemplateMatchName(ChatTemplateMatch::kBuiltIn), "built-in");
  EXPECT_EQ(ChatTemplateMatchName(ChatTemplateMatch::kCompatible), "compatible");
  EXPECT_EQ(ChatTemplateMatchName(ChatTemplateMatch::kForeign), "foreign");
}

TEST(ChatTemplateMatchTest, LoaderRule) {
  EXPECT_TRUE(CheckChatTemplate(ChatTemplateSource{"x.jinja", std::string(kQwen2VlChatTemplate)}));
  std::string variant = "{#- c -#}" + std::string(kQwen2VlChatTemplate);
  EXPECT_TRUE(CheckChatTemplate(ChatTemplateSource{"x.jinja", variant}));
  const Status foreign = CheckChatTemplate(ChatTemplateSource{"m/chat_template.jinja", "{{ x }}"});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(foreign.error().message.find("m/chat_template.jinja"), std::string::npos);
  EXPECT_NE(foreign.error().message.find("Qwen2-VL"), std::string::npos);
}

}  // namespace
}  // namespace mineru::text
