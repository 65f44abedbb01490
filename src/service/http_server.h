// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 server the API endpoints sit on: routing, limits, keep-alive, Server-Sent Events
// and graceful drain. Handlers never see Beast or Asio types (all of those live in
// http_server.cc).
//
//   HttpServer server;
//   server.Route("GET", "/v1/jobs/{id}", [](const HttpRequest& req) {
//     return HttpResponse::Json(200, "{\"id\": \"" + req.Param("id") + "\"}");
//   });
//   MINERU_RETURN_IF_ERROR(server.Start(options));
//   ...
//   server.BeginDrain();  // readiness false, no new connections, in-flight requests finish
//   server.Stop(std::chrono::seconds(30));
//
// Threads: sockets are served asynchronously by ServerOptions::io_threads Asio threads (a slow
// or idle client holds a socket and a buffer, never a thread); handlers run on a separate pool of
// ServerOptions::handler_threads threads, so a slow handler never blocks other connections.
// Each connection has at most one request in a handler at a time, so the handler queue is
// bounded by ServerLimits::max_connections.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::service {

// ASCII case-insensitive ordering, for header names.
struct CaseInsensitiveLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const;
};
// Header name -> value. Repeated request headers are joined with ", " (RFC 9110 5.3).
using HttpHeaders = std::map<std::string, std::string, CaseInsensitiveLess>;

struct HttpRequest {
  std::string method;                         // "GET", "POST", ... as sent
  std::string target;                         // the path, without the query ("/v1/jobs/42")
  std::string query;                          // after '?', undecoded ("" when absent)
  HttpHeaders headers;                        // case-insensitive lookup
  std::string body;                           // at most ServerLimits::max_body_bytes
  std::string remote_address;                 // peer IP address
  std::map<std::string, std::string> params;  // values of the route's {param} segments
  // Becomes true when the client goes away while the request is being handled (so long work can
  // be cancelled). Never null.
  std::shared_ptr<const std::atomic<bool>> disconnected;

  // "" when absent.
  std::string Header(std::string_view name) const;
  std::string Param(std::string_view name) const;
};

// Streams Server-Sent Events to one client. Thread-safe: Send/Close may be called from any
// thread, before or after the client disconnects. Destroying the last reference closes the
// stream (after queued events are written).
class SseWriter {
 public:
  class Channel;  // owned jointly with the connection (http_server.cc)
  explicit SseWriter(std::shared_ptr<Channel> channel);
  ~SseWriter();
  SseWriter(const SseWriter&) = delete;
  SseWriter& operator=(const SseWriter&) = delete;

  // Queues "event: <event>\ndata: <line>\n...\n\n" ("event:" omitted when empty; each line of
  // data gets its own "data:" field). Returns false once the stream is closed or the client has
  // gone, or when the client reads so slowly that ServerLimits::max_sse_queue_bytes would be
  // exceeded (the connection is then closed).
  bool Send(std::string_view event, std::string_view data);
  // Queues a comment line (": text\n\n"), e.g. a keep-alive.
  bool SendComment(std::string_view text);
  // Ends the stream once queued events are written; the connection is closed. Idempotent.
  void Close();

  bool disconnected() const;
  // Flag that turns true when the client goes away (or the server stops). Never null.
  std::shared_ptr<const std::atomic<bool>> disconnected_flag() const;
  // Calls callback once, on an I/O thread, when the client goes away; at once (on the calling
  // thread) when it already has. Callbacks must not block.
  void OnDisconnect(std::function<void()> callback);

 private:
  std::shared_ptr<Channel> channel_;
};

// Starts an SSE stream: called on a handler thread once the response head is written; the
// writer may be kept and used from any thread afterwards.
using SseStart = std::function<void(std::shared_ptr<SseWriter> writer)>;

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;
  std::string body;
  // When set, the response is an event stream: status and headers are sent with
  // "Content-Type: text/event-stream" and no length, body is ignored, and the connection ends
  // when the stream is closed.
  SseStart sse;

  static HttpResponse Json(int status, std::string body);
  static HttpResponse Text(int status, std::string body);
  // {"error": {"message": ..., "type": ..., "code": status}}
  static HttpResponse Error(int status, std::string_view message, std::string_view type);
  static HttpResponse EventStream(SseStart start);
};

// Runs on a handler thread. An exception escaping it becomes a 500.
using Handler = std::function<HttpResponse(const HttpRequest& request)>;

struct ServerLimits {
  static constexpr size_t kDefaultMaxHeaderBytes = 16 * 1024;
  static constexpr size_t kDefaultMaxBodyBytes = 256ull * 1024 * 1024;
  static constexpr std::chrono::milliseconds kDefaultRequestDeadline{60'000};
  static constexpr std::chrono::milliseconds kDefaultKeepAliveIdle{30'000};
  static constexpr std::chrono::milliseconds kDefaultWriteTimeout{60'000};
  static constexpr std::chrono::milliseconds kDefaultSseHeartbeat{15'000};
  static constexpr size_t kDefaultMaxConnections = 1024;
  static constexpr size_t kDefaultMaxSseQueueBytes = 8 * 1024 * 1024;

  // Request line + header block; above it: 431, connection closed.
  size_t max_header_bytes = kDefaultMaxHeaderBytes;
  // Body (Content-Length checked before reading, chunked counted as it arrives); exactly this
  // many bytes are accepted, one more is 413, connection closed.
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  // One deadline for the whole header block + body, from the request's first byte (not per
  // receive: trickling bytes does not extend it); past it: 408, connection closed.
  std::chrono::milliseconds request_deadline = kDefaultRequestDeadline;
  // How long a connection may wait for the first byte of its next request (also the first one);
  // past it the connection is closed silently.
  std::chrono::milliseconds keep_alive_idle = kDefaultKeepAliveIdle;
  // Writing one response (or one batch of SSE events); past it the connection is closed.
  std::chrono::milliseconds write_timeout = kDefaultWriteTimeout;
  // SSE streams send a ": ping" comment after this long without an event.
  std::chrono::milliseconds sse_heartbeat = kDefaultSseHeartbeat;
  // Open connections; one more is answered 503 with Retry-After and closed.
  size_t max_connections = kDefaultMaxConnections;
  // Unwritten SSE bytes per connection; beyond it the client is too slow and is disconnected.
  size_t max_sse_queue_bytes = kDefaultMaxSseQueueBytes;
};

// One request as the server saw it, for metrics and access logs.
struct RequestRecord {
  std::string method;  // as sent; "" when the server refused before reading it
  // The matched route pattern ("/v1/tasks/{id}"), or "unmatched" (404, 405, refusals): never
  // the raw path, so a metric label keyed on it has bounded cardinality.
  std::string route;
  int status = 0;
  // From the request's first byte (accept, for too_many_connections) until its response was
  // written (for event streams: until the stream ended).
  double seconds = 0;
  // Why the server refused it before any handler ran: "header_too_large" (431),
  // "body_too_large" (413), "timeout" (408), "too_many_connections" (503), "bad_request" (400);
  // "" when routing or a handler answered.
  std::string rejected_reason;
};

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8000;                 // 0 picks a free port (see HttpServer::port())
  int io_threads = 1;
  int handler_threads = 4;
  ServerLimits limits;
  // Called once per answered request, after its response was written or writing it failed
  // (event streams: when the stream ends); not for a connection closed before an answer. Runs
  // on an I/O thread: it must be quick and thread-safe. Exceptions it throws are dropped.
  std::function<void(const RequestRecord&)> on_request;
};

class HttpServer {
 public:
  HttpServer();
  ~HttpServer();  // Stop(0) when still running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Adds a route; only before Start. path_pattern is "/" followed by segments, each literal or
  // "{name}" (matching one non-empty segment). Exact literal routes win over parameter routes
  // when both match. A path that matches no pattern is 404; one that matches only for other
  // methods is 405 with Allow.
  void Route(std::string method, std::string path_pattern, Handler handler);

  // Binds and starts serving; errors (bad address, port in use) are returned, not thrown.
  Status Start(const ServerOptions& options);
  // The bound port (the chosen one when options.port was 0); 0 before Start.
  int port() const;
  // True from Start until BeginDrain/Stop: what a readiness probe reports.
  bool ready() const;
  // Stops accepting (new connections are refused), closes idle keep-alive connections and
  // marks the rest "Connection: close"; requests already read finish normally. Idempotent.
  void BeginDrain();
  // BeginDrain, then waits up to drain_timeout for in-flight requests (handlers, responses
  // being written, SSE streams) to finish; then closes every connection (SSE writers see a
  // disconnect; up to 2 s for them to wind down), stops the I/O threads, drops queued handler
  // calls and waits for running handlers to return (handlers should watch
  // HttpRequest::disconnected). Not from a handler or I/O thread. Idempotent.
  void Stop(std::chrono::milliseconds drain_timeout);

  size_t open_connections() const;
  size_t in_flight_requests() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::service
