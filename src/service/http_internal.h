// SPDX-License-Identifier: Apache-2.0
// Internals of the HTTP server shared by http_server.cc (Beast/Asio) and http_internal.cc
// (plain C++): routing, the handler pool, the disconnect flag and SSE framing. Not an API.
#pragma once

#include <atomic>
#include <chrono>
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
  RouteTraits traits;
};

// Routes are added before the server starts and only read afterwards (no locking needed).
class Router {
 public:
  void Add(std::string method, std::string_view pattern, Handler handler, RouteTraits traits = {});
  // The route for method + path, filling params; nullptr when none, with allow set to the
  // methods the path has ("" for 404, "GET, POST" for 405). The route with the most literal
  // segments wins.
  const RouteEntry* Match(std::string_view method, std::string_view path,
                          std::map<std::string, std::string>* params, std::string* allow) const;

 private:
  std::vector<RouteEntry> routes_;
};

// A fixed pool of handler threads with a FIFO queue. The queue is bounded in practice: each
// connection has at most one handler task in it and connections are capped; the short tasks of
// later answers (HttpServer::Post) are at most one per answer in flight.
class WorkQueue {
 public:
  void Start(int num_threads);
  void Post(std::function<void()> task);  // dropped after Shutdown
  // Drops queued tasks and waits until `deadline` for running ones. True when every thread
  // ended (joined). False when a task still ran: the threads are detached and end after their
  // task, so this queue must never be destroyed (HttpServer::Stop leaks its state then).
  bool Shutdown(std::chrono::steady_clock::time_point deadline);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;    // tasks_ or stopping_ changed
  std::condition_variable idle_;  // running_ fell
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  int running_ = 0;  // tasks being run
  std::vector<std::thread> threads_;
};

// The disconnect flag and its callbacks; shared by a connection and its SSE writers so it
// outlives either. Thread-safe; fires once.
// A connection lives through many requests: a callback registered for one later answer is
// removed once that answer is sent (Remove), so a long keep-alive connection does not pile them
// up.
struct DisconnectState {
  std::shared_ptr<std::atomic<bool>> flag = std::make_shared<std::atomic<bool>>(false);
  std::mutex mu;
  std::map<uint64_t, std::function<void()>> callbacks;  // by token; cleared once fired
  uint64_t next_token = 1;

  void Fire();
  // Returns the callback's token for Remove; 0 when the flag was already set (it ran at once).
  uint64_t Add(std::function<void()> cb);
  void Remove(uint64_t token);
};

}  // namespace mineru::service::internal
