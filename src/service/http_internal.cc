// SPDX-License-Identifier: Apache-2.0
// The Beast-free parts of the HTTP server: message helpers, routing, the handler pool, the
// disconnect flag and SSE framing.
#include "service/http_internal.h"

#include <algorithm>

#include "base/json.h"

namespace mineru::service {
namespace internal {

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool HasCrLf(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

std::string ErrorJson(int status, std::string_view message, std::string_view type) {
  // The API error shape (service/api_error.h) with the status as the code.
  return DumpJson(Json{
      {"object", "error"},
      {"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}}}});
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (path.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

void WorkQueue::Start(int num_threads) {
  for (int i = 0; i < std::max(1, num_threads); ++i) threads_.emplace_back([this] { Loop(); });
}

void WorkQueue::Post(std::function<void()> task) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  tasks_.push_back(std::move(task));
  cv_.notify_one();
}

bool WorkQueue::Shutdown(std::chrono::steady_clock::time_point deadline) {
  std::deque<std::function<void()>> dropped;  // destroyed outside the lock
  bool idle = false;
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    dropped.swap(tasks_);
    cv_.notify_all();
    idle = idle_.wait_until(lock, deadline, [&] { return running_ == 0; });
  }
  dropped.clear();
  for (auto& t : threads_) {
    if (idle) {
      t.join();
    } else {
      t.detach();
    }
  }
  threads_.clear();
  return idle;
}

void WorkQueue::Loop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
      ++running_;
    }
    task();
    task = nullptr;  // what it holds goes before the task counts as done
    std::lock_guard lock(mu_);
    --running_;
    idle_.notify_all();
  }
}

// Invariant: callbacks added before the flag turns true run exactly once in Fire; those added
// after run at once in Add (both decided under mu).
void DisconnectState::Fire() {
  std::map<uint64_t, std::function<void()>> run;
  {
    std::lock_guard lock(mu);
    if (flag->exchange(true)) return;
    run.swap(callbacks);
  }
  for (auto& [token, cb] : run) cb();
}

uint64_t DisconnectState::Add(std::function<void()> cb) {
  {
    std::lock_guard lock(mu);
    if (!flag->load()) {
      const uint64_t token = next_token++;
      callbacks.emplace(token, std::move(cb));
      return token;
    }
  }
  cb();
  return 0;
}

void DisconnectState::Remove(uint64_t token) {
  std::function<void()> removed;  // destroyed outside the lock
  std::lock_guard lock(mu);
  auto it = callbacks.find(token);
  if (it == callbacks.end()) return;
  removed = std::move(it->second);
  callbacks.erase(it);
}

std::string FormatSseEvent(std::string_view event, std::string_view data) {
  std::string out;
  out.reserve(event.size() + data.size() + 16);
  if (!event.empty()) {
    out += "event: ";
    for (char c : event) out += (c == '\r' || c == '\n') ? ' ' : c;
    out += '\n';
  }
  // An SSE reader ends a line at CRLF, LF or a lone CR (WHATWG HTML, "Interpreting an event
  // stream"): each of them ends a data line here too, so no text can start a field of its own.
  size_t start = 0;
  while (true) {
    const size_t end = data.find_first_of("\r\n", start);
    out += "data: ";
    out += data.substr(start, end == std::string_view::npos ? end : end - start);
    out += '\n';
    if (end == std::string_view::npos) break;
    start = end + (data.substr(end, 2) == "\r\n" ? 2 : 1);
  }
  out += '\n';
  return out;
}

}  // namespace internal

using internal::ErrorJson;
using internal::LowerAscii;
using internal::SplitPath;

bool CaseInsensitiveLess::operator()(std::string_view a, std::string_view b) const {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    char x = LowerAscii(a[i]), y = LowerAscii(b[i]);
    if (x != y) return x < y;
  }
  return a.size() < b.size();
}

std::string HttpRequest::Header(std::string_view name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::string HttpRequest::Param(std::string_view name) const {
  auto it = params.find(std::string(name));
  return it == params.end() ? std::string() : it->second;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.headers["Content-Type"] = "application/json";
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.headers["Content-Type"] = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Error(int status, std::string_view message, std::string_view type) {
  return Json(status, ErrorJson(status, message, type));
}

HttpResponse HttpResponse::EventStream(SseStart start) {
  HttpResponse r;
  r.sse = std::move(start);
  return r;
}

HttpResponse HttpResponse::Later(LaterStart start) {
  HttpResponse r;
  r.later = std::move(start);
  return r;
}

const internal::RouteEntry* internal::Router::Match(std::string_view method, std::string_view path,
                                                    std::map<std::string, std::string>* params,
                                                    std::string* allow) const {
  std::vector<std::string_view> segments = SplitPath(path);
  const internal::RouteEntry* best = nullptr;
  std::vector<std::string> allowed;
  for (const internal::RouteEntry& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    bool match = true;
    for (size_t i = 0; i < segments.size() && match; ++i) {
      const std::string& p = route.segments[i];
      bool is_param = p.size() >= 2 && p.front() == '{' && p.back() == '}';
      match = is_param ? !segments[i].empty() : p == segments[i];
    }
    if (!match) continue;
    if (route.method != method) {
      if (std::find(allowed.begin(), allowed.end(), route.method) == allowed.end()) {
        allowed.push_back(route.method);
      }
      continue;
    }
    if (best == nullptr || route.literal_count > best->literal_count) best = &route;
  }
  if (best == nullptr) {
    allow->clear();
    for (const auto& m : allowed) *allow += (allow->empty() ? "" : ", ") + m;
    return nullptr;
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& p = best->segments[i];
    if (p.size() >= 2 && p.front() == '{' && p.back() == '}') {
      (*params)[p.substr(1, p.size() - 2)] = std::string(segments[i]);
    }
  }
  return best;
}

void internal::Router::Add(std::string method, std::string_view pattern, Handler handler,
                           RouteTraits traits) {
  MINERU_CHECK(!pattern.empty() && pattern.front() == '/', "bad route pattern {}", pattern);
  RouteEntry entry;
  entry.method = std::move(method);
  entry.pattern = std::string(pattern);
  for (std::string_view seg : SplitPath(pattern)) {
    bool is_param = seg.size() >= 2 && seg.front() == '{' && seg.back() == '}';
    if (!is_param) ++entry.literal_count;
    entry.segments.emplace_back(seg);
  }
  entry.handler = std::move(handler);
  entry.traits = traits;
  routes_.push_back(std::move(entry));
}

}  // namespace mineru::service
