// SPDX-License-Identifier: Apache-2.0
// The server's metric set on the metrics registry; see service_metrics.h.
#include "service/service_metrics.h"

#include <string>
#include <vector>

#include "base/process_memory.h"

namespace mineru::service {

namespace {

using metrics::CallbackSample;
using metrics::MetricType;

template <size_t N>
std::vector<double> Buckets(const std::array<double, N>& bounds) {
  return std::vector<double>(bounds.begin(), bounds.end());
}

// Standard methods keep their name; anything else a client sends is "other".
std::string MethodLabel(std::string_view method) {
  static constexpr std::string_view kKnown[] = {"GET",    "HEAD",    "POST", "PUT",
                                                "DELETE", "OPTIONS", "PATCH"};
  for (std::string_view known : kKnown) {
    if (method == known) return std::string(method);
  }
  return "other";
}

std::vector<CallbackSample> One(double value) { return {CallbackSample{{}, value}}; }

}  // namespace

double WindowedRate::Sample(Clock::time_point now, double value) {
  // Keep the newest sample at or before the window's start, and everything after it.
  while (samples_.size() >= 2 && samples_[1].first <= now - window_) samples_.pop_front();
  double rate = 0;
  if (!samples_.empty()) {
    const auto [then, old_value] = samples_.front();
    const double seconds = std::chrono::duration<double>(now - then).count();
    if (seconds > 0 && value >= old_value) rate = (value - old_value) / seconds;
  }
  if (!samples_.empty() && value < samples_.back().second) samples_.clear();  // counter reset
  samples_.emplace_back(now, value);
  return rate;
}

ServiceMetrics::ServiceMetrics()
    : http_requests_(registry_.AddCounter("mineru_http_requests",
                                          "HTTP requests answered, by method, route pattern and "
                                          "status (server refusals included).",
                                          {"method", "route", "status"})),
      http_duration_(registry_.AddHistogram(
          "mineru_http_request_duration_seconds",
          "Time from a request's first byte until its response was written (event streams: "
          "until the stream ended), for requests a route answered.",
          Buckets(kLatencyBucketsSeconds), {"method", "route"})),
      http_rejected_(registry_.AddCounter("mineru_http_rejected",
                                          "Requests refused before or instead of being handled.",
                                          {"reason"})),
      time_to_first_token_(
          registry_
              .AddHistogram("mineru_time_to_first_token_seconds",
                            "Engine requests: submission to first generated token.",
                            Buckets(kLatencyBucketsSeconds))
              .With({})),
      time_per_output_token_(
          registry_
              .AddHistogram("mineru_time_per_output_token_seconds",
                            "Engine requests: decode time per output token after the first.",
                            Buckets(kTokenLatencyBucketsSeconds))
              .With({})),
      e2e_latency_(registry_
                       .AddHistogram("mineru_e2e_request_latency_seconds",
                                     "Engine requests: submission to finish.",
                                     Buckets(kLatencyBucketsSeconds))
                       .With({})),
      queue_time_(registry_
                      .AddHistogram("mineru_request_queue_time_seconds",
                                    "Engine requests: submission to admission.",
                                    Buckets(kLatencyBucketsSeconds))
                      .With({})),
      prefill_time_(registry_
                        .AddHistogram("mineru_request_prefill_time_seconds",
                                      "Engine requests: admission (after vision) to first token.",
                                      Buckets(kLatencyBucketsSeconds))
                        .With({})),
      decode_time_(registry_
                       .AddHistogram("mineru_request_decode_time_seconds",
                                     "Engine requests: first token to finish.",
                                     Buckets(kLatencyBucketsSeconds))
                       .With({})),
      vision_time_(registry_
                       .AddHistogram("mineru_request_vision_time_seconds",
                                     "Engine requests with images: image preprocessing and "
                                     "encoding (the shared vision passes).",
                                     Buckets(kLatencyBucketsSeconds))
                       .With({})),
      model_server_seconds_(
          registry_
              .AddHistogram("mineru_model_server_request_seconds",
                            "Requests to the model server (--model-server): submission to "
                            "answer or failure, every retry included.",
                            Buckets(kLatencyBucketsSeconds))
              .With({})),
      pages_(registry_.AddCounter("mineru_pages", "Document pages processed.").With({})),
      page_seconds_(registry_
                        .AddHistogram("mineru_page_seconds", "Time to process one page.",
                                      Buckets(kPageBucketsSeconds))
                        .With({})),
      tasks_finished_(registry_.AddCounter(
          "mineru_tasks_finished", "Document tasks finished, by final status.", {"status"})),
      task_seconds_(registry_
                        .AddHistogram("mineru_task_seconds",
                                      "Document tasks: submission to final status.",
                                      Buckets(kTaskBucketsSeconds))
                        .With({})),
      cache_requests_(registry_.AddCounter(
          "mineru_cache_requests",
          "Cache lookups by tier and result (hit, miss; error: a failed lookup or store).",
          {"tier", "result"})),
      shared_task_errors_(registry_
                              .AddCounter("mineru_shared_task_errors",
                                          "Failed reads and writes of the task state that API "
                                          "nodes share through Redis.",
                                          {})
                              .With({})) {
  start_time_seconds_ =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  // Engine state, from the snapshot Render takes (absent while no engine is attached).
  auto engine_value = [this](double (*read)(const engine::EngineStats&)) {
    return [this, read]() -> std::vector<CallbackSample> {
      if (!engine_snapshot_) return {};
      return One(read(*engine_snapshot_));
    };
  };
  auto gauge = [&](const char* name, const char* help, double (*read)(const engine::EngineStats&)) {
    registry_.AddCallback(name, help, MetricType::kGauge, {}, engine_value(read));
  };
  auto counter = [&](const char* name, const char* help,
                     double (*read)(const engine::EngineStats&)) {
    registry_.AddCallback(name, help, MetricType::kCounter, {}, engine_value(read));
  };
  using S = engine::EngineStats;
  gauge("mineru_requests_waiting", "Engine requests submitted and not yet admitted.",
        [](const S& s) { return static_cast<double>(s.waiting); });
  gauge("mineru_requests_running", "Engine requests admitted (holding KV cache blocks).",
        [](const S& s) { return static_cast<double>(s.running); });
  gauge("mineru_kv_cache_usage_ratio", "Fraction of KV cache blocks in use (0 to 1).",
        [](const S& s) {
          return s.kv_blocks_total > 0 ? static_cast<double>(s.kv_blocks_used) /
                                             static_cast<double>(s.kv_blocks_total)
                                       : 0.0;
        });
  gauge("mineru_kv_cache_blocks_used", "KV cache blocks in use.",
        [](const S& s) { return static_cast<double>(s.kv_blocks_used); });
  gauge("mineru_kv_cache_blocks_total", "KV cache blocks in all.",
        [](const S& s) { return static_cast<double>(s.kv_blocks_total); });
  counter("mineru_prompt_tokens", "Prompt tokens prefilled by the engine.",
          [](const S& s) { return static_cast<double>(s.prompt_tokens); });
  counter("mineru_generation_tokens", "Tokens generated by the engine.",
          [](const S& s) { return static_cast<double>(s.generated_tokens); });
  counter("mineru_preemptions", "Running engine requests preempted for KV cache space.",
          [](const S& s) { return static_cast<double>(s.preemptions); });
  counter("mineru_vision_images", "Images encoded by the vision tower.",
          [](const S& s) { return static_cast<double>(s.vision_images); });
  registry_.AddCallback("mineru_request_finished", "Engine requests finished, by reason.",
                        MetricType::kCounter, {"reason"}, [this]() {
                          std::vector<CallbackSample> out;
                          if (!engine_snapshot_) return out;
                          for (int r = 0; r < 5; ++r) {
                            auto reason = static_cast<engine::FinishReason>(r);
                            out.push_back({{std::string(engine::FinishReasonName(reason))},
                                           static_cast<double>(engine_snapshot_->finished[r])});
                          }
                          return out;
                        });
  registry_.AddCallback("mineru_generation_tokens_per_second",
                        "Generated tokens per second over the last " +
                            std::to_string(kTokenRateWindow.count()) +
                            " s (or since the previous scrape, when scrapes are further apart).",
                        MetricType::kGauge, {}, [this]() -> std::vector<CallbackSample> {
                          if (!engine_snapshot_) return {};
                          return One(token_rate_);
                        });

  // The model server (--model-server), from the snapshot Render takes.
  using R = pipeline::RemoteGeneratorStats;
  auto remote = [&](const char* name, const char* help, MetricType type, double (*read)(const R&)) {
    registry_.AddCallback(name, help, type, {}, [this, read]() -> std::vector<CallbackSample> {
      if (!model_server_snapshot_) return {};
      return One(read(*model_server_snapshot_));
    });
  };
  remote("mineru_model_server_attempts",
         "HTTP attempts sent to the model server, retries included.", MetricType::kCounter,
         [](const R& s) { return static_cast<double>(s.attempts); });
  remote("mineru_model_server_retries",
         "Attempts after a request's first (transport failures, "
         "429 and 5xx).",
         MetricType::kCounter, [](const R& s) { return static_cast<double>(s.retries); });
  remote("mineru_model_server_requests_in_flight", "Requests the model server is answering now.",
         MetricType::kGauge, [](const R& s) { return static_cast<double>(s.in_flight); });
  remote("mineru_model_server_requests_waiting",
         "Requests waiting for a connection slot (--model-server-concurrency) or a retry.",
         MetricType::kGauge, [](const R& s) { return static_cast<double>(s.waiting); });
  registry_.AddCallback("mineru_model_server_requests",
                        "Model server requests finished, by outcome.", MetricType::kCounter,
                        {"outcome"}, [this]() {
                          std::vector<CallbackSample> out;
                          if (!model_server_snapshot_) return out;
                          const R& s = *model_server_snapshot_;
                          out.push_back({{"ok"}, static_cast<double>(s.succeeded - s.truncated)});
                          out.push_back({{"truncated"}, static_cast<double>(s.truncated)});
                          out.push_back({{"failed"}, static_cast<double>(s.failed)});
                          out.push_back({{"cancelled"}, static_cast<double>(s.cancelled)});
                          return out;
                        });

  // Task queue.
  registry_.AddCallback("mineru_tasks_queued", "Document tasks waiting to be processed.",
                        MetricType::kGauge, {}, [this]() -> std::vector<CallbackSample> {
                          if (!task_snapshot_) return {};
                          return One(static_cast<double>(task_snapshot_->first));
                        });
  registry_.AddCallback("mineru_tasks_processing", "Document tasks being processed.",
                        MetricType::kGauge, {}, [this]() -> std::vector<CallbackSample> {
                          if (!task_snapshot_) return {};
                          return One(static_cast<double>(task_snapshot_->second));
                        });

  // Process.
  registry_.AddCallback("process_resident_memory_bytes", "Resident memory size in bytes.",
                        MetricType::kGauge, {}, []() -> std::vector<CallbackSample> {
                          auto rss = CurrentRssBytes();
                          if (!rss) return {};
                          return One(static_cast<double>(*rss));
                        });
  registry_.AddCallback("mineru_process_peak_resident_memory_bytes",
                        "Peak resident memory size in bytes (VmHWM).", MetricType::kGauge, {},
                        []() -> std::vector<CallbackSample> {
                          auto peak = PeakRssBytes();
                          if (!peak) return {};
                          return One(static_cast<double>(*peak));
                        });
  registry_.AddCallbackGauge("process_start_time_seconds",
                             "Start time of the process since unix epoch in seconds.",
                             [this] { return start_time_seconds_; });
}

void ServiceMetrics::ObserveHttp(const RequestRecord& record) {
  const std::string method = MethodLabel(record.method);
  http_requests_.With({method, record.route, std::to_string(record.status)}).Inc();
  if (record.rejected_reason.empty()) {
    http_duration_.With({method, record.route}).Observe(record.seconds);
  } else {
    http_rejected_.With({record.rejected_reason}).Inc();
  }
}

void ServiceMetrics::ObserveRejected(std::string_view reason) {
  http_rejected_.With({std::string(reason)}).Inc();
}

void ServiceMetrics::SetEngineStats(std::function<engine::EngineStats()> stats) {
  std::lock_guard lock(scrape_mu_);
  engine_stats_ = std::move(stats);
}

void ServiceMetrics::ObserveEngineRequest(const engine::GenerationResult& result) {
  const engine::Timings& t = result.timings;
  e2e_latency_.Observe(t.total);
  queue_time_.Observe(t.queued);
  if (result.usage.image_tokens > 0 && t.vision > 0) vision_time_.Observe(t.vision);
  // The token timings exist only for requests that produced a first token.
  if (result.usage.completion_tokens > 0) {
    time_to_first_token_.Observe(t.time_to_first_token);
    prefill_time_.Observe(t.prefill);
    decode_time_.Observe(t.decode);
    if (result.usage.completion_tokens > 1) {
      time_per_output_token_.Observe(t.decode /
                                     static_cast<double>(result.usage.completion_tokens - 1));
    }
  }
}

void ServiceMetrics::SetModelServerStats(std::function<pipeline::RemoteGeneratorStats()> stats) {
  std::lock_guard lock(scrape_mu_);
  model_server_stats_ = std::move(stats);
}

void ServiceMetrics::ObserveModelServerRequest(const pipeline::RemoteRequestRecord& record) {
  model_server_seconds_.Observe(record.seconds);
}

void ServiceMetrics::ObservePage(double seconds) {
  pages_.Inc();
  page_seconds_.Observe(seconds);
}

void ServiceMetrics::ObserveTask(std::string_view final_status, double seconds) {
  tasks_finished_.With({std::string(final_status)}).Inc();
  task_seconds_.Observe(seconds);
}

void ServiceMetrics::SetTaskGauges(std::function<std::pair<int64_t, int64_t>()> counts) {
  std::lock_guard lock(scrape_mu_);
  task_counts_ = std::move(counts);
}

void ServiceMetrics::ObserveCache(std::string_view tier, bool hit) {
  cache_requests_.With({std::string(tier), hit ? "hit" : "miss"}).Inc();
}

void ServiceMetrics::ObserveCacheError(std::string_view tier) {
  cache_requests_.With({std::string(tier), "error"}).Inc();
}

void ServiceMetrics::ObserveSharedTaskError() { shared_task_errors_.Inc(); }

std::string ServiceMetrics::Render() {
  std::lock_guard lock(scrape_mu_);
  engine_snapshot_.reset();
  task_snapshot_.reset();
  model_server_snapshot_.reset();
  // A failing source leaves its series out of this scrape.
  try {
    if (engine_stats_) engine_snapshot_ = engine_stats_();
  } catch (...) {
  }
  try {
    if (task_counts_) task_snapshot_ = task_counts_();
  } catch (...) {
  }
  try {
    if (model_server_stats_) model_server_snapshot_ = model_server_stats_();
  } catch (...) {
  }
  if (engine_snapshot_) {
    token_rate_ = token_rate_window_.Sample(
        WindowedRate::Clock::now(), static_cast<double>(engine_snapshot_->generated_tokens));
  }
  return registry_.Render();
}

void AddMetricsRoute(HttpServer& server, ServiceMetrics& metrics) {
  // On the I/O thread: a scrape answers while every handler thread is busy (rendering reads
  // counters and snapshots under short locks, never waiting on work).
  server.Route(
      "GET", "/metrics",
      [&metrics](const HttpRequest&) {
        HttpResponse response = HttpResponse::Text(200, metrics.Render());
        response.headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8";
        return response;
      },
      RouteTraits{.on_io_thread = true});
}

}  // namespace mineru::service
