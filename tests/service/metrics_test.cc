// SPDX-License-Identifier: Apache-2.0
// The metrics registry's exact text output, the service metric set, and the HTTP server's
// per-request hook feeding GET /metrics.
#include "service/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "../support/wait.h"
#include "service/http_server.h"
#include "service/service_metrics.h"

namespace mineru::service {
namespace {

using testing_support::WaitUntil;

using metrics::Registry;
using testing_support::Client;
using testing_support::Exchange;
using testing_support::GetRequest;

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(MetricsFormatTest, NumbersParseAsPrometheusExpects) {
  EXPECT_EQ(metrics::FormatValue(0), "0");
  EXPECT_EQ(metrics::FormatValue(-0.0), "0");
  EXPECT_EQ(metrics::FormatValue(42), "42");
  EXPECT_EQ(metrics::FormatValue(-7), "-7");
  EXPECT_EQ(metrics::FormatValue(1e15), "1000000000000000");
  EXPECT_EQ(metrics::FormatValue(0.1), "0.1");
  EXPECT_EQ(metrics::FormatValue(2.5), "2.5");
  EXPECT_EQ(metrics::FormatValue(1.5e-7), "1.5e-07");
  EXPECT_EQ(metrics::FormatValue(1e20), "1e+20");
  EXPECT_EQ(metrics::FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(metrics::FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(metrics::FormatValue(std::nan("")), "NaN");
}

TEST(MetricsRenderTest, Counter) {
  Registry r;
  auto& c = r.AddCounter("demo_requests", "Requests served.").With({});
  c.Inc();
  c.Inc(2);
  c.Inc(-5);  // ignored: counters never go down
  EXPECT_EQ(r.Render(),
            "# HELP demo_requests_total Requests served.\n"
            "# TYPE demo_requests_total counter\n"
            "demo_requests_total 3\n");
}

TEST(MetricsRenderTest, CounterKeepsAnExplicitTotalSuffixAndStartsAtZero) {
  Registry r;
  r.AddCounter("demo_bytes_total", "Bytes.");
  EXPECT_EQ(r.Render(),
            "# HELP demo_bytes_total Bytes.\n"
            "# TYPE demo_bytes_total counter\n"
            "demo_bytes_total 0\n");
}

TEST(MetricsRenderTest, LabelledCounterInLabelOrder) {
  Registry r;
  auto& family = r.AddCounter("demo_http", "By method and code.", {"method", "code"});
  family.With({"POST", "500"}).Inc(0.5);
  family.With({"GET", "200"}).Inc();
  family.With({"GET", "200"}).Inc();
  EXPECT_EQ(&family.With({"GET", "200"}), &family.With({"GET", "200"}));  // stable child
  EXPECT_EQ(r.Render(),
            "# HELP demo_http_total By method and code.\n"
            "# TYPE demo_http_total counter\n"
            "demo_http_total{method=\"GET\",code=\"200\"} 2\n"
            "demo_http_total{method=\"POST\",code=\"500\"} 0.5\n");
}

TEST(MetricsRenderTest, Gauge) {
  Registry r;
  auto& g = r.AddGauge("demo_temperature", "Degrees.").With({});
  g.Set(3);
  g.Add(-5.5);
  EXPECT_EQ(r.Render(),
            "# HELP demo_temperature Degrees.\n"
            "# TYPE demo_temperature gauge\n"
            "demo_temperature -2.5\n");
}

TEST(MetricsRenderTest, CallbackGaugeIsReadAtRender) {
  Registry r;
  int queued = 4;
  r.AddCallbackGauge("demo_queued", "Queued.", [&] { return queued; });
  const std::string head = "# HELP demo_queued Queued.\n# TYPE demo_queued gauge\n";
  EXPECT_EQ(r.Render(), head + "demo_queued 4\n");
  queued = 9;
  EXPECT_EQ(r.Render(), head + "demo_queued 9\n");
}

TEST(MetricsRenderTest, LabelledCallbackAndAFailingCallback) {
  Registry r;
  r.AddCallback("demo_done", "Done.", metrics::MetricType::kCounter, {"reason"}, [] {
    return std::vector<metrics::CallbackSample>{{{"stop"}, 7}, {{"length"}, 1}};
  });
  r.AddCallbackGauge("demo_broken", "Throws.", []() -> double { throw std::runtime_error("x"); });
  EXPECT_EQ(r.Render(),
            "# HELP demo_done_total Done.\n"
            "# TYPE demo_done_total counter\n"
            "demo_done_total{reason=\"stop\"} 7\n"
            "demo_done_total{reason=\"length\"} 1\n"
            "# HELP demo_broken Throws.\n"
            "# TYPE demo_broken gauge\n");
}

TEST(MetricsRenderTest, HistogramBucketsAreCumulativeWithInclusiveBounds) {
  Registry r;
  auto& h = r.AddHistogram("demo_latency_seconds", "Latency.", {0.5, 1, 2}, {"route"});
  auto& child = h.With({"/a"});
  child.Observe(0.5);  // equal to a bound: counts in that bucket
  child.Observe(1);
  child.Observe(1.5);
  child.Observe(3);
  child.Observe(std::nan(""));  // ignored
  EXPECT_EQ(r.Render(),
            "# HELP demo_latency_seconds Latency.\n"
            "# TYPE demo_latency_seconds histogram\n"
            "demo_latency_seconds_bucket{route=\"/a\",le=\"0.5\"} 1\n"
            "demo_latency_seconds_bucket{route=\"/a\",le=\"1\"} 2\n"
            "demo_latency_seconds_bucket{route=\"/a\",le=\"2\"} 3\n"
            "demo_latency_seconds_bucket{route=\"/a\",le=\"+Inf\"} 4\n"
            "demo_latency_seconds_sum{route=\"/a\"} 6\n"
            "demo_latency_seconds_count{route=\"/a\"} 4\n");
}

TEST(MetricsRenderTest, UnlabelledHistogramRendersEmptyBuckets) {
  Registry r;
  r.AddHistogram("demo_size", "Sizes.", {10});
  EXPECT_EQ(r.Render(),
            "# HELP demo_size Sizes.\n"
            "# TYPE demo_size histogram\n"
            "demo_size_bucket{le=\"10\"} 0\n"
            "demo_size_bucket{le=\"+Inf\"} 0\n"
            "demo_size_sum 0\n"
            "demo_size_count 0\n");
}

TEST(MetricsRenderTest, EscapesLabelValuesAndHelp) {
  Registry r;
  r.AddGauge("demo_escape", "Back\\slash and\nnewline \"quoted\".", {"v"})
      .With({"a\\b\"c\nd"})
      .Set(1);
  EXPECT_EQ(r.Render(),
            "# HELP demo_escape Back\\\\slash and\\nnewline \"quoted\".\n"
            "# TYPE demo_escape gauge\n"
            "demo_escape{v=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(MetricsConcurrencyTest, IncrementsFromEightThreadsSumExactly) {
  Registry r;
  auto& family = r.AddCounter("demo_hits", "Hits.", {"who"});
  auto& latency = r.AddHistogram("demo_obs", "Observations.", {1}).With({});
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      metrics::Counter& cached = family.With({"cached"});
      for (int i = 0; i < kPerThread; ++i) {
        cached.Inc();
        family.With({"looked_up"}).Inc(2);  // lookups race with creation and each other
        latency.Observe(t % 2 == 0 ? 0.5 : 2.0);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(family.With({"cached"}).Value(), kThreads * kPerThread);
  EXPECT_EQ(family.With({"looked_up"}).Value(), 2.0 * kThreads * kPerThread);
  const metrics::Histogram::Snapshot s = latency.Read();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.cumulative[0], uint64_t{kThreads / 2} * kPerThread);
  EXPECT_EQ(s.cumulative[1], s.count);
}

TEST(WindowedRateTest, RateOverTheWindowOrSinceThePreviousSample) {
  using namespace std::chrono_literals;
  WindowedRate rate(10s);
  const auto t0 = WindowedRate::Clock::time_point{} + 1000s;
  EXPECT_EQ(rate.Sample(t0, 0), 0);  // no earlier sample
  EXPECT_EQ(rate.Sample(t0 + 2s, 100), 50);
  EXPECT_EQ(rate.Sample(t0 + 4s, 300), 75);  // both earlier samples are inside the window
  // At t0+14s the window starts at t0+4s: the sample there is the oldest kept.
  EXPECT_EQ(rate.Sample(t0 + 14s, 400), 10);
  // Scrapes further apart than the window: the rate since the previous one.
  EXPECT_EQ(rate.Sample(t0 + 44s, 1000), 20);
  EXPECT_EQ(rate.Sample(t0 + 45s, 5), 0);  // the counter went back (restart)
  EXPECT_EQ(rate.Sample(t0 + 47s, 25), 10);
}

engine::GenerationResult FinishedRequest(int64_t completion_tokens) {
  engine::GenerationResult r;
  r.finish_reason = engine::FinishReason::kLength;
  r.usage.prompt_tokens = 10;
  r.usage.image_tokens = 4;
  r.usage.completion_tokens = completion_tokens;
  r.timings.queued = 0.25;
  r.timings.vision = 0.5;
  r.timings.prefill = 1;
  r.timings.decode = 0.5;
  r.timings.time_to_first_token = 2.5;
  r.timings.total = 2.5;
  return r;
}

TEST(ServiceMetricsTest, EngineDocumentAndProcessSeries) {
  ServiceMetrics m;
  std::string text = m.Render();
  // No engine yet: its series are announced but have no samples.
  EXPECT_TRUE(Contains(text, "# TYPE mineru_requests_waiting gauge\n"));
  EXPECT_FALSE(Contains(text, "\nmineru_requests_waiting "));
  EXPECT_FALSE(Contains(text, "\nmineru_tasks_queued "));

  engine::EngineStats stats;
  stats.waiting = 3;
  stats.running = 2;
  stats.kv_blocks_total = 400;
  stats.kv_blocks_used = 100;
  stats.prompt_tokens = 1234;
  stats.generated_tokens = 100;
  stats.preemptions = 1;
  stats.vision_images = 6;
  stats.finished[static_cast<int>(engine::FinishReason::kStop)] = 7;
  m.SetEngineStats([&] { return stats; });
  m.SetTaskGauges([] { return std::pair<int64_t, int64_t>{5, 1}; });
  m.ObserveEngineRequest(FinishedRequest(5));
  m.ObserveEngineRequest(FinishedRequest(0));  // e.g. cancelled before its first token
  m.ObservePage(0.75);
  m.ObservePage(30);
  m.ObserveTask("completed", 31);
  m.ObserveCache("disk", true);
  m.ObserveCache("disk", false);
  m.ObserveCache("disk", false);
  m.ObserveQueueFull();
  text = m.Render();
  for (const char* line : {
           "mineru_requests_waiting 3\n",
           "mineru_requests_running 2\n",
           "mineru_kv_cache_usage_ratio 0.25\n",
           "mineru_kv_cache_blocks_used 100\n",
           "mineru_kv_cache_blocks_total 400\n",
           "mineru_prompt_tokens_total 1234\n",
           "mineru_generation_tokens_total 100\n",
           "mineru_preemptions_total 1\n",
           "mineru_vision_images_total 6\n",
           "mineru_request_finished_total{reason=\"stop\"} 7\n",
           "mineru_request_finished_total{reason=\"cancelled\"} 0\n",
           "mineru_generation_tokens_per_second 0\n",  // one sample: no rate yet
           "mineru_e2e_request_latency_seconds_count 2\n",
           "mineru_e2e_request_latency_seconds_sum 5\n",
           "mineru_request_queue_time_seconds_count 2\n",
           "mineru_time_to_first_token_seconds_count 1\n",
           "mineru_time_to_first_token_seconds_bucket{le=\"1\"} 0\n",
           "mineru_time_to_first_token_seconds_bucket{le=\"2.5\"} 1\n",  // bounds are inclusive
           "mineru_time_per_output_token_seconds_sum 0.125\n",  // 0.5 s / 4 tokens after the first
           "mineru_request_prefill_time_seconds_sum 1\n",
           "mineru_request_decode_time_seconds_sum 0.5\n",
           "mineru_request_vision_time_seconds_count 2\n",
           "mineru_pages_total 2\n",
           "mineru_page_seconds_bucket{le=\"1\"} 1\n",
           "mineru_page_seconds_bucket{le=\"25\"} 1\n",
           "mineru_page_seconds_bucket{le=\"50\"} 2\n",
           "mineru_tasks_finished_total{status=\"completed\"} 1\n",
           "mineru_task_seconds_count 1\n",
           "mineru_tasks_queued 5\n",
           "mineru_tasks_processing 1\n",
           "mineru_cache_requests_total{tier=\"disk\",result=\"hit\"} 1\n",
           "mineru_cache_requests_total{tier=\"disk\",result=\"miss\"} 2\n",
           "mineru_http_rejected_total{reason=\"queue_full\"} 1\n",
           "# TYPE process_start_time_seconds gauge\n",
           "# TYPE mineru_http_request_duration_seconds histogram\n",
       }) {
    EXPECT_TRUE(Contains(text, line)) << line << "\nin:\n" << text;
  }
#ifdef __linux__
  EXPECT_TRUE(Contains(text, "\nprocess_resident_memory_bytes "));
  EXPECT_TRUE(Contains(text, "\nmineru_process_peak_resident_memory_bytes "));
#endif
}

// Collects the server's records; waits for them (the hook runs after the response is written,
// so possibly after the client has read it).
struct Records {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<RequestRecord> all;

  void Add(const RequestRecord& r) {
    std::lock_guard lock(mu);
    all.push_back(r);
    cv.notify_all();
  }
  std::vector<RequestRecord> WaitFor(size_t n) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return all.size() >= n; });
    return all;
  }
};

const RequestRecord* FindStatus(const std::vector<RequestRecord>& records, int status) {
  for (const RequestRecord& r : records) {
    if (r.status == status) return &r;
  }
  return nullptr;
}

TEST(HttpMetricsTest, ServerReportsEveryRequestByRoutePattern) {
  ServiceMetrics metrics;
  Records records;
  HttpServer server;
  server.Route("GET", "/ok", [](const HttpRequest&) { return HttpResponse::Text(200, "ok"); });
  server.Route("GET", "/v1/tasks/{id}",
               [](const HttpRequest& req) { return HttpResponse::Text(200, req.Param("id")); });
  server.Route("POST", "/upload", [](const HttpRequest&) { return HttpResponse::Text(200, ""); });
  AddMetricsRoute(server, metrics);
  ServerOptions options;
  options.port = 0;
  options.limits.max_body_bytes = 16;
  options.limits.max_connections = 1;
  options.on_request = [&](const RequestRecord& r) {
    metrics.ObserveHttp(r);
    records.Add(r);
  };
  ASSERT_TRUE(server.Start(options));
  const int port = server.port();

  {
    // One keep-alive connection (the only one allowed) makes the first three requests.
    Client c(port);
    ASSERT_TRUE(c.Send(GetRequest("/ok")));
    auto ok = c.ReadResponse();
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200);
    ASSERT_TRUE(c.Send(GetRequest("/v1/tasks/42")));
    auto param = c.ReadResponse();
    ASSERT_TRUE(param);
    EXPECT_EQ(param->body, "42");
    ASSERT_TRUE(c.Send(GetRequest("/nowhere/7")));
    auto missing = c.ReadResponse();
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->status, 404);
    // A second connection while this one is open is over the limit: 503.
    auto refused = Exchange(port, "GET", "/ok");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 503);
    records.WaitFor(4);
  }
  // Wait until the server has let go of the first connection before the next one.
  WaitUntil([&] { return server.open_connections() == 0; });
  auto too_large = Exchange(port, "POST", "/upload", std::string(17, 'x'));  // limit + 1
  ASSERT_TRUE(too_large);
  EXPECT_EQ(too_large->status, 413);

  const std::vector<RequestRecord> seen = records.WaitFor(5);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].route, "/ok");
  EXPECT_EQ(seen[0].status, 200);
  EXPECT_EQ(seen[0].rejected_reason, "");
  EXPECT_GE(seen[0].seconds, 0);
  EXPECT_EQ(seen[1].route, "/v1/tasks/{id}");  // the pattern, never the raw path
  EXPECT_EQ(seen[1].status, 200);
  // The 404's record and the 503's may come in either order (the client reads the 404 before
  // the server has finished writing it).
  const RequestRecord* missing = FindStatus(seen, 404);
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->route, "unmatched");
  EXPECT_EQ(missing->rejected_reason, "");
  const RequestRecord* rejected = FindStatus(seen, 503);
  ASSERT_NE(rejected, nullptr);
  EXPECT_EQ(rejected->rejected_reason, "too_many_connections");
  EXPECT_EQ(rejected->route, "unmatched");
  EXPECT_EQ(seen[4].method, "POST");
  EXPECT_EQ(seen[4].route, "unmatched");
  EXPECT_EQ(seen[4].status, 413);
  EXPECT_EQ(seen[4].rejected_reason, "body_too_large");

  WaitUntil([&] { return server.open_connections() == 0; });
  auto scrape = Exchange(port, "GET", "/metrics");
  ASSERT_TRUE(scrape);
  EXPECT_EQ(scrape->status, 200);
  EXPECT_EQ(scrape->Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = scrape->body;
  for (const char* line : {
           "mineru_http_requests_total{method=\"GET\",route=\"/ok\",status=\"200\"} 1\n",
           "mineru_http_requests_total{method=\"GET\",route=\"/v1/tasks/{id}\",status=\"200\"} "
           "1\n",
           "mineru_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1\n",
           "mineru_http_requests_total{method=\"other\",route=\"unmatched\",status=\"503\"} 1\n",
           "mineru_http_requests_total{method=\"POST\",route=\"unmatched\",status=\"413\"} 1\n",
           "mineru_http_rejected_total{reason=\"body_too_large\"} 1\n",
           "mineru_http_rejected_total{reason=\"too_many_connections\"} 1\n",
           "mineru_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/tasks/{id}\"} "
           "1\n",
           "mineru_http_request_duration_seconds_bucket{method=\"GET\",route=\"/ok\",le=\"+Inf\"} "
           "1\n",
       }) {
    EXPECT_TRUE(Contains(text, line)) << line << "\nin:\n" << text;
  }
  EXPECT_FALSE(Contains(text, "/v1/tasks/42"));
  EXPECT_FALSE(Contains(text, "/nowhere"));
  // Refusals are not handler latencies.
  EXPECT_FALSE(Contains(text, "mineru_http_request_duration_seconds_count{method=\"POST\""));
  server.Stop(std::chrono::seconds(5));
}

TEST(HttpMetricsTest, EventStreamIsReportedOnceWhenItEnds) {
  Records records;
  HttpServer server;
  server.Route("GET", "/v1/tasks/{id}/events", [](const HttpRequest&) {
    return HttpResponse::EventStream([](std::shared_ptr<SseWriter> writer) {
      writer->Send("progress", "1");
      writer->Send("done", "2");
      writer->Close();
    });
  });
  ServerOptions options;
  options.port = 0;
  options.on_request = [&](const RequestRecord& r) { records.Add(r); };
  ASSERT_TRUE(server.Start(options));
  auto reply = Exchange(server.port(), "GET", "/v1/tasks/abc/events");  // read to the end
  ASSERT_TRUE(reply);
  EXPECT_EQ(testing_support::SseData(reply->body), (std::vector<std::string>{"1", "2"}));
  server.Stop(std::chrono::seconds(5));  // every record is in once Stop returns
  const std::vector<RequestRecord> seen = records.WaitFor(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].route, "/v1/tasks/{id}/events");
  EXPECT_EQ(seen[0].status, 200);
  EXPECT_EQ(seen[0].rejected_reason, "");
}

TEST(HttpMetricsTest, ThrowingHookDoesNotHurtTheServer) {
  HttpServer server;
  server.Route("GET", "/ok", [](const HttpRequest&) { return HttpResponse::Text(200, "ok"); });
  ServerOptions options;
  options.port = 0;
  std::atomic<int> calls{0};
  options.on_request = [&](const RequestRecord&) {
    ++calls;
    throw std::runtime_error("observer failed");
  };
  ASSERT_TRUE(server.Start(options));
  Client c(server.port());
  for (int i = 0; i < 3; ++i) {  // the same keep-alive connection keeps working
    ASSERT_TRUE(c.Send(GetRequest("/ok")));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  server.Stop(std::chrono::seconds(5));
  EXPECT_EQ(calls.load(), 3);
}

}  // namespace
}  // namespace mineru::service
