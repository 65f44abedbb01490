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
// bounded by ServerLimits::max_connections. Routes marked RouteTraits::on_io_thread (health
// probes, /metrics) skip the pool: they answer while every handler thread is busy. A handler
// whose answer takes long (a generation) returns HttpResponse::Later or EventStream at once and
// answers from whatever thread has the result, so it holds no handler thread while it waits.
//
// Before a request's body is read, the server checks, in order (each refusal names its rule):
// the framing (Transfer-Encoding other than exactly "chunked": 501/400 and close), Host and
// Origin (ServerOptions::allowed_origins: 403), the route (404/405: the body is drained
// unstored and the connection stays usable), the API key (ServerOptions::api_key: 401), the
// body's size (max_body_bytes: 413) and the process-wide budget of body bytes in flight
// (max_body_bytes_in_flight: 503 with Retry-After). Then "Expect: 100-continue" is answered
// with 100 and the body read.
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

// What a route needs from the server beyond its handler.
struct RouteTraits {
  // The handler runs on an I/O thread instead of the handler pool, so it answers while the pool
  // is saturated. Only for handlers that are quick and never block (probes, /metrics); a
  // Later start runs there too, an event stream's start still on the pool.
  bool on_io_thread = false;
  // Served without ServerOptions::api_key: the liveness and readiness probes (an orchestrator
  // holds no key) and the web UI's static files (the page that asks for the key).
  bool public_access = false;
};

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

struct HttpResponse;

// The answer to a request whose handler returned HttpResponse::Later. Thread-safe: Send may be
// called from any thread, once; the request stays in flight (and counted by Stop's drain)
// until then. Destroying the last reference without Send answers 500.
class Responder {
 public:
  class Channel;  // owned jointly with the connection (http_session.cc)
  explicit Responder(std::shared_ptr<Channel> channel);
  ~Responder();
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;

  // Answers the request (an event stream too). Only the first call counts; false when it was
  // not the first, the client has gone or the server has already answered for it (Stop).
  bool Send(HttpResponse response);
  bool disconnected() const;
  // Calls callback once, on an I/O thread, when the client goes away (or the server stops)
  // before the answer was sent; at once (on the calling thread) when it already has. Dropped
  // unrun once the answer is sent. Callbacks must not block.
  void OnDisconnect(std::function<void()> callback);

 private:
  std::shared_ptr<Channel> channel_;
};

// Starts a later answer: called on the handler thread right after the handler returned.
using LaterStart = std::function<void(std::shared_ptr<Responder> responder)>;

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;
  std::string body;
  // When set, the response is an event stream: status and headers are sent with
  // "Content-Type: text/event-stream" and no length, body is ignored, and the connection ends
  // when the stream is closed.
  SseStart sse;
  // For an event stream: what the server writes, as raw event-stream text, when it must end the
  // stream before the writer closed it (Stop's drain deadline), e.g. an error event and the
  // stream's terminator, so that a client reads an end instead of a cut connection.
  std::string sse_abort;
  // When set, the handler's answer comes later, through a Responder (status, headers and body
  // of this response are ignored).
  LaterStart later;

  static HttpResponse Json(int status, std::string body);
  static HttpResponse Text(int status, std::string body);
  // {"error": {"message": ..., "type": ..., "code": status}}
  static HttpResponse Error(int status, std::string_view message, std::string_view type);
  static HttpResponse EventStream(SseStart start);
  static HttpResponse Later(LaterStart start);
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
  static constexpr size_t kDefaultMaxBodyBytesInFlight = size_t{1} << 30;
  static constexpr size_t kDefaultMaxConnectionsPerClient = 256;

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
  // Request-body bytes held by the whole server at once: every body being read or handled
  // (from the moment it is admitted until its handler returns). A Content-Length body is
  // admitted whole before a byte of it is read, a chunked one as it arrives (64 KiB at a time).
  // A body that fits but finds the budget full: 503 with Retry-After, connection closed; a
  // body larger than the whole budget can never fit: 413 naming the limit.
  size_t max_body_bytes_in_flight = kDefaultMaxBodyBytesInFlight;
  // Open connections from one peer address; one more is answered 429 with Retry-After and
  // closed, and the other clients are still served. (Behind a reverse proxy every connection
  // comes from the proxy's address: raise it there.)
  size_t max_connections_per_client = kDefaultMaxConnectionsPerClient;
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
  // "body_too_large" (413), "timeout" (408), "too_many_connections" (503), "bad_request" (400),
  // "too_many_client_connections" (429), "body_budget" (503: max_body_bytes_in_flight full),
  // "transfer_encoding" (400/501), "forbidden_origin" (403), "unauthorized" (401),
  // "shutdown" (503: Stop's drain deadline passed); "" when routing or a handler answered.
  std::string rejected_reason;
};

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 8000;                 // 0 picks a free port (see HttpServer::port())
  int io_threads = 1;
  int handler_threads = 4;
  ServerLimits limits;
  // When not empty, every request to a route without RouteTraits::public_access must carry
  // "Authorization: Bearer <api_key>" (compared in constant time); else 401 with
  // WWW-Authenticate and type "authentication_error". Checked before the body is read.
  std::string api_key;
  // With check_cross_site (on in `serve`; off by default here, for embedders and tests), cross-
  // site requests are refused (403) unless their origin is listed in allowed_origins, as
  // "scheme://host[:port]" ("*": every origin, and every Host). The rule, checked before the
  // body is read:
  // * Host: a server bound to a loopback address (127.0.0.0/8, ::1, "localhost") answers only
  //   requests whose Host is an IP literal, "localhost" (or a name under ".localhost"), or the
  //   host of a listed origin, so a DNS-rebinding page (its own name resolving to 127.0.0.1)
  //   cannot read it. Other binds accept any Host.
  // * Origin, when present: the request's own origin (http://<Host>) or a listed one; "null"
  //   and every other origin are refused, so a form on another site cannot POST here. A listed
  //   origin's requests get Access-Control-Allow-Origin and their CORS preflight (OPTIONS)
  //   is answered 204.
  bool check_cross_site = false;
  std::vector<std::string> allowed_origins;
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
  void Route(std::string method, std::string path_pattern, Handler handler,
             RouteTraits traits = {});

  // Binds and starts serving; errors (bad address, port in use) are returned, not thrown.
  Status Start(const ServerOptions& options);
  // The bound port (the chosen one when options.port was 0); 0 before Start.
  int port() const;
  // True from Start until BeginDrain/Stop: what a readiness probe reports.
  bool ready() const;
  // Stops accepting (new connections are refused), closes idle keep-alive connections and
  // marks the rest "Connection: close"; requests already read finish normally. Idempotent.
  void BeginDrain();
  // BeginDrain, then waits for in-flight requests (handlers, later answers, responses being
  // written, SSE streams) to finish; returns within drain_timeout whatever is running. The
  // last quarter of it (at most 2 s) winds down what did not finish: a request still being
  // read or handled is answered 503 with Retry-After (and its handler sees
  // HttpRequest::disconnected), an event stream gets its HttpResponse::sse_abort text and
  // ends, SSE writers and responders see a disconnect; then connections are closed, the I/O
  // threads stop, queued handler calls are dropped and running handlers get what is left of
  // the time to return. False when one did not: its thread is left running (detached) and
  // the server's state is never freed under it, so the process should exit soon. Not from a
  // handler or I/O thread. Idempotent (true when already stopped).
  bool Stop(std::chrono::milliseconds drain_timeout);

  // Runs task on a handler thread: short work that continues a later answer (turning a
  // generation's new tokens into events). Dropped once Stop has shut the pool down.
  void Post(std::function<void()> task);

  size_t open_connections() const;
  size_t in_flight_requests() const;
  // Request-body bytes admitted against ServerLimits::max_body_bytes_in_flight.
  size_t body_bytes_in_flight() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::service
