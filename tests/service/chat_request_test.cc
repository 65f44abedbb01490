// SPDX-License-Identifier: Apache-2.0
// How a chat completions body becomes an engine request (service/chat_request.h): the request
// shapes of mineru-vl-utils 1.2.1's http_client (TV-45: one image, text only, several images
// between text pieces, the gpt-model-id shape), rendered through the chat template exactly; the
// token limits; skip_special_tokens, priority and vllm_xargs.
#include "service/chat_request.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "text/chat_template.h"
#include "tiny_chat.h"

namespace mineru::service {
namespace {

constexpr char kModel[] = "mineru";
constexpr char kSystemTurn[] = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n";
constexpr char kImage[] = "<|vision_start|><|image_pad|><|vision_end|>";
constexpr char kAssistant[] = "<|im_start|>assistant\n";

OpenAiOptions Options() {
  OpenAiOptions options;
  options.model_id = kModel;
  return options;
}

Json ImagePart(const std::string& url) {
  return Json{{"type", "image_url"}, {"image_url", {{"url", url}}}};
}
Json TextPart(const std::string& text) { return Json{{"type", "text"}, {"text", text}}; }

// The client's body around a user content array (mineru-vl-utils 1.2.1 key order and values).
Json ClientBody(Json content, double frequency_penalty = 0.05) {
  return Json{{"model", kModel},
              {"messages",
               {{{"role", "system"}, {"content", "You are a helpful assistant."}},
                {{"role", "user"}, {"content", std::move(content)}}}},
              {"temperature", 0.0},
              {"top_p", 0.01},
              {"top_k", 1},
              {"presence_penalty", 1.0},
              {"frequency_penalty", frequency_penalty},
              {"repetition_penalty", 1.0},
              {"vllm_xargs", {{"no_repeat_ngram_size", 100}, {"debug", false}}},
              {"skip_special_tokens", false}};
}

std::string Rendered(const ChatRequest& chat) {
  return text::RenderChatTemplate(chat.request.messages);
}

ChatRequest Parse(const Json& body) {
  auto parsed = ParseChatRequest(body, Options());
  EXPECT_TRUE(parsed) << parsed.error().ToString() << "\n" << body.dump();
  return parsed ? std::move(*parsed) : ChatRequest{};
}

// The parse error's message ("" when it parsed).
std::string ParseError(const Json& body) {
  auto parsed = ParseChatRequest(body, Options());
  EXPECT_FALSE(parsed) << body.dump();
  return parsed ? std::string() : parsed.error().message;
}

TEST(ChatRequestTest, TV45TableCropWithPriority) {
  Json body = ClientBody(Json::array({ImagePart(testing_support::PatternPngDataUrl(56, 28, 3)),
                                      TextPart("\nTable Recognition:")}),
                         0.005);
  body["priority"] = 3;
  const ChatRequest chat = Parse(body);
  EXPECT_EQ(Rendered(chat), std::string(kSystemTurn) + "<|im_start|>user\n" + kImage +
                                "\nTable Recognition:<|im_end|>\n" + kAssistant);
  ASSERT_EQ(chat.request.images.size(), 1u);
  ASSERT_TRUE(chat.request.images[0].rgb);
  EXPECT_EQ(chat.request.images[0].rgb->width, 56);
  EXPECT_EQ(chat.request.priority, 3);
  const engine::SamplingParams& s = chat.request.sampling;
  EXPECT_EQ(s.temperature, 0.0f);
  EXPECT_EQ(s.top_p, 0.01f);
  EXPECT_EQ(s.top_k, 1);
  EXPECT_EQ(s.presence_penalty, 1.0f);
  EXPECT_EQ(s.frequency_penalty, 0.005f);
  EXPECT_EQ(s.repetition_penalty, 1.0f);
  EXPECT_EQ(s.no_repeat_ngram_size, 100);
  EXPECT_FALSE(chat.request.max_new_tokens);  // MinerU sets no limit
  EXPECT_FALSE(chat.skip_special);
}

TEST(ChatRequestTest, TV45TextOnlyMergeRequestHasNoImages) {
  const std::string prompt = "Please merge the next two tables.\xE2\x80\xA6";
  const ChatRequest chat = Parse(ClientBody(Json::array({TextPart(prompt)})));
  EXPECT_EQ(Rendered(chat),
            std::string(kSystemTurn) + "<|im_start|>user\n" + prompt + "<|im_end|>\n" + kAssistant);
  EXPECT_TRUE(chat.request.images.empty());
  EXPECT_EQ(chat.request.priority, 0);  // merge requests carry none
}

TEST(ChatRequestTest, TV45ImagesBetweenTextPiecesInOrderWithBothLimits) {
  // "A<image>B<image>C" with two images and max_new_tokens 4096.
  Json body = ClientBody(Json::array(
      {TextPart("A"), ImagePart(testing_support::PatternPngDataUrl(56, 28, 3)), TextPart("B"),
       ImagePart(testing_support::PatternPngDataUrl(28, 84, 5)), TextPart("C")}));
  body["max_completion_tokens"] = 4096;
  body["max_tokens"] = 4096;
  const ChatRequest chat = Parse(body);
  EXPECT_EQ(Rendered(chat), std::string(kSystemTurn) + "<|im_start|>user\nA" + kImage + "B" +
                                kImage + "C<|im_end|>\n" + kAssistant);
  ASSERT_EQ(chat.request.images.size(), 2u);
  EXPECT_EQ(chat.request.images[0].rgb->width, 56);  // in order of appearance
  EXPECT_EQ(chat.request.images[1].rgb->width, 28);
  EXPECT_EQ(chat.request.max_new_tokens, 4096);
}

TEST(ChatRequestTest, TextBeforeImagesAndImagesFirstAndNoLabels) {
  const std::string a = testing_support::PatternPngDataUrl(28, 28, 1);
  const std::string b = testing_support::PatternPngDataUrl(56, 56, 2);
  const ChatRequest text_first =
      Parse(ClientBody(Json::array({TextPart("\nLayout Detection:"), ImagePart(a), ImagePart(b)})));
  EXPECT_EQ(Rendered(text_first), std::string(kSystemTurn) + "<|im_start|>user\n" +
                                      "\nLayout Detection:" + kImage + kImage + "<|im_end|>\n" +
                                      kAssistant);
  const ChatRequest images_first =
      Parse(ClientBody(Json::array({ImagePart(b), ImagePart(a), TextPart("x")})));
  EXPECT_EQ(Rendered(images_first), std::string(kSystemTurn) + "<|im_start|>user\n" + kImage +
                                        kImage + "x<|im_end|>\n" + kAssistant);
  ASSERT_EQ(images_first.request.images.size(), 2u);
  EXPECT_EQ(images_first.request.images[0].rgb->width, 56);
  EXPECT_EQ(Rendered(images_first).find("Picture"), std::string::npos);
}

TEST(ChatRequestTest, OldClientDetailKeyAndEmptyContentAreAccepted) {
  // mineru-vl-utils 0.1.22 sent "detail": "high" in its <image> branch.
  Json part = ImagePart(testing_support::PatternPngDataUrl(28, 28, 1));
  part["image_url"]["detail"] = "high";
  EXPECT_EQ(Parse(ClientBody(Json::array({part, TextPart("t")}))).request.images.size(), 1u);
  const ChatRequest empty = Parse(ClientBody(Json::array()));
  EXPECT_EQ(Rendered(empty),
            std::string(kSystemTurn) + "<|im_start|>user\n<|im_end|>\n" + kAssistant);
}

TEST(ChatRequestTest, TV45GptModelIdShapeKeepsSpecialTokens) {
  // For model ids starting with "gpt" the client drops top_k, repetition_penalty and
  // skip_special_tokens.
  Json body = ClientBody(Json::array({TextPart("hi")}));
  for (const char* key : {"top_k", "repetition_penalty", "skip_special_tokens"}) body.erase(key);
  body["model"] = "gpt-4o";
  OpenAiOptions options = Options();
  options.model_id = "gpt-4o";
  auto chat = ParseChatRequest(body, options);
  ASSERT_TRUE(chat) << chat.error().ToString();
  EXPECT_FALSE(chat->skip_special);
  EXPECT_EQ(chat->request.sampling.top_k, engine::SamplingParams{}.top_k);
  EXPECT_EQ(chat->request.sampling.repetition_penalty, 1.0f);
  EXPECT_EQ(chat->request.sampling.temperature, 0.0f);
}

TEST(ChatRequestTest, TokenLimitsSmallerWinsAndBadValuesNameTheField) {
  Json body = ClientBody(Json::array({TextPart("x")}));
  const auto limit = [&](std::optional<Json> completion, std::optional<Json> tokens) {
    Json b = body;
    if (completion) b["max_completion_tokens"] = *completion;
    if (tokens) b["max_tokens"] = *tokens;
    return Parse(b).request.max_new_tokens;
  };
  EXPECT_EQ(limit(Json(8), Json(3)), 3);
  EXPECT_EQ(limit(Json(3), Json(8)), 3);
  EXPECT_EQ(limit(Json(5), std::nullopt), 5);
  EXPECT_EQ(limit(std::nullopt, Json(7)), 7);
  EXPECT_EQ(limit(Json(8.0), std::nullopt), 8);  // 8.0 is an integer to Python clients
  EXPECT_EQ(limit(Json(nullptr), Json(nullptr)), std::nullopt);
  EXPECT_EQ(limit(Json(int64_t{1} << 40), std::nullopt), int64_t{1} << 40);  // engine clamps

  Json zero = body;
  zero["max_completion_tokens"] = 0;
  zero["max_tokens"] = 4;
  EXPECT_EQ(ParseError(zero), "'max_completion_tokens' must be at least 1");
  Json negative = body;
  negative["max_tokens"] = -1;
  EXPECT_EQ(ParseError(negative), "'max_tokens' must be at least 1");
  Json text = body;
  text["max_tokens"] = "8";
  EXPECT_EQ(ParseError(text), "'max_tokens' must be an integer");
  Json fraction = body;
  fraction["max_completion_tokens"] = 2.5;
  EXPECT_EQ(ParseError(fraction), "'max_completion_tokens' must be an integer");
  Json huge = body;
  huge["max_tokens"] = uint64_t{1} << 63;
  EXPECT_EQ(ParseError(huge), "'max_tokens' is too large");
}

TEST(ChatRequestTest, SkipSpecialPriorityAndXargs) {
  Json body = ClientBody(Json::array({TextPart("x")}));
  body.erase("skip_special_tokens");
  EXPECT_FALSE(Parse(body).skip_special);  // the default keeps them
  body["skip_special_tokens"] = true;
  EXPECT_TRUE(Parse(body).skip_special);
  body["skip_special_tokens"] = "yes";
  EXPECT_EQ(ParseError(body), "'skip_special_tokens' must be a boolean");
  body["skip_special_tokens"] = false;

  body["priority"] = -5;
  EXPECT_EQ(Parse(body).request.priority, -5);
  body["priority"] = int64_t{1} << 40;
  EXPECT_EQ(ParseError(body), "'priority' is out of range");
  body["priority"] = "3";
  EXPECT_EQ(ParseError(body), "'priority' must be an integer");
  body.erase("priority");

  body["vllm_xargs"] = {{"no_repeat_ngram_size", 7}, {"debug", true}, {"unknown", {1, 2}}};
  EXPECT_EQ(Parse(body).request.sampling.no_repeat_ngram_size, 7);
  body["vllm_xargs"] = {{"debug", "not even a boolean"}};
  EXPECT_EQ(Parse(body).request.sampling.no_repeat_ngram_size, 0);
  body["vllm_xargs"] = {{"no_repeat_ngram_size", "100"}};
  EXPECT_EQ(ParseError(body), "'no_repeat_ngram_size' must be an integer");
  body["vllm_xargs"] = Json::array();
  EXPECT_EQ(ParseError(body), "'vllm_xargs' must be an object");
}

TEST(ChatRequestTest, MalformedPartsAreErrorsNotCrashes) {
  EXPECT_NE(
      ParseError(ClientBody(Json::array({Json{{"type", "image_url"}}}))).find("image_url.url"),
      std::string::npos);
  EXPECT_NE(
      ParseError(ClientBody(Json::array({Json{{"type", "text"}, {"text", 3}}}))).find(".text"),
      std::string::npos);
  EXPECT_NE(ParseError(ClientBody(Json::array({Json("plain string")}))).find("'type'"),
            std::string::npos);
  EXPECT_NE(
      ParseError(ClientBody(Json::array({Json{{"type", "input_audio"}}}))).find("input_audio"),
      std::string::npos);
  EXPECT_NE(ParseError(ClientBody(Json{{"type", "text"}})).find("string or an array"),
            std::string::npos);
  Json no_messages = ClientBody(Json::array());
  no_messages["messages"] = Json::array();
  EXPECT_EQ(ParseError(no_messages), "'messages' must be a non-empty array");
}

}  // namespace
}  // namespace mineru::service
