// SPDX-License-Identifier: Apache-2.0
// A small thread-safe metrics registry that renders the Prometheus text exposition format 0.0.4
// (no client library is packaged for Debian, and the format is small).
//
//   Registry registry;
//   auto& requests = registry.AddCounter("app_requests", "Requests served.", {"route"});
//   Counter& home = requests.With({"/"});  // stable: keep it and update it from any thread
//   home.Inc();
//   auto& latency = registry.AddHistogram("app_latency_seconds", "Latency.", {0.1, 1, 10});
//   latency.With({}).Observe(0.25);
//   registry.AddCallbackGauge("app_queue", "Queued items.", [&] { return queue.size(); });
//   std::string text = registry.Render();
//
// Families render in the order they were added, children in label-value order. Counters are
// named with a "_total" suffix (added when missing). A family without labels has its one child
// from the start, so it renders 0 before the first update. Names and label names are fixed by
// the code: an invalid or duplicate one is a programming error (MINERU_CHECK).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mineru::service::metrics {

// A sample value as Prometheus parses it: integers (|v| < 2^53) without exponent or fraction,
// other values in the shortest form that reads back exactly, "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);
// Label value escaping: backslash, double quote and newline.
std::string EscapeLabelValue(std::string_view value);
// HELP text escaping: backslash and newline.
std::string EscapeHelp(std::string_view text);

// Monotonic. Thread-safe; integer increments sum exactly (below 2^53).
class Counter {
 public:
  // Negative and NaN increments are ignored (a counter never goes down).
  void Inc(double amount = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double amount);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Bucket counts, sum and count, updated together under a small mutex so that a scrape always
// sees count == the +Inf bucket.
class Histogram {
 public:
  // upper_bounds: strictly increasing, finite (+Inf is implicit).
  explicit Histogram(std::shared_ptr<const std::vector<double>> upper_bounds);
  // Counts in the first bucket whose upper bound is >= value (bounds are inclusive). NaN is
  // ignored (it would make the sum NaN forever).
  void Observe(double value);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per upper bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;
  const std::vector<double>& upper_bounds() const { return *bounds_; }

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last = above every bound
  double sum_ = 0;
  uint64_t count_ = 0;
};

enum class MetricType { kCounter, kGauge, kHistogram };

// The children of one metric family, by label values. With() returns a reference that stays
// valid for the registry's life; finding it takes a lock, updating it does not (for Counter and
// Gauge), so hot paths should keep the reference.
template <class T>
class Family {
 public:
  using Factory = std::function<std::unique_ptr<T>()>;
  Family(size_t label_count, Factory factory)
      : label_count_(label_count), factory_(std::move(factory)) {}

  // label_values: one per label name, in order (checked).
  T& With(const std::vector<std::string>& label_values);
  // Every child with its label values, in label-value order.
  std::vector<std::pair<std::vector<std::string>, const T*>> Children() const;

 private:
  size_t label_count_;
  Factory factory_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// One sample a callback family produces at scrape time.
struct CallbackSample {
  std::vector<std::string> label_values;  // one per label name
  double value = 0;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Adding is not meant to race with Render (add everything at startup); both are thread-safe
  // nonetheless.
  CounterFamily& AddCounter(std::string name, std::string help,
                            std::vector<std::string> label_names = {});
  GaugeFamily& AddGauge(std::string name, std::string help,
                        std::vector<std::string> label_names = {});
  HistogramFamily& AddHistogram(std::string name, std::string help,
                                std::vector<double> upper_bounds,
                                std::vector<std::string> label_names = {});
  // A counter or gauge family whose samples `collect` returns at every Render (on the scraping
  // thread; it must be thread-safe and quick). An exception from it drops its samples.
  void AddCallback(std::string name, std::string help, MetricType type,
                   std::vector<std::string> label_names,
                   std::function<std::vector<CallbackSample>()> collect);
  void AddCallbackGauge(std::string name, std::string help, std::function<double()> read);
  void AddCallbackCounter(std::string name, std::string help, std::function<double()> read);

  // The text format 0.0.4: "# HELP", "# TYPE", then one line per sample; ends with "\n".
  std::string Render() const;

 private:
  struct Entry;
  static std::unique_ptr<Entry> NewEntry(std::string name, std::string help, MetricType type,
                                         std::vector<std::string> label_names);
  void Publish(std::unique_ptr<Entry> entry);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace mineru::service::metrics
