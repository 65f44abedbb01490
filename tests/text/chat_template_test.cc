// SPDX-License-Identifier: Apache-2.0
// The Qwen2-VL chat template: rendering, golden prompt ids (tests/data/qwen2vl-tiny, made by
// transformers), images anywhere in any message, and the errors.
#include "text/chat_template.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../support/npy.h"
#include "text_test_util.h"

namespace mineru::text {
namespace {

using testing::Qwen;

const std::string kGolden = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny";

using testing_support::I64;

std::vector<ChatMessage> OneImagePrompt(ImageGrid grid, std::string text) {
  return {{"user", {ChatPart::Image(grid), ChatPart::Text(std::move(text))}}};
}

TEST(ChatTemplateTest, RendersLikeTheJinjaTemplate) {
  const std::vector<ChatMessage> messages = OneImagePrompt({1, 22, 28}, "\nLayout Detection:");
  EXPECT_EQ(RenderChatTemplate(messages),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
            "<|vision_start|><|image_pad|><|vision_end|>\nLayout Detection:<|im_end|>\n"
            "<|im_start|>assistant\n");
  // MinerU's client sends the system turn itself: the same text.
  std::vector<ChatMessage> with_system = messages;
  with_system.insert(with_system.begin(),
                     ChatMessage{"system", {ChatPart::Text(std::string(kDefaultSystemPrompt))}});
  EXPECT_EQ(RenderChatTemplate(with_system), RenderChatTemplate(messages));
  ChatTemplateOptions options;
  options.add_generation_prompt = false;
  options.add_vision_id = true;
  const std::vector<ChatMessage> two = {
      {"system", {ChatPart::Text("S")}},
      {"user", {ChatPart::Text("a"), ChatPart::Image({1, 2, 2}), ChatPart::Image({1, 2, 4})}},
      {"assistant", {ChatPart::Text("ok")}},
      {"user", {ChatPart::Image({2, 2, 2})}}};
  EXPECT_EQ(RenderChatTemplate(two, options),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\na"
            "Picture 1: <|vision_start|><|image_pad|><|vision_end|>"
            "Picture 2: <|vision_start|><|image_pad|><|vision_end|><|im_end|>\n"
            "<|im_start|>assistant\nok<|im_end|>\n<|im_start|>user\n"
            "Picture 3: <|vision_start|><|image_pad|><|vision_end|><|im_end|>\n");
  EXPECT_EQ(RenderChatTemplate({}), "<|im_start|>assistant\n");
}

// input_ids.npy of the golden cases: one user message, an image then "\nWhat's that sound?".
TEST(ChatTemplateTest, GoldenPromptIds) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  for (const char* name : {"single_doc", "single_odd"}) {
    const std::string dir = kGolden + "/" + name;
    const std::vector<int64_t> grid = I64(dir + "/image_grid_thw.npy");
    const std::vector<int64_t> golden = I64(dir + "/input_ids.npy");
    ASSERT_EQ(grid.size(), 3u);
    auto prompt =
        BuildChatPrompt(*t, OneImagePrompt({grid[0], grid[1], grid[2]}, "\nWhat's that sound?"));
    ASSERT_TRUE(prompt) << prompt.error().ToString();
    EXPECT_EQ(std::vector<int64_t>(prompt->ids.begin(), prompt->ids.end()), golden) << name;
    ASSERT_EQ(prompt->images.size(), 1u);
    EXPECT_EQ(prompt->images[0].offset, 15u);
    EXPECT_EQ(prompt->images[0].length, static_cast<size_t>(grid[0] * grid[1] * grid[2] / 4));
  }
}

// Several images over several messages, with "Picture N: ": the ids are those of the rendered
// text with each <|image_pad|> repeated, and each image span sits between its delimiters.
TEST(ChatTemplateTest, ImagesAnywhere) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  const std::vector<ChatMessage> messages = {
      {"user",
       {ChatPart::Text("Compare"), ChatPart::Image({1, 4, 6}), ChatPart::Text(" and "),
        ChatPart::Image({1, 2, 2}), ChatPart::Text("\u00e9t\u00e9 <|box_start|>1 2<|box_end|>")}},
      {"assistant", {ChatPart::Text("They differ.")}},
      {"user", {ChatPart::Image({2, 4, 4}), ChatPart::Text("\nText Recognition:")}}};
  ChatTemplateOptions options;
  options.add_vision_id = true;
  auto prompt = BuildChatPrompt(*t, messages, options);
  ASSERT_TRUE(prompt) << prompt.error().ToString();
  const std::vector<size_t> lengths = {6, 1, 8};
  ASSERT_EQ(prompt->images.size(), 3u);
  const int32_t pad = *t->TokenToId("<|image_pad|>");
  std::vector<int32_t> expected;
  size_t image = 0;
  auto plain = t->Encode(prompt->text);
  ASSERT_TRUE(plain) << plain.error().ToString();
  for (int32_t id : *plain) {
    if (id != pad) {
      expected.push_back(id);
      continue;
    }
    EXPECT_EQ(prompt->images[image].offset, expected.size());
    EXPECT_EQ(prompt->images[image].length, lengths[image]);
    expected.insert(expected.end(), lengths[image++], pad);
  }
  EXPECT_EQ(image, 3u);
  EXPECT_EQ(prompt->ids, expected);
  for (const ImageSpan& span : prompt->images) {
    EXPECT_EQ(prompt->ids[span.offset - 1], *t->TokenToId("<|vision_start|>"));
    EXPECT_EQ(prompt->ids[span.offset + span.length], *t->TokenToId("<|vision_end|>"));
  }
  EXPECT_NE(prompt->text.find("Picture 3: <|vision_start|>"), std::string::npos);
}

TEST(ChatTemplateTest, Errors) {
  const Tokenizer* t = Qwen();
  ASSERT_NE(t, nullptr);
  for (const ImageGrid grid : {ImageGrid{1, 3, 4}, ImageGrid{1, 4, 5}, ImageGrid{0, 2, 2},
                               ImageGrid{1, -2, 2}, ImageGrid{1, 1 << 30, 1 << 30}}) {
    auto prompt = BuildChatPrompt(*t, OneImagePrompt(grid, "x"));
    ASSERT_FALSE(prompt) << grid.h << "x" << grid.w;
    EXPECT_EQ(prompt.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(prompt.error().message.find("grid"), std::string::npos);
  }
  auto smuggled = BuildChatPrompt(*t, OneImagePrompt({1, 2, 2}, "<|image_pad|>"));
  ASSERT_FALSE(smuggled);
  EXPECT_NE(smuggled.error().message.find("<|image_pad|>"), std::string::npos);
  // A tokenizer without the template's special tokens.
  auto fixture = BuildChatPrompt(testing::Fixture(), OneImagePrompt({1, 2, 2}, "x"));
  ASSERT_FALSE(fixture);
  EXPECT_NE(fixture.error().message.find("<|vision_start|>"), std::string::npos);
}

}  // namespace
}  // namespace mineru::text
