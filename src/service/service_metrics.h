// SPDX-License-Identifier: Apache-2.0
// The server's metric set (prefix "mineru_", the concepts of vLLM's metrics plus document-level
// ones), one object the server owns, and the GET /metrics route that serves it.
//
//   ServiceMetrics metrics;
//   options.on_request = [&](const RequestRecord& r) { metrics.ObserveHttp(r); };
//   engine_options.on_request_finished = [&](const engine::GenerationResult& r) {
//     metrics.ObserveEngineRequest(r);
//   };
//   metrics.SetEngineStats([&] { return engine->Stats(); });
//   AddMetricsRoute(server, metrics);
//
// Every Observe* method is thread-safe and cheap (atomics and a short lock); the callbacks set
// with Set* are called on the scraping thread during Render.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "engine/engine.h"
#include "pipeline/remote_generator.h"
#include "service/http_server.h"
#include "service/metrics.h"

namespace mineru::service {

// Request-level latencies (HTTP requests, engine requests' queue/prefill/decode/end-to-end
// times): roughly log-spaced from 5 ms to 10 minutes.
inline constexpr std::array<double, 17> kLatencyBucketsSeconds = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600};
// Per-token latencies (time per output token): 1 ms to 5 s.
inline constexpr std::array<double, 13> kTokenLatencyBucketsSeconds = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5};
// One document page through the pipeline: 100 ms to 10 minutes.
inline constexpr std::array<double, 12> kPageBucketsSeconds = {0.1, 0.25, 0.5, 1,   2.5, 5,
                                                               10,  25,   50,  100, 300, 600};
// One whole task (many pages): 1 s to 2 hours.
inline constexpr std::array<double, 12> kTaskBucketsSeconds = {1,   5,   10,   30,   60,   120,
                                                               300, 600, 1200, 1800, 3600, 7200};
// mineru_generation_tokens_per_second: the generated-token rate over about this long.
inline constexpr std::chrono::seconds kTokenRateWindow{10};

// A counter's rate over a sliding window, from (time, value) samples taken at each scrape.
// Samples older than the window are dropped, except the newest of them, so that scrapes further
// apart than the window still give the rate since the previous scrape. Not thread-safe.
class WindowedRate {
 public:
  using Clock = std::chrono::steady_clock;
  explicit WindowedRate(std::chrono::steady_clock::duration window) : window_(window) {}
  // Adds a sample and returns the rate (per second) between the oldest kept sample and this
  // one; 0 with no earlier sample, no time passed, or a counter that went backwards.
  double Sample(Clock::time_point now, double value);

 private:
  Clock::duration window_;
  std::deque<std::pair<Clock::time_point, double>> samples_;
};

class ServiceMetrics {
 public:
  ServiceMetrics();
  ServiceMetrics(const ServiceMetrics&) = delete;
  ServiceMetrics& operator=(const ServiceMetrics&) = delete;

  // HTTP: mineru_http_requests_total{method,route,status} for every answered request,
  // mineru_http_request_duration_seconds{method,route} for those a route or handler answered,
  // mineru_http_rejected_total{reason} for the server's refusals. Methods other than the
  // standard ones are counted as "other" (a client chooses them: unbounded label values).
  void ObserveHttp(const RequestRecord& record);
  // A refusal decided by a handler: mineru_http_rejected_total{reason}.
  void ObserveRejected(std::string_view reason);
  void ObserveQueueFull() { ObserveRejected("queue_full"); }

  // Engine: gauges and counters read from `stats` at each scrape (absent until set).
  void SetEngineStats(std::function<engine::EngineStats()> stats);
  // Per finished request (EngineOptions::on_request_finished): the latency histograms.
  void ObserveEngineRequest(const engine::GenerationResult& result);

  // The model server behind --model-server (pipeline/remote_generator.h): counters and gauges
  // read from `stats` at each scrape (absent until set), and the latency histogram per finished
  // request (RemoteGeneratorOptions::on_request_finished).
  void SetModelServerStats(std::function<pipeline::RemoteGeneratorStats()> stats);
  void ObserveModelServerRequest(const pipeline::RemoteRequestRecord& record);

  // Documents.
  void ObservePage(double seconds);
  void ObserveTask(std::string_view final_status, double seconds);
  // (queued, processing) task counts, read at each scrape (absent until set).
  void SetTaskGauges(std::function<std::pair<int64_t, int64_t>()> counts);
  // tier e.g. "memory", "redis"; result "hit" or "miss".
  void ObserveCache(std::string_view tier, bool hit);
  // A lookup or store of the tier that failed (served as a miss): result "error".
  void ObserveCacheError(std::string_view tier);
  // A failed read or write of task state shared through Redis (tasks/shared_tasks.h).
  void ObserveSharedTaskError();

  // The text exposition of every metric.
  std::string Render();

 private:
  metrics::Registry registry_;
  // HTTP.
  metrics::CounterFamily& http_requests_;
  metrics::HistogramFamily& http_duration_;
  metrics::CounterFamily& http_rejected_;
  // Engine requests.
  metrics::Histogram& time_to_first_token_;
  metrics::Histogram& time_per_output_token_;
  metrics::Histogram& e2e_latency_;
  metrics::Histogram& queue_time_;
  metrics::Histogram& prefill_time_;
  metrics::Histogram& decode_time_;
  metrics::Histogram& vision_time_;
  // Model server requests.
  metrics::Histogram& model_server_seconds_;
  // Documents.
  metrics::Counter& pages_;
  metrics::Histogram& page_seconds_;
  metrics::CounterFamily& tasks_finished_;
  metrics::Histogram& task_seconds_;
  metrics::CounterFamily& cache_requests_;
  metrics::Counter& shared_task_errors_;

  // Scrape state: Render holds scrape_mu_ while the registry's callbacks read these.
  std::mutex scrape_mu_;
  std::function<engine::EngineStats()> engine_stats_;
  std::function<std::pair<int64_t, int64_t>()> task_counts_;
  std::optional<engine::EngineStats> engine_snapshot_;
  std::function<pipeline::RemoteGeneratorStats()> model_server_stats_;
  std::optional<pipeline::RemoteGeneratorStats> model_server_snapshot_;
  std::optional<std::pair<int64_t, int64_t>> task_snapshot_;
  double token_rate_ = 0;
  WindowedRate token_rate_window_{kTokenRateWindow};
  double start_time_seconds_ = 0;  // Unix time this object was made (at server start)
};

// GET /metrics: 200 with Content-Type "text/plain; version=0.0.4; charset=utf-8", served on the
// I/O thread (RouteTraits::on_io_thread), so a scrape never waits for a handler thread.
void AddMetricsRoute(HttpServer& server, ServiceMetrics& metrics);

}  // namespace mineru::service
