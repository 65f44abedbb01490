// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible endpoints against a raw POSIX-socket client, on a tiny random checkpoint
// with the Qwen2 tokenizer (written by the CTest fixture text_qwen_tokenizer): /v1/models,
// exactly what MinerU's vlm-http-client sends for each of its four prompts, streaming equal to
// non-streaming, and every error path in OpenAI's error shape.
#include "service/openai_api.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../support/http_client.h"
#include "../support/scratch.h"
#include "base/json.h"
#include "image/data_url.h"
#include "image/encode.h"
#include "model/random_checkpoint.h"

namespace mineru::service {
namespace {

constexpr char kModelId[] = "tiny-mineru";

using testing_support::Exchange;
using testing_support::SseData;
using Response = testing_support::HttpReply;

std::string PngDataUrl() {
  image::RgbImage rgb;
  rgb.width = 112;
  rgb.height = 84;
  rgb.pixels.resize(static_cast<size_t>(rgb.width * rgb.height * 3));
  for (size_t i = 0; i < rgb.pixels.size(); ++i) rgb.pixels[i] = static_cast<uint8_t>(i * 37);
  auto png = image::EncodePng(rgb);
  EXPECT_TRUE(png);
  return image::MakeDataUrl("image/png", *png);
}

// What mineru_vl_utils' http_client sends (spec mineru.md 4.4).
Json MineruBody(const std::string& prompt, const std::string& image_url) {
  return Json{{"model", kModelId},
              {"messages",
               {{{"role", "system"}, {"content", "You are a helpful assistant."}},
                {{"role", "user"},
                 {"content",
                  {{{"type", "image_url"}, {"image_url", {{"url", image_url}}}},
                   {{"type", "text"}, {"text", prompt}}}}}}},
              {"temperature", 0.0},
              {"top_p", 0.01},
              {"top_k", 1},
              {"presence_penalty", 1.0},
              {"frequency_penalty", 0.05},
              {"repetition_penalty", 1.0},
              {"vllm_xargs", {{"no_repeat_ngram_size", 100}, {"debug", false}}},
              {"skip_special_tokens", false},
              {"max_completion_tokens", 8},
              {"max_tokens", 8}};
}

void ExpectOpenAiError(const std::optional<Response>& r, int status, std::string_view what) {
  ASSERT_TRUE(r) << what;
  EXPECT_EQ(r->status, status) << what << ": " << r->body;
  auto json = ParseJson(r->body, "error");
  ASSERT_TRUE(json) << what << ": " << r->body;
  EXPECT_EQ((*json)["object"], "error") << what;
  ASSERT_TRUE((*json)["error"].is_object()) << what;
  const Json& e = (*json)["error"];
  EXPECT_TRUE(e["message"].is_string()) << what;
  EXPECT_FALSE(e["message"].get<std::string>().empty()) << what;
  EXPECT_TRUE(e["type"].is_string()) << what;
  EXPECT_TRUE(e.contains("param")) << what;
  EXPECT_TRUE(e.contains("code")) << what;
}

class OpenAiApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing_support::ScratchRoot() + "/openai-model";
    ThreadPool pool(2);
    model::RandomCheckpointOptions checkpoint_options;
    checkpoint_options.seed = 5;
    checkpoint_options.tokenizer_source = MINERU_QWEN_TOKENIZER;
    auto written =
        model::WriteRandomCheckpoint(pool, model::TinyModelConfig(), dir, checkpoint_options);
    ASSERT_TRUE(written) << written.error().ToString();
    auto loaded = model::Model::Load(dir);
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    std::shared_ptr<const model::Model> model(std::move(*loaded));
    engine::EngineOptions options;
    options.threads = 2;
    options.kv_cache_bytes = int64_t{32} << 20;
    options.vision_max_wait = std::chrono::milliseconds(1);
    auto engine = engine::Engine::Create(model, dir, options);
    ASSERT_TRUE(engine) << engine.error().ToString();
    engine_ = std::move(*engine).release();
    server_ = new HttpServer();
    OpenAiOptions api;
    api.model_id = kModelId;
    AddOpenAiRoutes(*server_, *engine_, api);
    ServerOptions server_options;
    server_options.port = 0;
    auto started = server_->Start(server_options);
    ASSERT_TRUE(started) << started.error().ToString();
    image_url_ = new std::string(PngDataUrl());
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) server_->Stop(std::chrono::seconds(2));
    delete server_;
    delete engine_;
    delete image_url_;
    server_ = nullptr;
    engine_ = nullptr;
    image_url_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static int port() { return server_->port(); }
  static std::optional<Response> Chat(const Json& body) {
    return Exchange(port(), "POST", "/v1/chat/completions", body.dump());
  }

  static inline engine::Engine* engine_ = nullptr;
  static inline HttpServer* server_ = nullptr;
  static inline std::string* image_url_ = nullptr;
};

TEST_F(OpenAiApiTest, ListsTheServedModel) {
  auto r = Exchange(port(), "GET", "/v1/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto json = ParseJson(r->body, "models");
  ASSERT_TRUE(json) << r->body;
  EXPECT_EQ((*json)["object"], "list");
  ASSERT_EQ((*json)["data"].size(), 1u);
  EXPECT_EQ((*json)["data"][0]["id"], kModelId);
  EXPECT_EQ((*json)["data"][0]["object"], "model");
  EXPECT_EQ((*json)["data"][0]["owned_by"], "mineru.cpp");
}

TEST_F(OpenAiApiTest, AnswersMineruClientRequestsForEveryPrompt) {
  for (const char* prompt : {"\nLayout Detection:", "\nText Recognition:", "\nTable Recognition:",
                             "\nFormula Recognition:"}) {
    auto r = Chat(MineruBody(prompt, *image_url_));
    ASSERT_TRUE(r) << prompt;
    ASSERT_EQ(r->status, 200) << prompt << ": " << r->body;
    EXPECT_NE(r->head.find("application/json"), std::string::npos);
    auto json = ParseJson(r->body, "completion");
    ASSERT_TRUE(json) << r->body;
    EXPECT_EQ((*json)["object"], "chat.completion");
    EXPECT_EQ((*json)["model"], kModelId);
    EXPECT_TRUE((*json)["id"].get<std::string>().starts_with("chatcmpl-"));
    EXPECT_TRUE((*json)["created"].is_number_integer());
    const Json& choice = (*json)["choices"][0];
    EXPECT_EQ(choice["index"], 0);
    EXPECT_EQ(choice["message"]["role"], "assistant");
    EXPECT_TRUE(choice["message"]["content"].is_string());
    const std::string finish = choice["finish_reason"];
    EXPECT_TRUE(finish == "stop" || finish == "length") << finish;
    const Json& usage = (*json)["usage"];
    EXPECT_GT(usage["prompt_tokens"].get<int64_t>(), 0);
    EXPECT_GT(usage["completion_tokens"].get<int64_t>(), 0);
    EXPECT_LE(usage["completion_tokens"].get<int64_t>(), 8);
    EXPECT_EQ(usage["total_tokens"].get<int64_t>(),
              usage["prompt_tokens"].get<int64_t>() + usage["completion_tokens"].get<int64_t>());
  }
}

TEST_F(OpenAiApiTest, StreamEqualsNonStreaming) {
  Json body = MineruBody("\nText Recognition:", *image_url_);
  body["max_completion_tokens"] = 12;
  body.erase("max_tokens");
  auto plain = Chat(body);
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200) << plain->body;
  auto plain_json = ParseJson(plain->body, "completion");
  ASSERT_TRUE(plain_json);
  const std::string expected = (*plain_json)["choices"][0]["message"]["content"];

  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  auto streamed = Chat(body);
  ASSERT_TRUE(streamed);
  ASSERT_EQ(streamed->status, 200) << streamed->body;
  EXPECT_NE(streamed->head.find("text/event-stream"), std::string::npos);
  const std::vector<std::string> events = SseData(streamed->body);
  ASSERT_GE(events.size(), 4u) << streamed->body;
  EXPECT_EQ(events.back(), "[DONE]");
  std::string content;
  std::string finish;
  bool saw_role = false, saw_usage = false;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    auto chunk = ParseJson(events[i], "chunk");
    ASSERT_TRUE(chunk) << events[i];
    EXPECT_EQ((*chunk)["object"], "chat.completion.chunk");
    if ((*chunk)["choices"].empty()) {
      saw_usage = true;
      EXPECT_EQ((*chunk)["usage"], (*plain_json)["usage"]);
      continue;
    }
    const Json& choice = (*chunk)["choices"][0];
    if (i == 0) {
      EXPECT_EQ(choice["delta"]["role"], "assistant");
      saw_role = true;
    }
    if (choice["delta"].contains("content")) content += choice["delta"]["content"];
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_TRUE(saw_role);
  EXPECT_TRUE(saw_usage);
  EXPECT_EQ(content, expected);
  EXPECT_EQ(finish, (*plain_json)["choices"][0]["finish_reason"]);
}

TEST_F(OpenAiApiTest, StopStringCutsTheText) {
  Json body = MineruBody("\nText Recognition:", *image_url_);
  body["max_completion_tokens"] = 12;
  body.erase("max_tokens");
  auto plain = Chat(body);
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200);
  const std::string full = (*ParseJson(plain->body, "c"))["choices"][0]["message"]["content"];
  if (full.size() < 2) GTEST_SKIP() << "generated text too short to cut";
  // Stop at the last character: the text before its first occurrence remains.
  size_t last = full.size() - 1;
  while (last > 0 && (static_cast<uint8_t>(full[last]) & 0xC0) == 0x80) --last;
  const std::string stop = full.substr(last);
  body["stop"] = stop;
  auto cut = Chat(body);
  ASSERT_TRUE(cut);
  ASSERT_EQ(cut->status, 200) << cut->body;
  auto json = ParseJson(cut->body, "c");
  ASSERT_TRUE(json);
  EXPECT_EQ((*json)["choices"][0]["message"]["content"], full.substr(0, full.find(stop)));
  EXPECT_EQ((*json)["choices"][0]["finish_reason"], "stop");
}

TEST_F(OpenAiApiTest, ErrorsUseOpenAiShape) {
  ExpectOpenAiError(Exchange(port(), "POST", "/v1/chat/completions", "{\"model\": "), 400,
                    "malformed JSON");
  ExpectOpenAiError(Chat(Json{{"model", kModelId}}), 400, "missing messages");
  ExpectOpenAiError(Exchange(port(), "POST", "/v1/chat/completions",
                             MineruBody("x", *image_url_).dump(), "text/plain"),
                    415, "wrong content type");
  ExpectOpenAiError(
      Exchange(port(), "POST", "/v1/chat/completions", MineruBody("x", *image_url_).dump(), ""),
      415, "no content type");
  ExpectOpenAiError(Chat(MineruBody("x", "data:image/png;base64,@@@@")), 400, "bad base64");
  const std::vector<uint8_t> not_image = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'};
  auto unsupported = Chat(MineruBody("x", image::MakeDataUrl("image/png", not_image)));
  ExpectOpenAiError(unsupported, 400, "unsupported image bytes");
  EXPECT_NE(unsupported->body.find("messages[1].content[0]"), std::string::npos)
      << unsupported->body;
  Json unknown = MineruBody("x", *image_url_);
  unknown["model"] = "gpt-4o";
  auto not_found = Chat(unknown);
  ExpectOpenAiError(not_found, 404, "unknown model");
  EXPECT_EQ((*ParseJson(not_found->body, "e"))["error"]["code"], "model_not_found");
  ExpectOpenAiError(Chat(MineruBody("x", "https://example.com/page.png")), 400, "remote URL");
  Json bad_sampling = MineruBody("x", *image_url_);
  bad_sampling["top_p"] = 5.0;
  ExpectOpenAiError(Chat(bad_sampling), 400, "engine refuses sampling");
  Json bad_type = MineruBody("x", *image_url_);
  bad_type["temperature"] = "hot";
  ExpectOpenAiError(Chat(bad_type), 400, "wrong field type");
}

}  // namespace
}  // namespace mineru::service
