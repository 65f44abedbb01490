// SPDX-License-Identifier: Apache-2.0
// The Boost.Beast 1.74 / Asio side of HttpServer, shared by its three files: the server itself
// (http_server.cc: accepting, the connection caps, start and stop), one connection
// (http_session.cc: reading, admitting, dispatching and writing requests) and its event streams
// and later answers (http_stream.cc); a request head is read as http_head.h says. Only these
// files pay Beast's and Asio's compile time.
// Not an API.
//
// Per connection (Session), everything runs on the connection's strand:
//   idle (wait_read, keep_alive_idle) -> reading the header -> admitting (framing, Host and
//   Origin, route, API key, body budget; "100 Continue") -> reading the body (one
//   request_deadline for header and body) -> handling (handler pool or I/O thread, or a later
//   answer; socket watched for disconnect) -> writing (write_timeout) -> idle again, or
//   closing; or -> streaming (SSE) until the stream or the client ends.
// One steady_timer per connection enforces whichever deadline is current by cancelling the
// socket's operations (never closing it), so a timed-out read can still be answered 408.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "service/http_checks.h"
#include "service/http_head.h"
#include "service/http_internal.h"
#include "service/http_server.h"

namespace mineru::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCodeT = boost::system::error_code;

namespace internal {
// RequestRecord::route of requests no route answered.
inline constexpr const char* kUnmatchedRoute = "unmatched";
}  // namespace internal

class Session;

class HttpServer::Impl {
 public:
  void DoAccept();
  void OnAccept(tcp::socket socket);
  void Register(const std::shared_ptr<Session>& s);
  void Unregister(Session* s);
  void ForEachSession(const std::function<void(const std::shared_ptr<Session>&)>& fn);
  void InFlightDone() {
    std::lock_guard lock(mu);
    --in_flight;
    cv.notify_all();
  }
  // ServerOptions::on_request, never throwing into an I/O thread.
  void Report(const RequestRecord& record) {
    if (!options.on_request) return;
    try {
      options.on_request(record);
    } catch (...) {
      // An observer's failure must not take the connection (or the I/O thread) down.
    }
  }

  ServerOptions options;
  internal::Router router;
  internal::OriginPolicy origin_policy;
  std::atomic<bool> running{false};
  std::atomic<bool> ready{false};
  std::atomic<bool> draining{false};
  // Set once Stop's drain deadline passed: requests still being read or handled are answered
  // 503, event streams aborted.
  std::atomic<bool> aborting{false};
  // Stop left a handler thread running on this state (which is then never freed).
  bool leaked = false;
  std::atomic<size_t> connections{0};
  std::atomic<size_t> in_flight{0};
  std::atomic<int> port{0};
  std::mutex mu;  // guards sessions; cv waits on in_flight and sessions
  std::condition_variable cv;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  internal::PeerConnections peers;
  // Outlive the I/O context below: queued handlers hold sessions that release into them.
  internal::ByteBudget body_budget;
  internal::WorkQueue pool;
  // Destroyed before everything above (pending handlers hold Sessions that touch it).
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<asio::strand<asio::io_context::executor_type>> accept_strand;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> accept_retry;
  std::vector<std::thread> io_threads;
};

// What a later answer (Responder) or an event stream (SseWriter) holds of its connection.
struct SessionChannel {
  std::weak_ptr<Session> session;
  std::shared_ptr<internal::DisconnectState> disconnect;
  uint64_t request = 0;  // Session::request_count() of the request it answers
  std::atomic<bool> sent{false};
};

class SseWriter::Channel : public SessionChannel {};
class Responder::Channel : public SessionChannel {
 public:
  // The OnDisconnect callbacks of this answer in the connection's DisconnectState, removed
  // once it is sent (the connection may serve many more requests).
  std::mutex mu;
  std::vector<uint64_t> tokens;
};

// One TCP connection. Invariant: every member is touched only on exec_ (the strand), except
// the atomics and disconnect_ used by SSE writers and responders on other threads.
class Session : public std::enable_shared_from_this<Session> {
 public:
  enum class State { kIdle, kReading, kHandling, kWriting, kStreaming, kClosed };

  // `peer` was counted in server->peers for this connection; the session uncounts it.
  Session(HttpServer::Impl* server, tcp::socket socket, std::string peer);
  ~Session();

  const asio::any_io_executor& executor() const { return exec_; }
  const ServerLimits& limits() const { return server_->options.limits; }
  std::shared_ptr<internal::DisconnectState> disconnect() const { return disconnect_; }

  void Start() { WaitForRequest(); }
  // On drain: idle keep-alive connections are closed now, the others after their response.
  void OnDrain();
  // Stop's deadline passed: a request being read or handled is answered 503, a stream gets its
  // abort text and ends, an idle connection is closed.
  void Abort();
  void Close();

  // Thread-safe (http_stream.cc): queues SSE bytes for the strand to write; ends the stream.
  bool SseEnqueue(std::string text);
  void SseCloseRequest();
  // Thread-safe: the answer of a Later response for request number `request`.
  void PostAnswer(uint64_t request, HttpResponse response);

 private:
  // Deadlines (http_session.cc).
  void ArmDeadline(std::chrono::milliseconds d);
  void CancelDeadline();
  void BeginInFlight();
  void EndInFlight();

  // Reading and admitting a request.
  void WaitForRequest();
  void ReadRequest();
  void OnHeader(ErrorCodeT ec);
  bool RefuseReadError(ErrorCodeT ec, bool timed_out);
  void Admit();
  std::optional<HttpResponse> CheckAccess(
      const http::request_parser<http::buffer_body>::value_type& msg);
  void StartBody();
  void ReadBody();
  void OnBody(ErrorCodeT ec, size_t window);
  void Dispatch();
  void RunHandler(const std::shared_ptr<HttpRequest>& req, const Handler* handler,
                  internal::BudgetHold hold, uint64_t id, bool inline_call);

  // Answering.
  void OnHandled(HttpResponse response);
  void Refuse(int status, const std::string& message, std::string_view type, const char* reason);
  void RefuseWith(HttpResponse response, const char* reason, bool close);
  void FinishRecord();
  void WriteResponse(const HttpResponse& r, bool close_after);
  void OnWritten(ErrorCodeT ec);
  void LingerClose();
  void LingerRead();
  void StartDisconnectWatch();

  // Event streams (http_stream.cc).
  void StartStream(HttpResponse response);
  void ArmHeartbeat();
  void SseWriteNext();

  HttpServer::Impl* server_;
  asio::any_io_executor exec_;
  tcp::socket socket_;
  asio::steady_timer deadline_;
  asio::steady_timer heartbeat_;
  std::shared_ptr<internal::DisconnectState> disconnect_;
  std::string remote_;  // the peer address, as counted in server_->peers
  State state_ = State::kIdle;
  uint64_t deadline_gen_ = 0;
  bool timed_out_ = false;
  bool in_flight_ = false;
  bool keep_alive_ = false;
  bool head_request_ = false;  // the request being answered is a HEAD
  beast::flat_buffer buffer_;

  // The request being read (reset once dispatched).
  std::optional<internal::RequestParser> parser_;
  std::shared_ptr<HttpRequest> request_;
  const Handler* handler_ = nullptr;  // null: the request is answered with answer_
  RouteTraits traits_;
  std::optional<HttpResponse> answer_;  // 404/405 (or a preflight), after the body is drained
  bool store_body_ = false;             // false: the body is read and dropped
  bool continue_ = false;               // "Expect: 100-continue" to answer before the body
  internal::BudgetHold body_hold_;      // the body's share of max_body_bytes_in_flight
  std::vector<char> scratch_;           // where a dropped body is read
  std::string cors_origin_;             // a listed cross-site origin: CORS headers echo it
  uint64_t request_count_ = 0;          // requests read on this connection

  std::vector<char> linger_buf_;
  size_t linger_bytes_ = 0;
  // The request being answered; reported once by FinishRecord.
  RequestRecord record_;
  bool record_active_ = false;
  std::chrono::steady_clock::time_point record_start_;

  // SSE state (strand only, except the atomics).
  std::string sse_abort_;     // HttpResponse::sse_abort of the open stream
  bool sse_aborted_ = false;  // Abort queued sse_abort_: later events are dropped
  std::deque<std::string> sse_queue_;
  std::string sse_batch_;
  size_t sse_batch_counted_ = 0;  // bytes of sse_batch_ counted in sse_bytes_
  size_t sse_uncounted_ = 0;      // bytes at the front of sse_queue_ not counted (the head)
  bool sse_writing_ = false;
  bool sse_close_requested_ = false;
  std::atomic<bool> sse_closed_{false};
  std::atomic<size_t> sse_bytes_{0};
};

}  // namespace mineru::service
