// SPDX-License-Identifier: Apache-2.0
// Many clients at once against the OpenAI routes on a tiny random checkpoint (with the Qwen2
// tokenizer): 50 threads, each sending MinerU-style chat requests (a small crop image as a PNG
// data URL, a few output tokens) over one keep-alive connection. "Nothing lost": every request
// gets a 200 with a well-formed chat.completion, the engine ends with nothing running and no KV
// block in use, and a second equal round leaves the process's memory where the first left it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "../support/scratch.h"
#include "base/json.h"
#include "base/process_memory.h"
#include "service/openai_api.h"
#include "tiny_chat.h"

namespace mineru::service {
namespace {

using testing_support::Client;
using testing_support::OcrRequest;
using testing_support::PostRequest;

constexpr char kModelId[] = "tiny-mineru";
constexpr int kClients = 50;
constexpr int kRequestsPerClient = 3;
constexpr int kMaxTokens = 4;
// RSS after the second round may exceed RSS after the first by at most this much. The first
// round has already grown everything that is reused (KV cache pages touched, malloc arenas of
// the handler and engine threads, the server's buffers), so the second round should add
// nothing; the margin absorbs allocator noise (arena trimming, fragmentation across 50+
// threads). A leak of what one request carries (its PNG, decoded pixels, ~75 KB of pixel
// values) over the 150 requests of a round would be about 11 MiB, above it.
constexpr int64_t kRssMarginBytes = int64_t{8} << 20;

// A small crop (what MinerU sends per layout block), different for each client and request.
std::string CropDataUrl(int client, int request) {
  return testing_support::PatternPngDataUrl(56 + 28 * (client % 3), 28 + 28 * (request % 2), 31,
                                            client * 7 + request);
}

// "" when the reply is a well-formed chat.completion, else what is wrong with it.
std::string CheckReply(const std::optional<testing_support::HttpReply>& r) {
  if (!r) return "no response";
  if (r->status != 200) return "status " + std::to_string(r->status) + ": " + r->body;
  auto json = ParseJson(r->body, "completion");
  if (!json || !json->is_object()) return "not a JSON object: " + r->body;
  const Json& j = *json;
  if (j.value("object", "") != "chat.completion") return "object: " + r->body;
  if (!j["choices"].is_array() || j["choices"].size() != 1) return "choices: " + r->body;
  const Json& choice = j["choices"][0];
  if (!choice["message"]["content"].is_string()) return "content: " + r->body;
  const std::string finish = choice.value("finish_reason", "");
  if (finish != "stop" && finish != "length") return "finish_reason: " + r->body;
  const Json& usage = j["usage"];
  if (!usage["completion_tokens"].is_number_integer() ||
      usage["completion_tokens"].get<int64_t>() < 1 ||
      usage["completion_tokens"].get<int64_t>() > kMaxTokens ||
      !usage["prompt_tokens"].is_number_integer() ||
      usage["total_tokens"] !=
          usage["prompt_tokens"].get<int64_t>() + usage["completion_tokens"].get<int64_t>()) {
    return "usage: " + r->body;
  }
  return {};
}

class ConcurrencyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing_support::ScratchRoot() + "/concurrency-model";
    auto model = testing_support::WriteAndLoadTinyModel(dir, 7);
    ASSERT_TRUE(model) << model.error().ToString();
    auto engine =
        engine::Engine::Create(std::move(*model), dir, testing_support::TinyEngineOptions());
    ASSERT_TRUE(engine) << engine.error().ToString();
    engine_ = std::move(*engine).release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  // One round: every client thread sends its requests on one keep-alive connection. Returns
  // the problems found ("client 3 request 1: status 500 ...").
  static std::vector<std::string> Round(int port, const std::vector<std::string>& bodies) {
    std::vector<std::vector<std::string>> problems(kClients);
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([&, c] {
        Client client(port);
        for (int r = 0; r < kRequestsPerClient; ++r) {
          const std::string& body = bodies[static_cast<size_t>(c * kRequestsPerClient + r)];
          std::string problem;
          if (!client.Send(PostRequest("/v1/chat/completions", body,
                                       "Content-Type: application/json\r\n"))) {
            problem = "send failed";
          } else {
            problem = CheckReply(client.ReadResponse());
          }
          if (!problem.empty()) {
            problems[static_cast<size_t>(c)].push_back("client " + std::to_string(c) + " request " +
                                                       std::to_string(r) + ": " + problem);
            return;  // the connection's state is unknown now
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    std::vector<std::string> all;
    for (auto& p : problems) all.insert(all.end(), p.begin(), p.end());
    return all;
  }

  static inline engine::Engine* engine_ = nullptr;
};

TEST_F(ConcurrencyTest, FiftyKeepAliveClientsAllAnsweredAndMemoryFlat) {
  ASSERT_NE(engine_, nullptr);
  HttpServer server;
  OpenAiOptions api;
  api.model_id = kModelId;
  AddOpenAiRoutes(server, *engine_, api);
  ServerOptions options;
  options.port = 0;
  options.io_threads = 2;
  options.handler_threads = kClients;  // every client's request generates at once
  ASSERT_TRUE(server.Start(options));

  std::vector<std::string> bodies;
  for (int c = 0; c < kClients; ++c) {
    for (int r = 0; r < kRequestsPerClient; ++r) {
      bodies.push_back(OcrRequest(kModelId, CropDataUrl(c, r), kMaxTokens).dump());
    }
  }
  const engine::EngineStats before = engine_->Stats();
  std::optional<int64_t> rss_after_first;
  for (int round = 0; round < 2; ++round) {
    const std::vector<std::string> problems = Round(server.port(), bodies);
    EXPECT_TRUE(problems.empty()) << problems.size() << " failed, first: " << problems.front();
    // Every reply is in, but the engine publishes its stats after it hands out a result: wait
    // for the iteration to end (bounded; a request left running fails here).
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((engine_->Stats().running != 0 || engine_->Stats().waiting != 0) &&
           std::chrono::steady_clock::now() < limit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const engine::EngineStats s = engine_->Stats();
    EXPECT_EQ(s.running, 0);
    EXPECT_EQ(s.waiting, 0);
    EXPECT_EQ(s.kv_blocks_used, 0);
    EXPECT_EQ(s.submitted - before.submitted, int64_t{kClients} * kRequestsPerClient * (round + 1));
    EXPECT_EQ(s.rejected, before.rejected);
    if (round == 0) rss_after_first = CurrentRssBytes();
  }
  const std::optional<int64_t> rss_after_second = CurrentRssBytes();
  ASSERT_TRUE(rss_after_first && rss_after_second) << "no /proc/self/status";
  EXPECT_LE(*rss_after_second, *rss_after_first + kRssMarginBytes)
      << "RSS grew from " << *rss_after_first << " to " << *rss_after_second << " bytes";
  std::printf("RSS after round 1: %lld bytes, after round 2: %lld bytes\n",
              static_cast<long long>(*rss_after_first), static_cast<long long>(*rss_after_second));
  server.Stop(std::chrono::seconds(2));
  EXPECT_EQ(server.open_connections(), 0u);
}

}  // namespace
}  // namespace mineru::service
