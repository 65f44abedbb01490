// SPDX-License-Identifier: Apache-2.0
// Soak: `mineru-cpp serve` on the tiny random model under mixed load for a fixed time
// (MINERU_SOAK_SECONDS, 60 by default; docs/PERFORMANCE.md records a 10-minute run), from
// kClients client threads, each running every kind of request in turn:
//   chat         OpenAI chat completions with an image (a data URL), each prompt new;
//   chat_stream  the same streamed (SSE) to data: [DONE];
//   parse        a small PDF through POST /v1/document/parse, polled to completion, its result
//                and a page preview read, then deleted (every other one left to retention);
//   task_events  a parse followed through GET /v1/tasks/{id}/events to "event: done";
//   cancel       a 30-page parse deleted while it runs;
//   disconnect   a client that leaves: a chat before its answer, a stream after its first
//                event, an upload halfway through its body, an events stream after one event;
//   probe        /health/ready and /metrics;
//   invalid      a malformed chat body (400) and an unknown task (404).
// The load runs in rounds. After each, the clients stop, the server is left to settle (no
// engine request, no KV block, no task queued or processing) and its resident memory (VmRSS)
// and open descriptors are read from /proc. The first round is the warm-up (allocators,
// caches and retained tasks reach their working size); every later reading must stay within
// kRssGrowthBound and kFdGrowthBound of the reading after it. MinerU's users report services
// that grow until the kernel kills them (opendatalab/MinerU issues 4510 and 5313). What the
// bound catches: the 10-minute run of docs/PERFORMANCE.md makes about 1,000 requests of the
// kinds below (each several HTTP requests), so a leak of 64 KB per request, or one page image
// (3.2 MB at the layout request's 1036 x 1036) per 20 of its 390 tasks, crosses it; the
// 60-second run catches 320 KB per request. Descriptors are exact up to connections still
// closing.
//
// Every request must get its expected answer (previews may also be refused with 503 while two
// renders are in flight); the counts per kind are printed and recorded as test properties.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "base/json.h"
#include "cli_test_util.h"
#include "image/data_url.h"
#include "image/encode.h"
#include "long_pdf.h"
#include "serve_process.h"
#include "serve_usage.h"

namespace mineru::apps {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;
using testing::CliResult;
using testing::Describe;
using testing::LongPdf;
using testing::PageLook;
using testing::ProcessUsage;
using testing::RunCli;
using testing::ServeProcess;
using testing::Succeeded;
using testing_support::Client;
using testing_support::Exchange;
using testing_support::HttpReply;

constexpr int kDefaultSoakSeconds = 60;
constexpr int kClients = 6;
// Growth allowed after the warm-up: resident memory and descriptors (a reading may catch a
// connection the server has not finished closing). Settled readings of a healthy server come in
// two levels about 35 MiB apart (whether the allocator kept the engine's largest buffers at that
// moment): the 10-minute run read 243-289 MiB after a warm-up reading of 245 MiB.
constexpr int64_t kRssGrowthBound = int64_t{64} << 20;
constexpr int kFdGrowthBound = 8;
// Finished tasks kept by the server under test, and the size of each of its caches (documents,
// answers, previews): reached within the warm-up.
constexpr int kRetainedTasks = 32;
constexpr int64_t kCacheBytes = int64_t{256} << 10;

enum Kind { kChat, kChatStream, kParse, kTaskEvents, kCancel, kDisconnect, kProbe, kInvalid };
constexpr int kKinds = 8;
constexpr const char* kKindNames[kKinds] = {"chat",   "chat_stream", "parse", "task_events",
                                            "cancel", "disconnect",  "probe", "invalid"};

Json JsonOf(const std::optional<HttpReply>& r) {
  if (!r) return Json();
  Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  return json.is_discarded() ? Json() : json;
}

// A 112 x 84 PNG with a pattern, as a data URL (what bench-http sends).
std::string ImageDataUrl() {
  image::RgbImage rgb;
  rgb.width = 112;
  rgb.height = 84;
  rgb.pixels.resize(static_cast<size_t>(rgb.width * rgb.height * 3));
  for (size_t i = 0; i < rgb.pixels.size(); ++i) rgb.pixels[i] = static_cast<uint8_t>(i * 37);
  auto png = image::EncodePng(rgb);
  EXPECT_TRUE(png);
  return png ? image::MakeDataUrl("image/png", *png) : std::string();
}

class Load {
 public:
  explicit Load(int port) : port_(port), image_url_(ImageDataUrl()) {}

  // Runs requests from thread `client` until `until`.
  void Run(int client, SteadyClock::time_point until) {
    for (uint64_t i = 0; SteadyClock::now() < until; ++i) {
      const Kind kind = static_cast<Kind>((client + i) % kKinds);
      const uint64_t n = next_++;
      ++sent_[kind];
      switch (kind) {
        case kChat:
          Chat(n);
          break;
        case kChatStream:
          ChatStream(n);
          break;
        case kParse:
          Parse(n);
          break;
        case kTaskEvents:
          TaskEvents(n);
          break;
        case kCancel:
          Cancel(n);
          break;
        case kDisconnect:
          Disconnect(n);
          break;
        case kProbe:
          Probe();
          break;
        case kInvalid:
          Invalid();
          break;
      }
    }
  }

  int64_t sent(int kind) const { return sent_[kind]; }
  int64_t errors(int kind) const { return errors_[kind]; }
  int64_t previews_refused() const { return previews_refused_; }
  int64_t total_errors() const {
    int64_t total = 0;
    for (int k = 0; k < kKinds; ++k) total += errors_[k];
    return total;
  }
  std::string first_error() const {
    std::lock_guard lock(mutex_);
    return first_error_;
  }

 private:
  void Error(Kind kind, const std::string& what) {
    ++errors_[kind];
    std::lock_guard lock(mutex_);
    if (first_error_.empty()) first_error_ = std::string(kKindNames[kind]) + ": " + what;
  }
  // Whether `r` came with `status`; an error of `kind` otherwise.
  bool Expect(Kind kind, const std::optional<HttpReply>& r, int status, const std::string& what) {
    if (r && r->status == status) return true;
    Error(kind, what + ": " +
                    (r ? std::to_string(r->status) + " " + r->body.substr(0, 300)
                       : std::string("no answer")));
    return false;
  }

  std::string ChatBody(uint64_t n, bool stream) const {
    Json body{{"messages",
               {{{"role", "user"},
                 {"content",
                  {{{"type", "image_url"}, {"image_url", {{"url", image_url_}}}},
                   {{"type", "text"}, {"text", "\nText Recognition: " + std::to_string(n)}}}}}}},
              {"temperature", 0.0},
              {"max_tokens", 4}};
    if (stream) body["stream"] = true;
    return body.dump();
  }

  void Chat(uint64_t n) {
    auto r = Exchange(port_, "POST", "/v1/chat/completions", ChatBody(n, false));
    if (!Expect(kChat, r, 200, "chat")) return;
    if (!JsonOf(r)["choices"].is_array()) Error(kChat, "no choices: " + r->body.substr(0, 300));
  }

  void ChatStream(uint64_t n) {
    Client c(port_);
    if (!c.Send(testing_support::PostRequest("/v1/chat/completions", ChatBody(n, true),
                                             "Content-Type: application/json\r\n"
                                             "Connection: close\r\n")) ||
        !c.ReadUntil("data: [DONE]")) {
      Error(kChatStream, "stream did not end with [DONE]: " + c.buffer().substr(0, 300));
    }
  }

  // A small PDF no other request sends (1-3 pages, its page size and colour from n).
  static std::string SmallPdf(uint64_t n, int pages) {
    return LongPdf(pages, PageLook::kDistinct, static_cast<int>(n % 64),
                   72 + static_cast<int>(n / 64 % 97));
  }

  // Submits a PDF; the task id, empty after an error of `kind`.
  std::string Submit(Kind kind, const std::string& pdf) {
    auto r =
        Exchange(port_, "POST", "/v1/document/parse?filename=soak.pdf", pdf, "application/pdf");
    if (!Expect(kind, r, 202, "submit")) return "";
    return JsonOf(r).value("task_id", "");
  }

  // Polls until the task is final (up to 5 minutes); its last state.
  Json WaitFinal(const std::string& id) {
    Json task;
    const auto until = SteadyClock::now() + std::chrono::minutes(5);
    while (SteadyClock::now() < until) {
      task = JsonOf(Exchange(port_, "GET", "/v1/tasks/" + id));
      const std::string status = task.value("status", "");
      if (status != "pending" && status != "processing") break;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return task;
  }

  void Parse(uint64_t n) {
    const std::string id = Submit(kParse, SmallPdf(n, 1 + static_cast<int>(n % 3)));
    if (id.empty()) return;
    const Json done = WaitFinal(id);
    if (done.value("status", "") != "completed") {
      Error(kParse, "task ended " + done.dump().substr(0, 300));
      return;
    }
    Expect(kParse, Exchange(port_, "GET", "/v1/tasks/" + id + "/result"), 200, "result");
    auto preview = Exchange(port_, "GET", "/v1/tasks/" + id + "/pages/0/0");
    if (preview && preview->status == 503) {
      ++previews_refused_;  // two renders in flight: a condition that passes
    } else {
      Expect(kParse, preview, 200, "preview");
    }
    if (n % 2 == 0) Expect(kParse, Exchange(port_, "DELETE", "/v1/tasks/" + id), 200, "delete");
  }

  void TaskEvents(uint64_t n) {
    const std::string id = Submit(kTaskEvents, SmallPdf(n, 1));
    if (id.empty()) return;
    Client c(port_);
    if (!c.Send(
            testing_support::GetRequest("/v1/tasks/" + id + "/events", "Connection: close\r\n")) ||
        !c.ReadUntil("event: done")) {
      Error(kTaskEvents, "no done event: " + c.buffer().substr(0, 300));
    }
    Expect(kTaskEvents, Exchange(port_, "DELETE", "/v1/tasks/" + id), 200, "delete");
  }

  void Cancel(uint64_t n) {
    const std::string id = Submit(kCancel, SmallPdf(n, 30));
    if (id.empty()) return;
    std::this_thread::sleep_for(milliseconds(200 + n % 5 * 100));
    auto r = Exchange(port_, "DELETE", "/v1/tasks/" + id);
    if (!Expect(kCancel, r, 200, "delete")) return;
    const std::string status = JsonOf(r).value("status", "");
    if (status != "cancelled" && status != "completed") Error(kCancel, "status " + status);
  }

  void Disconnect(uint64_t n) {
    Client c(port_);
    switch (n % 4) {
      case 0:  // a chat whose client leaves before the answer
        c.Send(testing_support::PostRequest("/v1/chat/completions", ChatBody(n, false),
                                            "Content-Type: application/json\r\n"));
        break;
      case 1:  // a stream left after its first event
        c.Send(testing_support::PostRequest("/v1/chat/completions", ChatBody(n, true),
                                            "Content-Type: application/json\r\n"));
        c.ReadUntil("data: ");
        break;
      case 2: {  // an upload left halfway through its body
        const std::string pdf = SmallPdf(n, 2);
        c.Send(
            "POST /v1/document/parse?filename=half.pdf HTTP/1.1\r\nHost: soak\r\n"
            "Content-Type: application/pdf\r\nContent-Length: " +
            std::to_string(pdf.size()) + "\r\n\r\n" + pdf.substr(0, pdf.size() / 2));
        break;
      }
      case 3: {  // an events stream left after its first event
        const std::string id = Submit(kDisconnect, SmallPdf(n, 2));
        if (id.empty()) return;
        c.Send(testing_support::GetRequest("/v1/tasks/" + id + "/events"));
        c.ReadUntil("event: ");
        c.Close();
        WaitFinal(id);
        Expect(kDisconnect, Exchange(port_, "DELETE", "/v1/tasks/" + id), 200, "delete");
        break;
      }
    }
    c.Close();
  }

  void Probe() {
    Expect(kProbe, Exchange(port_, "GET", "/health/ready"), 200, "ready");
    Expect(kProbe, Exchange(port_, "GET", "/metrics"), 200, "metrics");
  }

  void Invalid() {
    Expect(kInvalid, Exchange(port_, "POST", "/v1/chat/completions", "{\"messages\": [}"), 400,
           "malformed JSON");
    Expect(kInvalid, Exchange(port_, "GET", "/v1/tasks/no-such-task"), 404, "unknown task");
  }

  const int port_;
  const std::string image_url_;
  std::atomic<uint64_t> next_{0};
  std::atomic<int64_t> sent_[kKinds] = {}, errors_[kKinds] = {};
  std::atomic<int64_t> previews_refused_{0};
  mutable std::mutex mutex_;
  std::string first_error_;
};

std::string Metrics(int port) {
  auto r = Exchange(port, "GET", "/metrics");
  return r ? r->body : "";
}

// Waits (up to 5 minutes) until the engine holds nothing and no task waits or runs.
bool Settled(int port) {
  for (int i = 0; i < 3000; ++i) {
    const std::string m = Metrics(port);
    if (testing::MetricSample(m, "mineru_kv_cache_blocks_used") == 0 &&
        testing::MetricSample(m, "mineru_requests_running") == 0 &&
        testing::MetricSample(m, "mineru_requests_waiting") == 0 &&
        testing::MetricSample(m, "mineru_tasks_processing") == 0 &&
        testing::MetricSample(m, "mineru_tasks_queued") == 0) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return false;
}

struct Reading {
  double at_s = 0;
  ProcessUsage usage;
};

TEST(SoakTest, MixedLoadKeepsMemoryAndDescriptorsFlatAfterTheWarmUp) {
  int total_s = kDefaultSoakSeconds;
  if (const char* env = std::getenv("MINERU_SOAK_SECONDS")) total_s = std::atoi(env);
  ASSERT_GE(total_s, 20) << "MINERU_SOAK_SECONDS";
  // A sixth of the time warms up (20 s to 5 minutes); the rest runs in 4 rounds (10 from 5
  // minutes on).
  const int warm_up_s = std::clamp(total_s / 6, 20, 300);
  const int rounds = total_s >= 300 ? 10 : 4;
  const int round_s = std::max(1, (total_s - warm_up_s) / rounds);

  const std::string scratch = testing::TestDir();
  const std::string model = scratch + "/model";
  const CliResult made = RunCli(
      {"make-model", "--config", "tiny", "-o", model, "--tokenizer-source", MINERU_QWEN_TOKENIZER});
  ASSERT_TRUE(Succeeded(made)) << Describe(made);
  // The caches small enough to be full within the warm-up (by default they may take hundreds
  // of MiB, bounded, which a soak of unique requests would fill for hours).
  ServeProcess server({"--model", model, "--work-dir", scratch + "/work", "--max-tokens", "4",
                       "--max-retained-tasks", std::to_string(kRetainedTasks), "--cache-bytes",
                       std::to_string(kCacheBytes), "--block-cache-bytes",
                       std::to_string(kCacheBytes), "--preview-cache-bytes",
                       std::to_string(kCacheBytes)});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const int port = server.port();
  const SteadyClock::time_point start = SteadyClock::now();
  std::vector<Reading> readings;
  const auto read = [&] {
    readings.push_back({std::chrono::duration<double>(SteadyClock::now() - start).count(),
                        testing::UsageOf(server.pid())});
  };
  read();  // at start

  Load load(port);
  for (int round = 0; round <= rounds; ++round) {
    const auto until = SteadyClock::now() + seconds(round == 0 ? warm_up_s : round_s);
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) clients.emplace_back([&, c] { load.Run(c, until); });
    for (std::thread& t : clients) t.join();
    ASSERT_TRUE(Settled(port)) << Metrics(port);
    // Connections the clients closed last may still be closing on the server's side.
    int fds = testing::UsageOf(server.pid()).open_fds;
    for (int i = 0; i < 50; ++i) {
      std::this_thread::sleep_for(milliseconds(100));
      const int now = testing::UsageOf(server.pid()).open_fds;
      if (now == fds && (readings.size() < 2 || now <= readings[1].usage.open_fds)) break;
      fds = now;
    }
    read();
  }

  // The figures: requests by kind and the readings.
  std::printf("soak: %d s (warm-up %d s, %d rounds of %d s), %d clients\n", total_s, warm_up_s,
              rounds, round_s, kClients);
  std::printf("%-12s %8s %8s\n", "kind", "requests", "errors");
  for (int k = 0; k < kKinds; ++k) {
    std::printf("%-12s %8lld %8lld\n", kKindNames[k], static_cast<long long>(load.sent(k)),
                static_cast<long long>(load.errors(k)));
    RecordProperty(std::string("requests_") + kKindNames[k], static_cast<int>(load.sent(k)));
  }
  std::printf("previews refused (503, render cap): %lld\n",
              static_cast<long long>(load.previews_refused()));
  std::printf("%-10s %10s %10s %8s\n", "at_s", "rss_mib", "peak_mib", "fds");
  for (const Reading& r : readings) {
    std::printf("%-10.0f %10.1f %10.1f %8d\n", r.at_s, testing::Megabytes(r.usage.rss_bytes),
                testing::Megabytes(r.usage.peak_rss_bytes), r.usage.open_fds);
  }
  std::fflush(stdout);
  ASSERT_GE(readings.size(), 3u);
  const ProcessUsage& warm = readings[1].usage;
  RecordProperty("rss_start_mib",
                 static_cast<int>(testing::Megabytes(readings[0].usage.rss_bytes)));
  RecordProperty("rss_after_warm_up_mib", static_cast<int>(testing::Megabytes(warm.rss_bytes)));
  RecordProperty("rss_end_mib",
                 static_cast<int>(testing::Megabytes(readings.back().usage.rss_bytes)));
  RecordProperty("fds_after_warm_up", warm.open_fds);
  RecordProperty("fds_end", readings.back().usage.open_fds);

  EXPECT_EQ(load.total_errors(), 0) << load.first_error();
  for (int k = 0; k < kKinds; ++k) EXPECT_GT(load.sent(k), 0) << kKindNames[k];
  for (size_t i = 2; i < readings.size(); ++i) {
    const ProcessUsage& u = readings[i].usage;
    EXPECT_LE(u.rss_bytes, warm.rss_bytes + kRssGrowthBound)
        << "at " << readings[i].at_s << " s: " << testing::Megabytes(u.rss_bytes)
        << " MiB resident, " << testing::Megabytes(warm.rss_bytes) << " MiB after the warm-up";
    EXPECT_LE(u.open_fds, warm.open_fds + kFdGrowthBound)
        << "at " << readings[i].at_s << " s: " << u.open_fds << " descriptors, " << warm.open_fds
        << " after the warm-up";
  }
  auto ready = Exchange(port, "GET", "/health/ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

}  // namespace
}  // namespace mineru::apps
