// SPDX-License-Identifier: Apache-2.0
// The body a remote generator posts, against MinerU's HTTP client (mineru-vl-utils 1.2.1
// build_request_body): TV-45's bodies as exact strings (the payload of each image is compared by
// decoding it back to the crop's pixels), then the rules for what the client never sends.
#include "pipeline/chat_request_body.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/json.h"
#include "image/data_url.h"
#include "image/decode.h"
#include "pipeline/block_requests.h"
#include "pipeline/cross_page_tables.h"
#include "pipeline/sampling_presets.h"

namespace mineru::pipeline {
namespace {

constexpr std::string_view kUrlPrefix = "data:image/png;base64,";
constexpr std::string_view kPayloadMark = "PAYLOAD";

// A crop with every pixel different, so that a swapped channel or row shows.
image::RgbImage Crop(int64_t width, int64_t height, uint8_t seed) {
  image::RgbImage crop;
  crop.width = width;
  crop.height = height;
  crop.pixels.resize(static_cast<size_t>(width * height * 3));
  for (size_t i = 0; i < crop.pixels.size(); ++i) {
    crop.pixels[i] = static_cast<uint8_t>(seed + i * 7);
  }
  return crop;
}

engine::ImageInput Input(image::RgbImage crop) {
  engine::ImageInput input;
  input.rgb = std::move(crop);
  return input;
}

// As the page extractor builds a block request: one image part, then the prompt.
engine::Request ImageRequest(image::RgbImage crop, std::string_view prompt,
                             const engine::SamplingParams& sampling, int32_t priority = 0) {
  engine::Request request;
  request.messages = {
      {"user", {text::ChatPart::Image({}), text::ChatPart::Text(std::string(prompt))}}};
  request.images.push_back(Input(std::move(crop)));
  request.sampling = sampling;
  request.priority = priority;
  return request;
}

// The body with each image's base64 payload replaced by kPayloadMark, and the payloads.
struct SplitBody {
  std::string frame;
  std::vector<std::string> payloads;
};

SplitBody Split(const std::string& body) {
  SplitBody out;
  size_t from = 0;
  while (true) {
    const size_t at = body.find(kUrlPrefix, from);
    if (at == std::string::npos) break;
    const size_t start = at + kUrlPrefix.size();
    const size_t end = body.find('"', start);
    if (end == std::string::npos) break;
    out.frame += body.substr(from, start - from);
    out.frame += kPayloadMark;
    out.payloads.push_back(body.substr(start, end - start));
    from = end;
  }
  out.frame += body.substr(from);
  return out;
}

void ExpectPayloadIs(const std::string& payload, const image::RgbImage& crop) {
  auto bytes = image::Base64Decode(payload);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  auto decoded = image::DecodeImage(*bytes);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->format, image::ImageFormat::kPng);
  EXPECT_EQ(decoded->image.width, crop.width);
  EXPECT_EQ(decoded->image.height, crop.height);
  EXPECT_EQ(decoded->image.pixels, crop.pixels);
}

std::string Body(const engine::Request& request, std::string_view model = "mineru") {
  auto body = BuildChatRequestBody(request, model);
  EXPECT_TRUE(body) << body.error().ToString();
  return body.value_or("");
}

// The sampling and trailing keys every MinerU request of a kind carries.
constexpr std::string_view kTableSamplingKeys =
    R"("temperature":0.0,"top_p":0.01,"top_k":1,"presence_penalty":1.0,)"
    R"("frequency_penalty":0.005,"repetition_penalty":1.0,)"
    R"("vllm_xargs":{"no_repeat_ngram_size":100,"debug":false},"skip_special_tokens":false})";
constexpr std::string_view kSystemTurn =
    R"({"role":"system","content":"You are a helpful assistant."})";

TEST(ChatRequestBodyTest, Tv45TableCropWithPriority) {
  const image::RgbImage crop = Crop(13, 9, 3);
  const std::string body =
      Body(ImageRequest(crop, kTablePrompt, MineruTableSampling(), /*priority=*/3));
  const SplitBody split = Split(body);
  EXPECT_EQ(
      split.frame,
      std::string(R"({"model":"mineru","messages":[)") + std::string(kSystemTurn) +
          R"(,{"role":"user","content":[{"type":"image_url","image_url":{"url":)"
          R"("data:image/png;base64,PAYLOAD"}},{"type":"text","text":"\nTable Recognition:"}]}],)"
          R"("priority":3,)" +
          std::string(kTableSamplingKeys));
  ASSERT_EQ(split.payloads.size(), 1u);
  ExpectPayloadIs(split.payloads[0], crop);
}

TEST(ChatRequestBodyTest, Tv45TextOnlyMergeRequest) {
  // As the cross-page table merge builds it: one text part, the default sampling, no priority.
  const std::string prompt = CellMergePrompt({"banana", "5"}, {"longname continued", ""});
  engine::Request request;
  request.messages = {{"user", {text::ChatPart::Text(prompt)}}};
  request.sampling = MineruDefaultSampling();
  EXPECT_EQ(Body(request),
            std::string(R"({"model":"mineru","messages":[)") + std::string(kSystemTurn) +
                R"(,{"role":"user","content":[{"type":"text","text":)" + Json(prompt).dump() +
                R"(}]}],"temperature":0.0,"top_p":0.01,"top_k":1,"presence_penalty":1.0,)"
                R"("frequency_penalty":0.05,"repetition_penalty":1.0,)"
                R"("vllm_xargs":{"no_repeat_ngram_size":100,"debug":false},)"
                R"("skip_special_tokens":false})");
}

TEST(ChatRequestBodyTest, Tv45InterleavedImagesWithTokenLimit) {
  // The client splits "A<image>B<image>C" at the two images; the messages hold the same parts.
  const image::RgbImage first = Crop(5, 4, 11);
  const image::RgbImage second = Crop(3, 6, 200);
  engine::Request request;
  request.messages = {
      {"user",
       {text::ChatPart::Text("A"), text::ChatPart::Image({}), text::ChatPart::Text("B"),
        text::ChatPart::Image({}), text::ChatPart::Text("C")}}};
  request.images.push_back(Input(first));
  request.images.push_back(Input(second));
  request.sampling = MineruDefaultSampling();
  request.max_new_tokens = 4096;
  const SplitBody split = Split(Body(request));
  EXPECT_EQ(split.frame,
            std::string(R"({"model":"mineru","messages":[)") + std::string(kSystemTurn) +
                R"(,{"role":"user","content":[{"type":"text","text":"A"},)"
                R"({"type":"image_url","image_url":{"url":"data:image/png;base64,PAYLOAD"}},)"
                R"({"type":"text","text":"B"},)"
                R"({"type":"image_url","image_url":{"url":"data:image/png;base64,PAYLOAD"}},)"
                R"({"type":"text","text":"C"}]}],)"
                R"("temperature":0.0,"top_p":0.01,"top_k":1,"presence_penalty":1.0,)"
                R"("frequency_penalty":0.05,"repetition_penalty":1.0,)"
                R"("vllm_xargs":{"no_repeat_ngram_size":100,"debug":false},)"
                R"("max_completion_tokens":4096,"max_tokens":4096,"skip_special_tokens":false})");
  ASSERT_EQ(split.payloads.size(), 2u);
  ExpectPayloadIs(split.payloads[0], first);
  ExpectPayloadIs(split.payloads[1], second);
}

TEST(ChatRequestBodyTest, Tv45OpenAiModelDropsTheVllmKeys) {
  const image::RgbImage crop = Crop(4, 4, 0);
  const SplitBody split =
      Split(Body(ImageRequest(crop, kTablePrompt, MineruTableSampling()), "gpt-4o"));
  EXPECT_EQ(
      split.frame,
      std::string(R"({"model":"gpt-4o","messages":[)") + std::string(kSystemTurn) +
          R"(,{"role":"user","content":[{"type":"image_url","image_url":{"url":)"
          R"("data:image/png;base64,PAYLOAD"}},{"type":"text","text":"\nTable Recognition:"}]}],)"
          R"("temperature":0.0,"top_p":0.01,"presence_penalty":1.0,)"
          R"("frequency_penalty":0.005,)"
          R"("vllm_xargs":{"no_repeat_ngram_size":100,"debug":false}})");
  ASSERT_EQ(split.payloads.size(), 1u);
  ExpectPayloadIs(split.payloads[0], crop);
}

TEST(ChatRequestBodyTest, GptPrefixIsCaseInsensitiveAndOnlyAPrefix) {
  engine::Request request;
  request.messages = {{"user", {text::ChatPart::Text("x")}}};
  request.sampling = MineruLayoutSampling();
  EXPECT_EQ(Body(request, "GPT-4.1").find("top_k"), std::string::npos);
  EXPECT_EQ(Body(request, "Gpt").find("skip_special_tokens"), std::string::npos);
  EXPECT_NE(Body(request, "chatgpt").find(R"("top_k":1)"), std::string::npos);
  EXPECT_NE(Body(request, "gp").find(R"("skip_special_tokens":false)"), std::string::npos);
}

TEST(ChatRequestBodyTest, GivenSystemMessageIsKeptAsAString) {
  engine::Request request;
  request.messages = {
      {"system", {text::ChatPart::Text("Be "), text::ChatPart::Text("brief.")}},
      {"user", {text::ChatPart::Text("hi")}},
  };
  request.sampling = MineruLayoutSampling();
  const std::string body = Body(request);
  EXPECT_TRUE(
      body.starts_with(R"({"model":"mineru","messages":[{"role":"system","content":"Be brief."},)"
                       R"({"role":"user","content":[{"type":"text","text":"hi"}]}],)"))
      << body;
  EXPECT_EQ(body.find(kClientSystemPrompt), std::string::npos);
}

TEST(ChatRequestBodyTest, SystemMessageAfterTheFirstStillGetsTheDefaultTurnFirst) {
  // The chat template adds its system turn whenever the first message is not one.
  engine::Request request;
  request.messages = {{"user", {text::ChatPart::Text("a")}},
                      {"system", {text::ChatPart::Text("s")}}};
  const std::string body = Body(request);
  EXPECT_TRUE(body.starts_with(std::string(R"({"model":"mineru","messages":[)") +
                               std::string(kSystemTurn) + ","))
      << body;
  EXPECT_NE(body.find(R"({"role":"system","content":"s"}],"temperature")"), std::string::npos)
      << body;
}

TEST(ChatRequestBodyTest, SamplingValuesAndOptionalKeys) {
  engine::Request request;
  request.messages = {{"user", {text::ChatPart::Text("x")}}};
  request.sampling.temperature = 0.7f;
  request.sampling.top_p = 0.9f;
  request.sampling.top_k = 0;  // off
  request.sampling.presence_penalty = -0.3f;
  request.sampling.frequency_penalty = 0.1f;
  request.sampling.repetition_penalty = 1.05f;
  request.sampling.no_repeat_ngram_size = 0;  // off: no vllm_xargs
  request.sampling.seed = 42;
  request.sampling.logit_bias = {{151643, -100.0f}, {5, 0.3f}};
  request.priority = -2;  // any non-zero priority is sent
  EXPECT_EQ(Body(request),
            std::string(R"({"model":"mineru","messages":[)") + std::string(kSystemTurn) +
                R"(,{"role":"user","content":[{"type":"text","text":"x"}]}],"priority":-2,)"
                R"("temperature":0.7,"top_p":0.9,"top_k":-1,"presence_penalty":-0.3,)"
                R"("frequency_penalty":0.1,"repetition_penalty":1.05,)"
                R"("skip_special_tokens":false,"seed":42,"logit_bias":{"151643":-100.0,"5":0.3}})");

  request.sampling.top_k = -1;  // the other spelling of off
  EXPECT_NE(Body(request).find(R"("top_k":-1,)"), std::string::npos);
  request.sampling.top_k = 50;
  EXPECT_NE(Body(request).find(R"("top_k":50,)"), std::string::npos);
}

TEST(ChatRequestBodyTest, CompressionLevelChangesBytesNotPixels) {
  const image::RgbImage crop = Crop(40, 30, 9);
  const engine::Request request = ImageRequest(crop, "\nText Recognition:", {});
  for (int level : {0, 1, 9}) {
    auto body = BuildChatRequestBody(request, "mineru", {.png_compression_level = level});
    ASSERT_TRUE(body) << body.error().ToString();
    const SplitBody split = Split(*body);
    ASSERT_EQ(split.payloads.size(), 1u);
    ExpectPayloadIs(split.payloads[0], crop);
  }
  auto bad = BuildChatRequestBody(request, "mineru", {.png_compression_level = 10});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

TEST(ChatRequestBodyTest, TextThatIsNotUtf8DoesNotThrow) {
  engine::Request request;
  request.messages = {{"user",
                       {text::ChatPart::Text("a\xff"
                                             "b")}}};
  const std::string body = Body(request);
  EXPECT_NE(body.find("a\xEF\xBF\xBD"
                      "b"),
            std::string::npos)
      << body;  // U+FFFD
}

TEST(ChatRequestBodyTest, RefusesWhatTheBodyCannotExpress) {
  auto code = [](const engine::Request& request) {
    auto body = BuildChatRequestBody(request, "mineru");
    return body ? std::optional<ErrorCode>() : std::optional<ErrorCode>(body.error().code);
  };
  const engine::Request good = ImageRequest(Crop(2, 2, 1), "p", {});
  ASSERT_TRUE(BuildChatRequestBody(good, "mineru"));

  engine::Request ids = good;
  ids.prompt_ids = {1, 2, 3};
  EXPECT_EQ(code(ids), ErrorCode::kInvalidArgument);

  engine::Request ids_only;
  ids_only.prompt_ids = {1, 2, 3};
  EXPECT_EQ(code(ids_only), ErrorCode::kInvalidArgument);

  engine::Request empty;
  EXPECT_EQ(code(empty), ErrorCode::kInvalidArgument);

  engine::Request preprocessed = good;  // pixel values only, no decoded pixels
  preprocessed.images[0].rgb.reset();
  preprocessed.images[0].pixel_values.assign(1176, 0.0f);
  preprocessed.images[0].grid = {1, 2, 2};
  EXPECT_EQ(code(preprocessed), ErrorCode::kInvalidArgument);

  engine::Request missing_image = good;  // one image part, no image
  missing_image.images.clear();
  EXPECT_EQ(code(missing_image), ErrorCode::kInvalidArgument);

  engine::Request extra_image = good;  // one image part, two images
  extra_image.images.push_back(Input(Crop(2, 2, 2)));
  EXPECT_EQ(code(extra_image), ErrorCode::kInvalidArgument);

  engine::Request system_image = good;
  system_image.messages.insert(system_image.messages.begin(),
                               {"system", {text::ChatPart::Image({})}});
  system_image.images.push_back(Input(Crop(2, 2, 2)));
  EXPECT_EQ(code(system_image), ErrorCode::kInvalidArgument);

  engine::Request nan = good;
  nan.sampling.temperature = std::nanf("");
  EXPECT_EQ(code(nan), ErrorCode::kInvalidArgument);

  engine::Request no_tokens = good;
  no_tokens.max_new_tokens = 0;
  EXPECT_EQ(code(no_tokens), ErrorCode::kInvalidArgument);

  engine::Request empty_crop = good;
  empty_crop.images[0].rgb = image::RgbImage{};
  EXPECT_FALSE(code(empty_crop) == std::nullopt);  // what PNG encoding reports
}

}  // namespace
}  // namespace mineru::pipeline
