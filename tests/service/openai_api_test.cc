// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible endpoints against a raw POSIX-socket client, on a tiny random checkpoint
// with the Qwen2 tokenizer (written by the CTest fixture text_qwen_tokenizer): /v1/models,
// exactly what MinerU's vlm-http-client sends for each of its four prompts, streaming equal to
// non-streaming, every error path in OpenAI's error shape, remote image URLs (fetched from a
// local Python http.server when allowed), backpressure (429) and the request timeout (504).
#include "service/openai_api.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "base/byte_budget.h"
#include "base/json.h"
#include "image/data_url.h"
#include "image/encode.h"
#include "image_server.h"
#include "service/api_error.h"
#include "service/routes.h"
#include "service/service_metrics.h"
#include "tiny_chat.h"

namespace mineru::service {
namespace {

using testing_support::WaitUntil;

constexpr char kModelId[] = "tiny-mineru";

using testing_support::Exchange;
using testing_support::SseData;
using Response = testing_support::HttpReply;

// The test image: 112x84, byte i of its pixels is i * 37.
std::vector<uint8_t> PngBytes() { return testing_support::PatternPng(112, 84, 37); }

std::string PngDataUrl() { return image::MakeDataUrl("image/png", PngBytes()); }

// What mineru_vl_utils' http_client sends (docs/SCALE_OUT.md, "The request").
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
  // A stable string per kind of error (docs/API.md, "Errors"); it was null for most.
  EXPECT_TRUE(e.contains("code") && e["code"].is_string()) << what << ": " << r->body;
}

class OpenAiApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing_support::ScratchRoot() + "/openai-model";
    auto loaded = testing_support::WriteAndLoadTinyModel(dir, 5);
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    std::shared_ptr<const model::Model> model = std::move(*loaded);
    model_ = new std::shared_ptr<const model::Model>(model);
    dir_ = new std::string(dir);
    auto engine = engine::Engine::Create(model, dir, testing_support::TinyEngineOptions());
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
    delete model_;
    delete dir_;
    model_ = nullptr;
    dir_ = nullptr;
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
  static inline std::shared_ptr<const model::Model>* model_ = nullptr;
  static inline std::string* dir_ = nullptr;
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

TEST_F(OpenAiApiTest, DenseJsonBodiesAre400NamingTheLimit) {
  // Issue 14: the request body's depth-limited parse was quadratic (an array of n `{}` cost
  // O(n^2): 960 KB took 14.7 s of CPU, a 24 MiB body kept a thread busy for hours after the
  // client left), and a 24 MiB body of `[],[],…` cost +605 MB of tree. Both 24 MiB bodies are
  // now refused in one pass with 400 naming the JSON limit, at most kJsonMaxValues values of
  // tree built; before the fix the `{}` body ran past the test timeout. No time is asserted.
  for (const std::string_view item : {"{}", "[]"}) {
    SCOPED_TRACE(item);
    std::string body = R"({"model": "x", "messages": [)";
    while (body.size() < (size_t{24} << 20)) {
      body += item;
      body += ',';
    }
    body.back() = ']';
    body += '}';
    auto r = Exchange(port(), "POST", "/v1/chat/completions", body);
    ExpectOpenAiError(r, 400, "malformed JSON");
    ASSERT_TRUE(r);
    EXPECT_NE(r->body.find("JsonLimits::max_values"), std::string::npos) << r->body.substr(0, 400);
  }
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
  auto remote = Chat(MineruBody("x", "https://example.com/page.png"));
  ExpectOpenAiError(remote, 400, "remote URL");
  EXPECT_NE(remote->body.find("--allow-remote-images"), std::string::npos) << remote->body;
  ExpectOpenAiError(Chat(MineruBody("x", "file:///etc/passwd")), 400, "file URL");
  Json bad_sampling = MineruBody("x", *image_url_);
  bad_sampling["top_p"] = 5.0;
  ExpectOpenAiError(Chat(bad_sampling), 400, "engine refuses sampling");
  Json bad_type = MineruBody("x", *image_url_);
  bad_type["temperature"] = "hot";
  ExpectOpenAiError(Chat(bad_type), 400, "wrong field type");
}

// A server on `engine` with `api` options (model id kModelId), on a free port.
std::unique_ptr<HttpServer> StartServer(engine::Engine& engine, OpenAiOptions api) {
  auto server = std::make_unique<HttpServer>();
  api.model_id = kModelId;
  AddOpenAiRoutes(*server, engine, api);
  ServerOptions options;
  options.port = 0;
  auto started = server->Start(options);
  EXPECT_TRUE(started) << started.error().ToString();
  return server;
}

std::optional<Response> ChatOn(const HttpServer& server, const Json& body) {
  return Exchange(server.port(), "POST", "/v1/chat/completions", body.dump());
}

TEST_F(OpenAiApiTest, RemoteImagesAreFetchedOnlyWhenAllowed) {
  const std::vector<uint8_t> png = PngBytes();
  testing_support::ImageServer images;
  ASSERT_TRUE(images.Start(std::string(png.begin(), png.end())));
  OpenAiOptions api;
  api.allow_remote_images = true;
  api.allow_private_remote_images = true;  // the image server listens on 127.0.0.1
  api.max_image_bytes = 1 << 20;
  auto allowing = StartServer(*engine_, api);

  // The same image by URL and by data URL: the same answer (greedy decoding).
  auto by_url = ChatOn(*allowing, MineruBody("\nText Recognition:", images.Url("/image.png")));
  ASSERT_TRUE(by_url);
  ASSERT_EQ(by_url->status, 200) << by_url->body;
  auto by_data = ChatOn(*allowing, MineruBody("\nText Recognition:", *image_url_));
  ASSERT_TRUE(by_data);
  ASSERT_EQ(by_data->status, 200) << by_data->body;
  EXPECT_EQ((*ParseJson(by_url->body, "c"))["choices"][0]["message"],
            (*ParseJson(by_data->body, "c"))["choices"][0]["message"]);

  auto missing = ChatOn(*allowing, MineruBody("x", images.Url("/missing")));
  ExpectOpenAiError(missing, 400, "404 behind the URL");
  EXPECT_NE(missing->body.find("404"), std::string::npos) << missing->body;
  auto too_big = ChatOn(*allowing, MineruBody("x", images.Url("/big/1048577")));
  ExpectOpenAiError(too_big, 400, "image over max_image_bytes");
  EXPECT_NE(too_big->body.find("1048576"), std::string::npos) << too_big->body;
  ExpectOpenAiError(ChatOn(*allowing, MineruBody("x", images.Url("/to-file"))), 400,
                    "redirect to file://");
  ExpectOpenAiError(ChatOn(*allowing, MineruBody("x", "file:///etc/passwd")), 400,
                    "file:// even when remote images are allowed");

  // The default server (remote images off) refuses the URL that the other one fetched.
  auto refused = Chat(MineruBody("\nText Recognition:", images.Url("/image.png")));
  ExpectOpenAiError(refused, 400, "remote images off");
  EXPECT_NE(refused->body.find("--allow-remote-images"), std::string::npos) << refused->body;
}

// With --allow-remote-images alone, a URL that reaches the server's own host or network is
// refused without a connection, in the one text of every unreachable target (before, the chat
// fetched the local image server through 127.0.0.1 and localhost alike).
TEST_F(OpenAiApiTest, RemoteImagesReachOnlyPublicAddressesUnlessPrivateAllowed) {
  const std::vector<uint8_t> png = PngBytes();
  testing_support::ImageServer images;
  ASSERT_TRUE(images.Start(std::string(png.begin(), png.end())));
  OpenAiOptions api;
  api.allow_remote_images = true;
  auto public_only = StartServer(*engine_, api);
  const int received = images.Received();
  ASSERT_GE(received, 0);
  const std::string port = std::to_string(images.port());
  for (const std::string& url :
       {images.Url("/image.png"), "http://localhost:" + port + "/image.png",
        "http://2130706433:" + port + "/image.png", "http://evil@127.0.0.1:" + port + "/image.png",
        std::string("http://169.254.169.254/latest/meta-data/")}) {
    auto refused = ChatOn(*public_only, MineruBody("x", url));
    ExpectOpenAiError(refused, 400, url);
    EXPECT_NE(refused->body.find(UnreachableText(api.remote_image_timeout)), std::string::npos)
        << refused->body;
  }
  EXPECT_EQ(images.Received(), received);
}

// Holds an engine's thread still: a request whose first token blocks the engine thread (inside
// its on_token callback) until Release. While held, nothing is admitted, generated or expired,
// so what the test submits stays exactly where it is.
class EngineHold {
 public:
  explicit EngineHold(engine::Engine& engine) {
    engine::Request request;
    request.prompt_ids = {9707, 11, 1879, 0};
    request.max_new_tokens = 64;
    request.stop_ids = std::vector<int32_t>{};
    request.on_token = [this](const engine::TokenEvent& event) {
      if (event.finished) return;
      std::unique_lock lock(mu_);
      if (entered_) return;
      entered_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    };
    auto handle = engine.Submit(std::move(request));
    EXPECT_TRUE(handle) << handle.error().ToString();
    if (handle) handle_ = std::make_unique<engine::RequestHandle>(std::move(*handle));
  }
  ~EngineHold() { Release(); }

  // True once the engine thread is blocked (60 s only turn a broken engine into a failure).
  bool WaitHeld() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return entered_; });
  }
  // Cancels the holding request and lets the engine run on.
  void Release() {
    if (handle_) handle_->Cancel();
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
    if (handle_) handle_->Wait();
    handle_.reset();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
  std::unique_ptr<engine::RequestHandle> handle_;
};

std::unique_ptr<engine::Engine> SmallQueueEngine(std::shared_ptr<const model::Model> model,
                                                 const std::string& dir, int64_t max_waiting) {
  engine::EngineOptions options = testing_support::TinyEngineOptions();
  options.max_waiting = max_waiting;
  auto engine = engine::Engine::Create(std::move(model), dir, options);
  EXPECT_TRUE(engine) << engine.error().ToString();
  return engine ? std::move(*engine) : nullptr;
}

TEST_F(OpenAiApiTest, FullEngineQueueIs429WithRetryAfter) {
  auto engine = SmallQueueEngine(*model_, *dir_, 1);
  ASSERT_NE(engine, nullptr);
  auto server = StartServer(*engine, {});
  EngineHold hold(*engine);
  ASSERT_TRUE(hold.WaitHeld());
  // One request waits (max_waiting = 1): the next one is refused.
  engine::Request waiting;
  waiting.prompt_ids = {9707, 11};
  waiting.max_new_tokens = 1;
  auto queued = engine->Submit(std::move(waiting));
  ASSERT_TRUE(queued) << queued.error().ToString();
  auto r = ChatOn(*server, MineruBody("\nText Recognition:", *image_url_));
  ExpectOpenAiError(r, 429, "queue full");
  EXPECT_EQ(r->Header("retry-after"), std::to_string(kRetryAfter.count()));
  EXPECT_EQ((*ParseJson(r->body, "e"))["error"]["code"], "rate_limit_exceeded");
  queued->Cancel();
  hold.Release();
  // Both cancelled requests are gone from the queue once the stats count them (published after
  // the queue shrank); then the same request is answered.
  constexpr int kCancelled = static_cast<int>(engine::FinishReason::kCancelled);
  WaitUntil([&] { return engine->Stats().finished[kCancelled] >= 2; });
  ASSERT_EQ(engine->Stats().finished[kCancelled], 2);
  auto again = ChatOn(*server, MineruBody("\nText Recognition:", *image_url_));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200) << again->body;
}

// request_timeout: the request's deadline passes while the engine is held (so the test does not
// depend on how fast anything runs); the engine then ends it with kDeadline.
TEST_F(OpenAiApiTest, RequestPastItsTimeoutIs504OrAnErrorEvent) {
  auto engine = SmallQueueEngine(*model_, *dir_, 4);
  ASSERT_NE(engine, nullptr);
  OpenAiOptions api;
  api.request_timeout = std::chrono::milliseconds(1);
  auto server = StartServer(*engine, api);
  for (const bool stream : {false, true}) {
    const int64_t submitted = engine->Stats().submitted;
    EngineHold hold(*engine);
    ASSERT_TRUE(hold.WaitHeld());
    Json body = MineruBody("\nText Recognition:", *image_url_);
    if (stream) body["stream"] = true;
    std::optional<Response> r;
    std::thread client([&] { r = ChatOn(*server, body); });
    // The chat request reached the engine (its deadline was set before): wait out the timeout.
    WaitUntil([&] { return engine->Stats().submitted >= submitted + 2; });
    EXPECT_EQ(engine->Stats().submitted, submitted + 2);
    std::this_thread::sleep_for(api.request_timeout * 5);
    hold.Release();
    client.join();
    if (!stream) {
      ExpectOpenAiError(r, 504, "request timeout");
      const Json e = (*ParseJson(r->body, "e"))["error"];
      EXPECT_EQ(e["type"], "timeout_error");
      EXPECT_EQ(e["code"], "request_timeout");
      continue;
    }
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    const std::vector<std::string> events = SseData(r->body);
    ASSERT_GE(events.size(), 3u) << r->body;
    EXPECT_EQ(events.back(), "[DONE]");
    auto error = ParseJson(events[events.size() - 2], "error event");
    ASSERT_TRUE(error) << r->body;
    EXPECT_EQ((*error)["object"], "error");
    EXPECT_EQ((*error)["error"]["code"], "request_timeout");
    for (const std::string& event : events) {
      EXPECT_EQ(event.find("finish_reason\":\"length"), std::string::npos) << event;
    }
  }
}

// Issue 14 over HTTP: sixteen JPEGs of a few hundred bytes declaring 9000 x 9000 each (15 KB of
// request, 3.9 GB decoded) got a server in a 3 GiB cgroup killed; now they are refused with 413
// from their headers, without Retry-After (a permanent limit). A full budget of images in
// flight is 503 with Retry-After; a parameter past its limit is 400 naming it. The budget is
// given back once the engine is done with the images.
TEST_F(OpenAiApiTest, ImageBudgetsAnswer413Or503AndParameterLimits400) {
  ByteBudget in_flight(image::kDefaultMaxImageBytesInFlight);
  OpenAiOptions api;
  api.limits.images.in_flight = &in_flight;
  auto server = StartServer(*engine_, api);

  auto jpeg = image::EncodeJpeg(*image::MakeImage(8, 8, 128, 128, 128));
  ASSERT_TRUE(jpeg);
  std::vector<uint8_t> bomb = *jpeg;
  for (size_t i = 2; i + 8 < bomb.size(); ++i) {
    if (bomb[i] == 0xff && bomb[i + 1] == 0xc0) {
      bomb[i + 5] = bomb[i + 7] = 9000 >> 8;
      bomb[i + 6] = bomb[i + 8] = 9000 & 0xff;
      break;
    }
  }
  Json body = MineruBody("\nText Recognition:", image::MakeDataUrl("image/jpeg", bomb));
  Json& content = body["messages"][1]["content"];
  for (int i = 1; i < 16; ++i) content.insert(content.begin(), content[0]);
  auto refused = ChatOn(*server, body);
  ExpectOpenAiError(refused, 413, "sixteen 9000 x 9000 JPEGs");
  EXPECT_NE(refused->body.find("--max-request-decoded-bytes"), std::string::npos) << refused->body;
  EXPECT_EQ(refused->Header("retry-after"), "");
  EXPECT_EQ((*ParseJson(refused->body, "e"))["error"]["code"], "limit_exceeded");
  EXPECT_EQ(in_flight.in_use(), 0u);

  {
    auto others = in_flight.TryReserve(in_flight.capacity());
    ASSERT_TRUE(others);
    auto busy = ChatOn(*server, MineruBody("\nText Recognition:", *image_url_));
    ExpectOpenAiError(busy, 503, "budget of images in flight full");
    EXPECT_EQ(busy->Header("retry-after"), std::to_string(kRetryAfter.count()));
  }

  Json ngram = MineruBody("\nText Recognition:", *image_url_);
  ngram["vllm_xargs"]["no_repeat_ngram_size"] = 2147483647;
  auto too_long = ChatOn(*server, ngram);
  ExpectOpenAiError(too_long, 400, "no_repeat_ngram_size over its limit");
  EXPECT_NE(too_long->body.find("--max-no-repeat-ngram-size"), std::string::npos);

  auto ok = ChatOn(*server, MineruBody("\nText Recognition:", *image_url_));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  // The engine drops a request's images once they are encoded; the answer may come first.
  WaitUntil([&] { return in_flight.in_use() == 0; });
  EXPECT_EQ(in_flight.in_use(), 0u);
  EXPECT_GT(in_flight.peak(), 0u);
}

// A server on `engine` with `api`, one handler thread, the probes and /metrics.
std::unique_ptr<HttpServer> StartOneThreadServer(engine::Engine& engine, OpenAiOptions api,
                                                 ServiceMetrics& metrics) {
  auto server = std::make_unique<HttpServer>();
  api.model_id = kModelId;
  AddOpenAiRoutes(*server, engine, api);
  AddHealthRoutes(*server);
  AddMetricsRoute(*server, metrics);
  ServerOptions options;
  options.port = 0;
  options.handler_threads = 1;
  auto started = server->Start(options);
  EXPECT_TRUE(started) << started.error().ToString();
  return server;
}

// Waits (bounded: a hang fails the test) until the engine has seen `n` more submissions.
bool WaitSubmitted(engine::Engine& engine, int64_t n) {
  return WaitUntil([&] { return engine.Stats().submitted >= n; });
}

// Issue 14: each generating request held a handler thread for its whole generation, so 140
// streaming chats starved /health/ready. With one handler thread and the engine held, three
// chats (two plain, one streamed) all reach the engine, and while they generate the probes,
// /metrics and a route on the handler pool (/v1/models) are answered.
TEST_F(OpenAiApiTest, GeneratingChatsHoldNoHandlerThread) {
  auto engine = SmallQueueEngine(*model_, *dir_, 16);
  ASSERT_NE(engine, nullptr);
  ServiceMetrics metrics;
  auto server = StartOneThreadServer(*engine, {}, metrics);
  const int64_t submitted = engine->Stats().submitted;
  EngineHold hold(*engine);
  ASSERT_TRUE(hold.WaitHeld());
  std::vector<std::optional<Response>> replies(3);
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back([&, i] {
      Json body = MineruBody("\nText Recognition:", *image_url_);
      if (i == 2) body["stream"] = true;
      replies[static_cast<size_t>(i)] = ChatOn(*server, body);
      ++answered;
    });
  }
  ASSERT_TRUE(WaitSubmitted(*engine, submitted + 4)) << "a chat holds the only handler thread";
  for (const char* path : {"/health/live", "/health/ready", "/metrics", "/v1/models"}) {
    auto probe = Exchange(server->port(), "GET", path);
    ASSERT_TRUE(probe) << path;
    EXPECT_EQ(probe->status, 200) << path;
  }
  EXPECT_EQ(answered.load(), 0) << "answered while the engine is held";
  hold.Release();
  for (auto& client : clients) client.join();
  for (size_t i = 0; i < replies.size(); ++i) {
    ASSERT_TRUE(replies[i]) << i;
    EXPECT_EQ(replies[i]->status, 200) << replies[i]->body;
  }
  EXPECT_EQ(SseData(replies[2]->body).back(), "[DONE]");
}

// max_chat_in_flight at its boundary: with 2, two chats waiting on a held engine are accepted
// and a third is refused 429 with Retry-After naming the flag (before its body is parsed); once
// they finish a slot is free again.
TEST_F(OpenAiApiTest, ChatsInFlightExactlyAcceptedOneMoreIs429) {
  auto engine = SmallQueueEngine(*model_, *dir_, 16);
  ASSERT_NE(engine, nullptr);
  OpenAiOptions api;
  api.max_chat_in_flight = 2;
  auto server = StartServer(*engine, api);
  const int64_t submitted = engine->Stats().submitted;
  EngineHold hold(*engine);
  ASSERT_TRUE(hold.WaitHeld());
  std::vector<std::optional<Response>> replies(2);
  std::vector<std::thread> clients;
  for (int i = 0; i < 2; ++i) {
    clients.emplace_back([&, i] {
      replies[static_cast<size_t>(i)] =
          ChatOn(*server, MineruBody("\nText Recognition:", *image_url_));
    });
  }
  ASSERT_TRUE(WaitSubmitted(*engine, submitted + 3));
  auto refused = ChatOn(*server, MineruBody("\nText Recognition:", *image_url_));
  ExpectOpenAiError(refused, 429, "over max_chat_in_flight");
  EXPECT_EQ(refused->Header("retry-after"), std::to_string(kRetryAfter.count()));
  EXPECT_NE(refused->body.find("--max-chat-in-flight"), std::string::npos) << refused->body;
  EXPECT_EQ(engine->Stats().submitted, submitted + 3) << "the refused chat reached the engine";
  hold.Release();
  for (auto& client : clients) client.join();
  for (const auto& reply : replies) {
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 200) << reply->body;
  }
  auto again = ChatOn(*server, MineruBody("\nText Recognition:", *image_url_));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200) << again->body;
}

// Issue 14: a request still generating at the end of the drain got a closed socket. Stop now
// answers a plain chat 503 and ends a stream with an error event and [DONE], and returns (the
// chats held no handler thread).
TEST_F(OpenAiApiTest, StopEndsGeneratingChatsWith503AndAnErrorEvent) {
  auto engine = SmallQueueEngine(*model_, *dir_, 16);
  ASSERT_NE(engine, nullptr);
  auto server = StartServer(*engine, {});
  const int64_t submitted = engine->Stats().submitted;
  EngineHold hold(*engine);
  ASSERT_TRUE(hold.WaitHeld());
  std::optional<Response> plain, streamed;
  std::thread plain_client(
      [&] { plain = ChatOn(*server, MineruBody("\nText Recognition:", *image_url_)); });
  Json stream_body = MineruBody("\nText Recognition:", *image_url_);
  stream_body["stream"] = true;
  std::thread stream_client([&] { streamed = ChatOn(*server, stream_body); });
  ASSERT_TRUE(WaitSubmitted(*engine, submitted + 3));
  EXPECT_TRUE(server->Stop(std::chrono::milliseconds(400)));
  plain_client.join();
  stream_client.join();
  hold.Release();
  ExpectOpenAiError(plain, 503, "stopped while generating");
  EXPECT_EQ(plain->Header("retry-after"), std::to_string(kRetryAfter.count()));
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200);
  const std::vector<std::string> events = SseData(streamed->body);
  ASSERT_GE(events.size(), 2u) << streamed->body;
  EXPECT_EQ(events.back(), "[DONE]");
  auto error = ParseJson(events[events.size() - 2], "error event");
  ASSERT_TRUE(error) << streamed->body;
  EXPECT_EQ((*error)["error"]["type"], "unavailable_error");
}

}  // namespace
}  // namespace mineru::service
