// SPDX-License-Identifier: Apache-2.0
// The metrics registry and its Prometheus text rendering
// (prometheus/docs: content/docs/instrumenting/exposition_formats.md).
#include "service/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "base/status.h"

namespace mineru::service::metrics {

namespace {

bool ValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Label names may not contain ':' and names starting with "__" are reserved.
bool ValidLabelName(std::string_view name) {
  return ValidMetricName(name) && name.find(':') == std::string_view::npos &&
         name.substr(0, 2) != "__";
}

void AddDouble(std::atomic<double>& target, double amount) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
  }
}

// "{a="x",b="y"}" ("" without labels); `extra` is appended as one more pair (for "le").
std::string LabelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i] + "=\"" + EscapeLabelValue(values[i]) + '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += std::string(extra_name) + "=\"" + EscapeLabelValue(extra_value) + '"';
  }
  return out + "}";
}

}  // namespace

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value == std::floor(value) && std::fabs(value) < kExactIntegers) {
    return std::to_string(static_cast<int64_t>(value));  // also turns -0 into "0"
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);  // shortest exact form
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Counter::Inc(double amount) {
  if (!(amount >= 0)) return;  // negative or NaN
  AddDouble(value_, amount);
}

void Gauge::Add(double amount) { AddDouble(value_, amount); }

Histogram::Histogram(std::shared_ptr<const std::vector<double>> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_->size() + 1, 0) {}

void Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  // First bound >= value: an observation equal to a bound belongs to that bucket.
  const auto bucket = static_cast<size_t>(
      std::lower_bound(bounds_->begin(), bounds_->end(), value) - bounds_->begin());
  std::lock_guard lock(mu_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  std::lock_guard lock(mu_);
  s.cumulative.resize(counts_.size());
  uint64_t running = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    running += counts_[i];
    s.cumulative[i] = running;
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

template <class T>
T& Family<T>::With(const std::vector<std::string>& label_values) {
  MINERU_CHECK(label_values.size() == label_count_, "metric needs {} label values, got {}",
               label_count_, label_values.size());
  std::lock_guard lock(mu_);
  auto it = children_.find(label_values);
  if (it == children_.end()) it = children_.emplace(label_values, factory_()).first;
  return *it->second;
}

template <class T>
std::vector<std::pair<std::vector<std::string>, const T*>> Family<T>::Children() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::vector<std::string>, const T*>> out;
  out.reserve(children_.size());
  for (const auto& [labels, child] : children_) out.emplace_back(labels, child.get());
  return out;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct Registry::Entry {
  std::string name;  // as rendered (counters with "_total")
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<std::string> label_names;
  std::unique_ptr<CounterFamily> counters;
  std::unique_ptr<GaugeFamily> gauges;
  std::unique_ptr<HistogramFamily> histograms;
  std::function<std::vector<CallbackSample>()> collect;
};

Registry::Registry() = default;
Registry::~Registry() = default;

std::unique_ptr<Registry::Entry> Registry::NewEntry(std::string name, std::string help,
                                                    MetricType type,
                                                    std::vector<std::string> label_names) {
  MINERU_CHECK(ValidMetricName(name), "invalid metric name '{}'", name);
  if (type == MetricType::kCounter && !name.ends_with("_total")) name += "_total";
  std::set<std::string_view> seen;
  for (const std::string& label : label_names) {
    MINERU_CHECK(ValidLabelName(label) && seen.insert(label).second,
                 "invalid or repeated label name '{}' of {}", label, name);
    MINERU_CHECK(type != MetricType::kHistogram || label != "le", "histogram {} labelled le", name);
  }
  auto entry = std::make_unique<Entry>();
  entry->name = std::move(name);
  entry->help = std::move(help);
  entry->type = type;
  entry->label_names = std::move(label_names);
  return entry;
}

// Publishes a complete entry, so Render never sees one half built.
void Registry::Publish(std::unique_ptr<Entry> entry) {
  std::lock_guard lock(mu_);
  for (const auto& e : entries_) {
    MINERU_CHECK(e->name != entry->name, "metric {} added twice", entry->name);
  }
  entries_.push_back(std::move(entry));
}

CounterFamily& Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names) {
  auto e = NewEntry(std::move(name), std::move(help), MetricType::kCounter, std::move(label_names));
  e->counters = std::make_unique<CounterFamily>(e->label_names.size(),
                                                [] { return std::make_unique<Counter>(); });
  if (e->label_names.empty()) e->counters->With({});
  CounterFamily& family = *e->counters;
  Publish(std::move(e));
  return family;
}

GaugeFamily& Registry::AddGauge(std::string name, std::string help,
                                std::vector<std::string> label_names) {
  auto e = NewEntry(std::move(name), std::move(help), MetricType::kGauge, std::move(label_names));
  e->gauges = std::make_unique<GaugeFamily>(e->label_names.size(),
                                            [] { return std::make_unique<Gauge>(); });
  if (e->label_names.empty()) e->gauges->With({});
  GaugeFamily& family = *e->gauges;
  Publish(std::move(e));
  return family;
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<double> upper_bounds,
                                        std::vector<std::string> label_names) {
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    MINERU_CHECK(
        std::isfinite(upper_bounds[i]) && (i == 0 || upper_bounds[i - 1] < upper_bounds[i]),
        "histogram {}: bucket bounds must be finite and increasing", name);
  }
  auto e =
      NewEntry(std::move(name), std::move(help), MetricType::kHistogram, std::move(label_names));
  auto bounds = std::make_shared<const std::vector<double>>(std::move(upper_bounds));
  e->histograms = std::make_unique<HistogramFamily>(
      e->label_names.size(), [bounds] { return std::make_unique<Histogram>(bounds); });
  if (e->label_names.empty()) e->histograms->With({});
  HistogramFamily& family = *e->histograms;
  Publish(std::move(e));
  return family;
}

void Registry::AddCallback(std::string name, std::string help, MetricType type,
                           std::vector<std::string> label_names,
                           std::function<std::vector<CallbackSample>()> collect) {
  MINERU_CHECK(type != MetricType::kHistogram, "callback histograms are not supported");
  auto e = NewEntry(std::move(name), std::move(help), type, std::move(label_names));
  e->collect = std::move(collect);
  Publish(std::move(e));
}

void Registry::AddCallbackGauge(std::string name, std::string help, std::function<double()> read) {
  AddCallback(std::move(name), std::move(help), MetricType::kGauge, {}, [read = std::move(read)] {
    return std::vector<CallbackSample>{{{}, read()}};
  });
}

void Registry::AddCallbackCounter(std::string name, std::string help,
                                  std::function<double()> read) {
  AddCallback(std::move(name), std::move(help), MetricType::kCounter, {}, [read = std::move(read)] {
    return std::vector<CallbackSample>{{{}, read()}};
  });
}

std::string Registry::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& entry : entries_) {
    const Entry& e = *entry;
    const char* type = e.type == MetricType::kCounter ? "counter"
                       : e.type == MetricType::kGauge ? "gauge"
                                                      : "histogram";
    out += "# HELP " + e.name + " " + EscapeHelp(e.help) + "\n";
    out += "# TYPE " + e.name + " " + type + "\n";
    auto line = [&](std::string_view name, const std::string& labels, double value) {
      out += std::string(name) + labels + " " + FormatValue(value) + "\n";
    };
    if (e.collect) {
      std::vector<CallbackSample> samples;
      try {
        samples = e.collect();
      } catch (...) {
        samples.clear();  // a failing source shows as absent series, not a failed scrape
      }
      for (const CallbackSample& s : samples) {
        if (s.label_values.size() != e.label_names.size()) continue;
        line(e.name, LabelSet(e.label_names, s.label_values), s.value);
      }
    } else if (e.counters) {
      for (const auto& [labels, c] : e.counters->Children()) {
        line(e.name, LabelSet(e.label_names, labels), c->Value());
      }
    } else if (e.gauges) {
      for (const auto& [labels, g] : e.gauges->Children()) {
        line(e.name, LabelSet(e.label_names, labels), g->Value());
      }
    } else if (e.histograms) {
      for (const auto& [labels, h] : e.histograms->Children()) {
        const Histogram::Snapshot s = h->Read();
        const std::vector<double>& bounds = h->upper_bounds();
        for (size_t i = 0; i <= bounds.size(); ++i) {
          const std::string le = i < bounds.size() ? FormatValue(bounds[i]) : "+Inf";
          line(e.name + "_bucket", LabelSet(e.label_names, labels, "le", le),
               static_cast<double>(s.cumulative[i]));
        }
        const std::string set = LabelSet(e.label_names, labels);
        line(e.name + "_sum", set, s.sum);
        line(e.name + "_count", set, static_cast<double>(s.count));
      }
    }
  }
  return out;
}

}  // namespace mineru::service::metrics
