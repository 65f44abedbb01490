// SPDX-License-Identifier: Apache-2.0
// Clients that go away in the middle of POST /v1/chat/completions (what vLLM's server promises:
// an abandoned request is aborted),
// on a tiny random checkpoint with the Qwen2 tokenizer: during the upload, while queued, during
// prefill and during decode, streaming and not. "Nothing lost": the engine's work for the request
// stops (or never starts), its KV blocks are freed, other requests' outputs are unchanged, and the
// server answers a known request with the same output as before.
//
// Determinism: EngineOptions::before_iteration holds the engine thread between two iterations
// (EngineGate), so a request sits in exactly the state a case needs while its client leaves.
// A stream's disconnect is observable: the server fires the stream's disconnect callbacks (which
// cancel the request) before it stops counting the request in flight, so a case waits for
// in_flight_requests() to drop before letting the engine go on. A non-streaming request is
// cancelled by the same kind of callback (its Responder's, chat_generation.cc), but it stays in
// flight until the engine has ended it and its answer is written, so nothing outside marks the
// moment; those cases keep the engine held for kHandlerNoticeGrace instead.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "../support/http_client.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "base/json.h"
#include "service/openai_api.h"
#include "tiny_chat.h"

namespace mineru::service {
namespace {

using testing_support::Client;
using testing_support::Exchange;
using testing_support::HttpReply;
using testing_support::OcrRequest;
using testing_support::PostRequest;
using testing_support::WaitUntil;

constexpr char kModelId[] = "tiny-mineru";
// Bound on every wait for a state the test expects; reaching it fails the test (a hang becomes a
// failure, it is not a timing assertion).
constexpr std::chrono::seconds kWaitLimit{60};
// How long a non-streaming case keeps the engine held after its client left: ample for the
// server's disconnect watch to see the close and cancel the request.
constexpr std::chrono::milliseconds kHandlerNoticeGrace{1000};
// Small enough that the long prompt's prefill spans several iterations.
constexpr int64_t kMaxBatchTokens = 32;
constexpr int kCancelled = static_cast<int>(engine::FinishReason::kCancelled);

// Holds the engine thread at the top of an iteration on request (the before_iteration hook).
class EngineGate {
 public:
  void Hook() {
    std::unique_lock lock(mu_);
    while (hold_ && passes_ == 0) {
      held_ = true;
      cv_.notify_all();
      cv_.wait(lock);
    }
    held_ = false;
    if (passes_ > 0) --passes_;
    cv_.notify_all();
  }
  // The engine stops at the top of its next iteration.
  void Hold() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  // Waits until the engine thread stands in the hook.
  bool WaitHeld() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kWaitLimit, [&] { return held_; });
  }
  // Lets exactly one iteration run and waits until the engine is held again (so its stats are
  // published). Only while requests are waiting or running: an idle engine sleeps elsewhere.
  bool Step() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kWaitLimit, [&] { return held_; })) return false;
    passes_ = 1;
    held_ = false;
    cv_.notify_all();
    return cv_.wait_for(lock, kWaitLimit, [&] { return passes_ == 0 && held_; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    hold_ = false;
    passes_ = 0;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  bool held_ = false;
  int passes_ = 0;
};

// A text-only prompt of several hundred tokens: its prefill takes many kMaxBatchTokens steps.
Json LongTextBody(bool stream) {
  std::string text = "Summarize:";
  for (int i = 0; i < 300; ++i) text += " lorem";
  Json body{{"model", kModelId},
            {"messages", {{{"role", "user"}, {"content", text}}}},
            {"temperature", 0.0},
            {"max_tokens", 200}};
  if (stream) body["stream"] = true;
  return body;
}

std::string ChatRequest(const Json& body) {
  return PostRequest("/v1/chat/completions", body.dump(), "Content-Type: application/json\r\n");
}

// The parts of a chat.completion that do not change between runs (not id, not created).
std::string Essence(const HttpReply& r) {
  auto json = ParseJson(r.body, "completion");
  if (!json || !json->is_object()) return "unparsable: " + r.body;
  return std::to_string(r.status) + " " + (*json)["choices"].dump() + " " + (*json)["usage"].dump();
}

class DisconnectTest : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing_support::ScratchRoot() + "/disconnect-model");
    auto model = testing_support::WriteAndLoadTinyModel(*dir_, 5);
    ASSERT_TRUE(model) << model.error().ToString();
    model_ = new std::shared_ptr<const model::Model>(std::move(*model));
    image_url_ = new std::string(testing_support::PatternPngDataUrl(112, 84, 37));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete dir_;
    delete image_url_;
    model_ = nullptr;
    dir_ = nullptr;
    image_url_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(model_, nullptr);
    engine::EngineOptions options = testing_support::TinyEngineOptions();
    options.max_running = 1;  // a second request waits while one runs
    options.max_batch_tokens = kMaxBatchTokens;
    options.vision_max_wait = std::chrono::milliseconds(0);  // images encoded at once
    options.before_iteration = [gate = gate_] { gate->Hook(); };
    auto engine = engine::Engine::Create(*model_, *dir_, options);
    ASSERT_TRUE(engine) << engine.error().ToString();
    engine_ = std::move(*engine);
    OpenAiOptions api;
    api.model_id = kModelId;
    AddOpenAiRoutes(server_, *engine_, api);
    server_.Route("GET", "/health/live",
                  [](const HttpRequest&) { return HttpResponse::Json(200, R"({"status":"ok"})"); });
    ServerOptions server_options;
    server_options.port = 0;
    auto started = server_.Start(server_options);
    ASSERT_TRUE(started) << started.error().ToString();
    known_ = Known();
    ASSERT_EQ(known_.substr(0, 4), "200 ") << known_;
    ASSERT_TRUE(Settle());
  }

  void TearDown() override {
    gate_->Release();
    server_.Stop(std::chrono::seconds(2));
    engine_.reset();
  }

  bool stream() const { return GetParam(); }
  int port() const { return server_.port(); }
  engine::EngineStats Stats() const { return engine_->Stats(); }

  // The known-good request on its own connection.
  std::string Known() {
    auto r = Exchange(port(), "POST", "/v1/chat/completions",
                      OcrRequest(kModelId, *image_url_, 8, false).dump());
    return r ? Essence(*r) : "no response";
  }

  // A stream's first event (the role chunk) arrives once its handler has submitted the request;
  // nothing to wait for without streaming.
  void ReadRoleChunk(Client& client) {
    if (stream()) {
      ASSERT_TRUE(client.ReadUntil("\"role\"")) << client.buffer();
    }
  }

  // After the client of one request in flight closed: until its engine request is cancelled.
  void LetServerNotice(size_t in_flight_after) {
    if (stream()) {
      ASSERT_TRUE(WaitUntil([&] { return server_.in_flight_requests() == in_flight_after; }));
    } else {
      std::this_thread::sleep_for(kHandlerNoticeGrace);
    }
  }

  // A result reaches its client before the engine publishes the stats of the iteration that
  // finished it; once nothing runs or waits, the published stats count every finished request.
  bool Settle() {
    return WaitUntil([&] {
      const engine::EngineStats s = Stats();
      return s.running == 0 && s.waiting == 0;
    });
  }

  // Healthy afterwards: live, nothing held by the engine, the known request unchanged.
  void ExpectHealthy() {
    ASSERT_TRUE(Settle());
    EXPECT_EQ(Stats().kv_blocks_used, 0);
    auto live = Exchange(port(), "GET", "/health/live");
    ASSERT_TRUE(live);
    EXPECT_EQ(live->status, 200);
    EXPECT_EQ(Known(), known_);
  }

  static inline std::string* dir_ = nullptr;
  static inline std::shared_ptr<const model::Model>* model_ = nullptr;
  static inline std::string* image_url_ = nullptr;

  std::shared_ptr<EngineGate> gate_ = std::make_shared<EngineGate>();
  std::unique_ptr<engine::Engine> engine_;
  HttpServer server_;
  std::string known_;
};

// (a) Headers and half the body, then the client leaves: no handler runs, nothing submitted.
TEST_P(DisconnectTest, DuringUploadNothingIsSubmitted) {
  const engine::EngineStats before = Stats();
  const std::string body = OcrRequest(kModelId, *image_url_, 8, stream()).dump();
  const std::string request = ChatRequest(body);
  {
    Client client(port());
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.Send(request.substr(0, request.size() - body.size() / 2)));
    ASSERT_TRUE(WaitUntil([&] { return server_.open_connections() == 1; }));
  }
  ASSERT_TRUE(WaitUntil([&] { return server_.open_connections() == 0; }));
  EXPECT_EQ(server_.in_flight_requests(), 0u);
  const engine::EngineStats after = Stats();
  EXPECT_EQ(after.submitted, before.submitted);
  EXPECT_EQ(after.rejected, before.rejected);
  ExpectHealthy();
}

// (b) The second of two requests waits (max_running 1) while the engine is held; its client
// leaves: it ends cancelled without being admitted (its image never encoded, no token of it
// generated) and the first completes exactly as it does alone.
TEST_P(DisconnectTest, WhileQueuedNeverAdmitted) {
  const engine::EngineStats before = Stats();
  gate_->Hold();
  Client first(port());
  ASSERT_TRUE(first.Send(ChatRequest(OcrRequest(kModelId, *image_url_, 8, false))));
  ASSERT_TRUE(WaitUntil([&] { return Stats().submitted == before.submitted + 1; }));
  ASSERT_TRUE(gate_->Step());  // admitted, image encoded, prefill begun
  ASSERT_EQ(Stats().running, 1);

  Client second(port());
  ASSERT_TRUE(second.Send(ChatRequest(OcrRequest(kModelId, *image_url_, 8, stream()))));
  ReadRoleChunk(second);
  ASSERT_TRUE(WaitUntil([&] { return Stats().submitted == before.submitted + 2; }));
  ASSERT_TRUE(gate_->Step());  // taken into the waiting list; no room to admit it
  engine::EngineStats queued = Stats();
  ASSERT_EQ(queued.running, 1);
  ASSERT_EQ(queued.waiting, 1);
  second.Close();
  LetServerNotice(1);
  gate_->Release();

  auto reply = first.ReadResponse();
  ASSERT_TRUE(reply);
  EXPECT_EQ(Essence(*reply), known_);
  // The first's result reaches its client before the engine publishes that iteration's stats.
  ASSERT_TRUE(WaitUntil([&] {
    const engine::EngineStats s = Stats();
    return s.finished[kCancelled] == before.finished[kCancelled] + 1 && s.running == 0;
  }));
  const engine::EngineStats after = Stats();
  EXPECT_EQ(after.vision_images, before.vision_images + 1) << "the queued request's image ran";
  auto json = ParseJson(reply->body, "completion");
  ASSERT_TRUE(json);
  EXPECT_EQ(after.generated_tokens - before.generated_tokens,
            (*json)["usage"]["completion_tokens"].get<int64_t>())
      << "tokens were generated for the queued request";
  EXPECT_EQ(after.kv_blocks_used, 0);
  ExpectHealthy();
}

// (c) A long prompt in mid-prefill (running, no token yet) when its client leaves: cancelled
// without one generated token, its KV blocks freed.
TEST_P(DisconnectTest, DuringPrefillStopsBeforeAnyToken) {
  const engine::EngineStats before = Stats();
  gate_->Hold();
  Client client(port());
  ASSERT_TRUE(client.Send(ChatRequest(LongTextBody(stream()))));
  ReadRoleChunk(client);
  ASSERT_TRUE(WaitUntil([&] { return Stats().submitted == before.submitted + 1; }));
  ASSERT_TRUE(gate_->Step());  // admitted, first prefill chunk
  ASSERT_TRUE(gate_->Step());  // second chunk: prefill spans iterations
  const engine::EngineStats mid = Stats();
  ASSERT_EQ(mid.running, 1);
  ASSERT_GT(mid.kv_blocks_used, 0);
  ASSERT_EQ(mid.generated_tokens, before.generated_tokens) << "prefill ended within two steps";
  client.Close();
  LetServerNotice(0);
  gate_->Release();
  ASSERT_TRUE(
      WaitUntil([&] { return Stats().finished[kCancelled] == before.finished[kCancelled] + 1; }));
  const engine::EngineStats after = Stats();
  EXPECT_EQ(after.generated_tokens, before.generated_tokens);
  EXPECT_EQ(after.kv_blocks_used, 0);
  EXPECT_EQ(after.running, 0);
  ExpectHealthy();
}

// (d) Decoding when its client leaves: cancelled at the next iteration (not one more token),
// its KV blocks freed.
TEST_P(DisconnectTest, DuringDecodeStopsWithinOneIteration) {
  const engine::EngineStats before = Stats();
  gate_->Hold();
  Client client(port());
  ASSERT_TRUE(client.Send(ChatRequest(OcrRequest(kModelId, *image_url_, 200, stream()))));
  ReadRoleChunk(client);
  ASSERT_TRUE(WaitUntil([&] { return Stats().submitted == before.submitted + 1; }));
  for (int i = 0; i < 20 && Stats().generated_tokens < before.generated_tokens + 2; ++i) {
    ASSERT_TRUE(gate_->Step());
  }
  const engine::EngineStats mid = Stats();
  ASSERT_GE(mid.generated_tokens, before.generated_tokens + 2) << "not decoding after 20 steps";
  ASSERT_EQ(mid.running, 1) << "finished before the disconnect";
  client.Close();
  LetServerNotice(0);
  gate_->Release();
  ASSERT_TRUE(
      WaitUntil([&] { return Stats().finished[kCancelled] == before.finished[kCancelled] + 1; }));
  const engine::EngineStats after = Stats();
  EXPECT_EQ(after.generated_tokens, mid.generated_tokens)
      << "decoding went on after the disconnect";
  EXPECT_EQ(after.kv_blocks_used, 0);
  ExpectHealthy();
}

INSTANTIATE_TEST_SUITE_P(Chat, DisconnectTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Streaming" : "NonStreaming";
                         });

}  // namespace
}  // namespace mineru::service
