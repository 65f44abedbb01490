// SPDX-License-Identifier: Apache-2.0
// Internals of the HTTP server shared by http_server.cc (Beast/Asio) and http_internal.cc
// (plain C++): routing, the handler pool, the disconnect flag and SSE framing. Not an API.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "service/http_server.h"

namespace mineru::service::internal {

char LowerAscii(char c);
bool HasCrLf(std::string_view s);
// {"error": {"message": ..., "type": ..., "code": status}}; invalid UTF-8 is replaced.
std::string ErrorJson(int status, std::string_view message, std::string_view type);
// Splits "/a/b" into {"a", "b"}; "/" into {}.
std::vector<std::string_view> SplitPath(std::string_view path);
// "event: <event>\n" (when not empty) + one "data: <line>\n" per line + "\n", lines ending at
// CRLF, LF or CR. CR/LF in the event name become spaces, so an event can never inject fields.
std::string FormatSseEvent(std::string_view event, std::string_view data);

struct RouteEntry {
  std::string method;
  std::string pattern;                // as added, e.g. "/v1/tasks/{id}"
  std::vector<std::string> segments;  // "{name}" marks a parameter
  int literal_count = 0;
  Handler handler;
};

// Routes are added before the server starts and only read afterwards (no locking needed).
class Router {
 public:
  void Add(std::string method, std::string_view pattern, Handler handler);
  // The handler for method + path, filling params (and *pattern with the route's pattern when
  // not null); nullptr when none, with allow set to the methods the path has ("" for 404,
  // "GET, POST" for 405). The route with the most literal segments wins.
  const Handler* Match(std::string_view method, std::string_view path,
                       std::map<std::string, std::string>* params, std::string* allow,
                       std::string* pattern = nullptr) const;

 private:
  std::vector<RouteEntry> routes_;
};

// A fixed pool of handler threads with a FIFO queue. The queue is bounded in practice: each
// connection has at most one task in it and connections are capped.
class WorkQueue {
 public:
  void Start(int num_threads);
  void Post(std::function<void()> task);  // dropped after Shutdown
  // Drops queued tasks, waits for running ones.
  void Shutdown();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// The disconnect flag and its callbacks; shared by a connection and its SSE writers so it
// outlives either. Thread-safe; fires once.
struct DisconnectState {
  std::shared_ptr<std::atomic<bool>> flag = std::make_shared<std::atomic<bool>>(false);
  std::mutex mu;
  std::vector<std::function<void()>> callbacks;  // cleared once fired

  void Fire();
  void Add(std::function<void()> cb);
};

}  // namespace mineru::service::internal
