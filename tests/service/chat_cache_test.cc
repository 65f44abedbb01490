// SPDX-License-Identifier: Apache-2.0
// The chat completion cache: a key that changes with every input that changes the answer and
// with nothing else, values that refuse what is not an encoding, and /v1/chat/completions on
// the tiny random checkpoint answering a repeated deterministic request (plain and streamed)
// from the cache without the engine, byte-identical with the same usage, while a sampled
// request without a seed is never cached.
#include "service/chat_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>

#include "../support/http_client.h"
#include "../support/scratch.h"
#include "base/json.h"
#include "cache/block_cache.h"
#include "image/data_url.h"
#include "service/openai_api.h"
#include "tiny_chat.h"

namespace mineru::service {
namespace {

engine::Request BaseRequest() {
  engine::Request r;
  r.messages = {{"system", {text::ChatPart::Text("You are a helpful assistant.")}},
                {"user", {text::ChatPart::Image({}), text::ChatPart::Text("\nText Recognition:")}}};
  engine::ImageInput image;
  image.rgb = image::RgbImage{};
  image.rgb->width = 4;
  image.rgb->height = 2;
  image.rgb->pixels.assign(4 * 2 * 3, 7);
  r.images.push_back(std::move(image));
  r.sampling.temperature = 0;
  r.sampling.top_p = 0.01f;
  r.sampling.top_k = 1;
  r.max_new_tokens = 8;
  return r;
}

TEST(ChatCacheKeyTest, EveryInputThatChangesTheAnswerChangesTheKey) {
  const std::optional<std::string> base = ChatCacheKey(BaseRequest(), false, {});
  ASSERT_TRUE(base);
  EXPECT_EQ(base->rfind("chat1|", 0), 0u);
  // Same inputs, same key; the priority and the deadline change nothing.
  engine::Request same = BaseRequest();
  same.priority = 3;
  same.deadline = engine::Clock::now();
  EXPECT_EQ(ChatCacheKey(same, false, {}), base);

  const std::vector<std::pair<std::string, std::function<void(engine::Request&)>>> changes = {
      {"temperature", [](engine::Request& r) { r.sampling.temperature = 0.001f; }},
      {"top_p", [](engine::Request& r) { r.sampling.top_p = 0.02f; }},
      {"presence_penalty", [](engine::Request& r) { r.sampling.presence_penalty = 1; }},
      {"frequency_penalty", [](engine::Request& r) { r.sampling.frequency_penalty = 0.05f; }},
      {"repetition_penalty", [](engine::Request& r) { r.sampling.repetition_penalty = 1.05f; }},
      {"no_repeat_ngram_size", [](engine::Request& r) { r.sampling.no_repeat_ngram_size = 100; }},
      {"seed", [](engine::Request& r) { r.sampling.seed = 1; }},
      // A bias changes the answer: a cached answer without it would be wrong (issue 14).
      {"logit_bias",
       [](engine::Request& r) {
         r.sampling.logit_bias = {{7, -100.0f}};
       }},
      {"max tokens", [](engine::Request& r) { r.max_new_tokens = 9; }},
      {"no max tokens", [](engine::Request& r) { r.max_new_tokens.reset(); }},
      {"role", [](engine::Request& r) { r.messages[0].role = "user"; }},
      {"text", [](engine::Request& r) { r.messages[1].content[1].text = "\nTable Recognition:"; }},
      {"text split",
       [](engine::Request& r) {
         r.messages[0].content = {text::ChatPart::Text("You are a helpful"),
                                  text::ChatPart::Text(" assistant.")};
       }},
      {"no system message", [](engine::Request& r) { r.messages.erase(r.messages.begin()); }},
      {"a pixel", [](engine::Request& r) { r.images[0].rgb->pixels[5] = 8; }},
      {"the shape",
       [](engine::Request& r) {
         r.images[0].rgb->width = 2;
         r.images[0].rgb->height = 4;
       }},
  };
  for (const auto& [what, change] : changes) {
    engine::Request r = BaseRequest();
    change(r);
    std::optional<std::string> key = ChatCacheKey(r, false, {});
    ASSERT_TRUE(key) << what;
    EXPECT_NE(*key, *base) << what;
  }
  engine::Request biased = BaseRequest(), rebiased = BaseRequest();
  biased.sampling.logit_bias = {{7, -100.0f}};
  rebiased.sampling.logit_bias = {{7, -99.5f}};
  EXPECT_NE(ChatCacheKey(biased, false, {}), ChatCacheKey(rebiased, false, {}));
  EXPECT_NE(ChatCacheKey(BaseRequest(), true, {}), base);  // skip_special_tokens
  EXPECT_NE(ChatCacheKey(BaseRequest(), false, {"</s>"}), base);
  EXPECT_NE(ChatCacheKey(BaseRequest(), false, {"a", "b"}),
            ChatCacheKey(BaseRequest(), false, {"ab"}));

  // Sampled without a seed: never cached; with one it is deterministic again.
  engine::Request sampled = BaseRequest();
  sampled.sampling.temperature = 1;
  sampled.sampling.top_k = -1;
  EXPECT_FALSE(ChatCacheKey(sampled, false, {}));
  sampled.sampling.seed = 42;
  EXPECT_TRUE(ChatCacheKey(sampled, false, {}));
  // An image part without decoded pixels, or parts and images that do not pair: not cached.
  engine::Request undecoded = BaseRequest();
  undecoded.images[0].rgb.reset();
  EXPECT_FALSE(ChatCacheKey(undecoded, false, {}));
  engine::Request extra = BaseRequest();
  extra.images.push_back(extra.images[0]);
  EXPECT_FALSE(ChatCacheKey(extra, false, {}));
}

TEST(ChatCacheKeyTest, ValuesRoundTripAndAnythingElseIsAMiss) {
  const CachedChat chat{"<td>1</td>\n\xE2\x82\xAC", "length", 97, 8};
  std::optional<CachedChat> back = DecodeCachedChat(EncodeCachedChat(chat));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->text, chat.text);
  EXPECT_EQ(back->finish_reason, "length");
  EXPECT_EQ(back->prompt_tokens, 97);
  EXPECT_EQ(back->completion_tokens, 8);
  for (const char* bad :
       {"", "not json", "[]", "{\"text\":\"a\"}",
        R"({"text":"a","finish_reason":"error","prompt_tokens":1,"completion_tokens":1})",
        R"({"text":"a","finish_reason":"stop","prompt_tokens":-1,"completion_tokens":1})",
        R"({"text":1,"finish_reason":"stop","prompt_tokens":1,"completion_tokens":1})"}) {
    EXPECT_FALSE(DecodeCachedChat(bad)) << bad;
  }
}

TEST(ChatCacheKeyTest, DenseStoredValuesAreAMissInOnePass) {
  // Issue 14: a cached chat read from Redis went through the quadratic depth-limited parse; a
  // 64 MiB value (--cache-max-value-bytes) of `{}` cost hours. Now it is a miss at once.
  std::string value = "[";
  while (value.size() + 4 <= (size_t{64} << 20)) value += "{},";
  value.back() = ']';
  EXPECT_FALSE(DecodeCachedChat(value));
}

class ChatCacheApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing_support::ScratchRoot() + "/chat-cache-model";
    auto loaded = testing_support::WriteAndLoadTinyModel(dir, 5);
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    auto engine = engine::Engine::Create(*loaded, dir, testing_support::TinyEngineOptions());
    ASSERT_TRUE(engine) << engine.error().ToString();
    engine_ = std::move(*engine).release();
    cache_ = new jobs::BlockCache(1 << 20, "tiny");
    server_ = new HttpServer();
    OpenAiOptions api;
    api.model_id = "tiny";
    api.cache = cache_;
    api.on_cache_lookup = [](bool hit) { ++(hit ? hits_ : misses_); };
    AddOpenAiRoutes(*server_, *engine_, api);
    ServerOptions server_options;
    server_options.port = 0;
    auto started = server_->Start(server_options);
    ASSERT_TRUE(started) << started.error().ToString();
  }
  static void TearDownTestSuite() {
    if (server_) server_->Stop(std::chrono::seconds(2));
    delete server_;
    delete engine_;
    delete cache_;
  }

  static Json Body(bool stream, double temperature = 0.0) {
    const std::string url =
        image::MakeDataUrl("image/png", testing_support::PatternPng(112, 84, 37));
    Json body{{"model", "tiny"},
              {"messages",
               {{{"role", "user"},
                 {"content",
                  {{{"type", "image_url"}, {"image_url", {{"url", url}}}},
                   {{"type", "text"}, {"text", "\nText Recognition:"}}}}}}},
              {"temperature", temperature},
              {"skip_special_tokens", false},
              {"max_tokens", 8}};
    if (stream) {
      body["stream"] = true;
      body["stream_options"] = {{"include_usage", true}};
    }
    return body;
  }
  static std::optional<testing_support::HttpReply> Chat(const Json& body) {
    return testing_support::Exchange(server_->port(), "POST", "/v1/chat/completions", body.dump());
  }
  // The content and usage of a reply, streamed or not.
  static std::pair<std::string, Json> ContentAndUsage(const testing_support::HttpReply& r,
                                                      bool stream) {
    if (!stream) {
      const Json json = Json::parse(r.body);
      return {json["choices"][0]["message"]["content"], json["usage"]};
    }
    std::string content;
    Json usage;
    for (const std::string& data : testing_support::SseData(r.body)) {
      if (data == "[DONE]") break;
      const Json chunk = Json::parse(data);
      if (chunk.contains("usage")) usage = chunk["usage"];
      if (!chunk["choices"].empty()) content += chunk["choices"][0]["delta"].value("content", "");
    }
    return {content, usage};
  }

  static inline engine::Engine* engine_ = nullptr;
  static inline jobs::BlockCache* cache_ = nullptr;
  static inline HttpServer* server_ = nullptr;
  static inline std::atomic<int> hits_{0}, misses_{0};
};

TEST_F(ChatCacheApiTest, RepeatedDeterministicRequestIsAnsweredWithoutTheEngine) {
  auto first = Chat(Body(false));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  EXPECT_EQ(misses_.load(), 1);
  const int64_t submitted = engine_->Stats().submitted;
  for (bool stream : {false, true}) {
    auto again = Chat(Body(stream));
    ASSERT_TRUE(again);
    ASSERT_EQ(again->status, 200) << again->body;
    EXPECT_EQ(ContentAndUsage(*again, stream), ContentAndUsage(*first, false)) << stream;
  }
  EXPECT_EQ(hits_.load(), 2);
  EXPECT_EQ(engine_->Stats().submitted, submitted);  // the engine was not asked

  // A streamed miss fills the cache too.
  Json other = Body(true);
  other["max_tokens"] = 5;
  auto streamed = Chat(other);
  ASSERT_TRUE(streamed);
  other["stream"] = false;
  other.erase("stream_options");
  auto plain = Chat(other);
  ASSERT_TRUE(plain);
  EXPECT_EQ(ContentAndUsage(*plain, false), ContentAndUsage(*streamed, true));
  EXPECT_EQ(hits_.load(), 3);
  EXPECT_EQ(engine_->Stats().submitted, submitted + 1);

  // Sampling without a seed is never looked up.
  const int lookups = hits_.load() + misses_.load();
  for (int i = 0; i < 2; ++i) {
    auto sampled = Chat(Body(false, 1.0));
    ASSERT_TRUE(sampled);
    EXPECT_EQ(sampled->status, 200);
  }
  EXPECT_EQ(hits_.load() + misses_.load(), lookups);
  EXPECT_EQ(engine_->Stats().submitted, submitted + 3);
}

}  // namespace
}  // namespace mineru::service
