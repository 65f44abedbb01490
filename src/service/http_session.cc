// SPDX-License-Identifier: Apache-2.0
// One connection of HttpServer: reading a request's header, admitting it (the checks of
// http_server.h, in their order, before a byte of the body is read), reading or dropping its
// body, running its handler and writing the answer. Event streams and later answers are in
// http_stream.cc.
#include "service/http_session.h"

#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <utility>

#include "service/api_error.h"
#include "service/http_head.h"

namespace mineru::service {

using internal::BudgetHold;
using internal::ClassifyTransferEncoding;
using internal::HasCrLf;
using internal::kUnmatchedRoute;
using internal::TransferCoding;

namespace {

// A chunked body (or a large one with Content-Length) grows its buffer by at least this much
// at a time; a dropped body is read through a buffer of this size.
constexpr size_t kBodyStep = size_t{64} << 10;

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (internal::LowerAscii(a[i]) != internal::LowerAscii(b[i])) return false;
  }
  return true;
}

// 503/429 with Retry-After: conditions that pass.
HttpResponse RetryLater(int status, std::string_view message, std::string_view type,
                        std::string_view code) {
  HttpResponse r = HttpResponse::Json(status, ApiErrorBody(message, type, code));
  r.headers["Retry-After"] = std::to_string(kRetryAfter.count());
  return r;
}

// max_body_bytes_in_flight is full: a condition that passes.
HttpResponse BodyBudgetFull() {
  return RetryLater(503,
                    "the server holds as many request bodies as it may "
                    "(--max-body-bytes-in-flight): retry later",
                    "unavailable_error", "body_budget");
}

// A body of `bytes` can never fit in max_body_bytes_in_flight of `capacity`: a permanent
// limit, 413 naming it (no Retry-After).
HttpResponse BodyOverTheWholeBudget(size_t bytes, size_t capacity) {
  const std::string message = "request body of " + std::to_string(bytes) +
                              " bytes is larger than the server's body budget of " +
                              std::to_string(capacity) + " bytes (--max-body-bytes-in-flight)";
  return HttpResponse::Json(
      413, ApiErrorBody(message, "invalid_request_error", "max_body_bytes_in_flight"));
}

}  // namespace

Session::Session(HttpServer::Impl* server, tcp::socket socket, std::string peer)
    : server_(server),
      exec_(socket.get_executor()),
      socket_(std::move(socket)),
      deadline_(exec_),
      heartbeat_(exec_),
      disconnect_(std::make_shared<internal::DisconnectState>()),
      remote_(std::move(peer)) {}

Session::~Session() {
  server_->peers.Remove(remote_);
  server_->Unregister(this);
  server_->connections.fetch_sub(1);
}

void Session::OnDrain() {
  if (state_ == State::kIdle) Close();
}

void Session::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  CancelDeadline();
  heartbeat_.cancel();
  ErrorCodeT ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  disconnect_->Fire();
  body_hold_.Reset();
  request_.reset();
  FinishRecord();  // an event stream that ended, or a response whose write was cut short
  EndInFlight();
}

// Deadline: cancels the socket's pending operations when it fires; deadline_gen_ discards
// stale expiries.
void Session::ArmDeadline(std::chrono::milliseconds d) {
  uint64_t gen = ++deadline_gen_;
  timed_out_ = false;
  deadline_.expires_after(d);
  deadline_.async_wait([self = shared_from_this(), gen](ErrorCodeT ec) {
    if (ec || gen != self->deadline_gen_) return;
    self->timed_out_ = true;
    ErrorCodeT ignored;
    self->socket_.cancel(ignored);
  });
}

void Session::CancelDeadline() {
  ++deadline_gen_;
  deadline_.cancel();
}

void Session::BeginInFlight() {
  if (in_flight_) return;
  in_flight_ = true;
  server_->in_flight.fetch_add(1);
}

void Session::EndInFlight() {
  if (!in_flight_) return;
  in_flight_ = false;
  server_->InFlightDone();
}

void Session::WaitForRequest() {
  state_ = State::kIdle;
  if (server_->draining.load()) return Close();
  if (buffer_.size() > 0) return ReadRequest();  // pipelined bytes already here
  ArmDeadline(limits().keep_alive_idle);
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](ErrorCodeT ec) {
    if (self->state_ != State::kIdle) return;
    if (ec) return self->Close();
    self->ReadRequest();
  });
}

void Session::ReadRequest() {
  state_ = State::kReading;
  record_ = {};
  record_active_ = false;
  record_start_ = std::chrono::steady_clock::now();
  request_.reset();
  handler_ = nullptr;
  traits_ = {};
  answer_.reset();
  cors_origin_.clear();
  body_hold_ = BudgetHold(&server_->body_budget);
  parser_.emplace();
  internal::ConfigureRequestParser(*parser_, limits());
  ArmDeadline(limits().request_deadline);  // header and body together
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_from_this()](ErrorCodeT ec, size_t) {
                            if (self->state_ != State::kReading) return;
                            self->OnHeader(ec);
                          });
}

void Session::OnHeader(ErrorCodeT ec) {
  if (ec) {
    const bool timed_out = timed_out_;
    CancelDeadline();
    if (RefuseReadError(ec, timed_out)) return;
    return Close();
  }
  Admit();
}

// A failed read: answered (true) unless the client went away or the socket failed (false).
bool Session::RefuseReadError(ErrorCodeT ec, bool timed_out) {
  if (server_->aborting.load()) {
    RefuseWith(
        RetryLater(503, "the server is shutting down", "unavailable_error", "service_unavailable"),
        "shutdown", true);
    return true;
  }
  if (timed_out) {
    Refuse(408, "request not received within the deadline", "timeout_error", "timeout");
    return true;
  }
  if (ec == http::error::header_limit) {
    Refuse(431, "request header block too large", "invalid_request_error", "header_too_large");
    return true;
  }
  if (ec == http::error::body_limit) {
    Refuse(413, "request body too large (--max-body-bytes)", "invalid_request_error",
           "body_too_large");
    return true;
  }
  if (ec == http::error::end_of_stream ||
      ec.category() != http::make_error_code(http::error::bad_target).category()) {
    return false;  // the client went away or the socket failed
  }
  Refuse(400, "malformed HTTP request: " + ec.message(), "invalid_request_error", "bad_request");
  return true;
}

// The request's header is here and no byte of its body has been taken: everything that can
// refuse it without the body does so now, so a refused body is never buffered.
void Session::Admit() {
  auto& msg = parser_->get();
  ++request_count_;
  keep_alive_ = msg.keep_alive();
  auto req = std::make_shared<HttpRequest>();
  internal::CopyRequestHead(*parser_, *req);
  // HEAD is GET without the body (RFC 9110 9.3.2): the GET route answers, WriteResponse
  // sends only the head, with the Content-Length the body would have had.
  head_request_ = req->method == "HEAD";
  req->remote_address = remote_;
  req->disconnected = disconnect_->flag;
  record_active_ = true;
  record_.method = req->method;
  record_.route = kUnmatchedRoute;
  request_ = req;

  const auto header = [&](std::string_view name) -> std::optional<std::string_view> {
    auto it = req->headers.find(name);
    if (it == req->headers.end()) return std::nullopt;
    return std::string_view(it->second);
  };
  const boost::optional<uint64_t> length = parser_->content_length();
  const bool has_body = parser_->chunked() || (length && *length > 0);

  // 1. Framing (RFC 9112 6.1): a body whose length cannot be told is never read as the next
  // request; the connection closes.
  switch (ClassifyTransferEncoding(header("Transfer-Encoding"))) {
    case TransferCoding::kNone:
    case TransferCoding::kChunked:
      break;
    case TransferCoding::kUnsupported:
      return RefuseWith(HttpResponse::Error(501, "Transfer-Encoding other than chunked alone",
                                            "invalid_request_error"),
                        "transfer_encoding", true);
    case TransferCoding::kUnframed:
      return RefuseWith(HttpResponse::Error(400,
                                            "Transfer-Encoding without chunked as its last "
                                            "coding: the body's length is unknown",
                                            "invalid_request_error"),
                        "transfer_encoding", true);
  }

  // 2. Host and Origin.
  const std::optional<std::string_view> origin = header("Origin");
  const bool preflight = req->method == "OPTIONS" && origin.has_value() &&
                         header("Access-Control-Request-Method").has_value();
  if (server_->options.check_cross_site) {
    const std::string refusal = server_->origin_policy.Check(header("Host"), origin);
    if (!refusal.empty()) {
      return RefuseWith(
          HttpResponse::Json(403, ApiErrorBody(refusal, "permission_error", "forbidden_origin")),
          "forbidden_origin", has_body);
    }
    if (origin && server_->origin_policy.Listed(*origin)) cors_origin_ = std::string(*origin);
  }

  // 3. The route. A request no route takes is answered after its body is drained unstored,
  // so the connection stays in step for what the client pipelined behind it.
  std::string allow;
  const internal::RouteEntry* route = nullptr;
  if (preflight && !cors_origin_.empty()) {
    HttpResponse r;
    r.status = 204;
    r.headers["Access-Control-Allow-Methods"] = "GET, HEAD, POST, DELETE";
    r.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type";
    r.headers["Access-Control-Max-Age"] = "600";
    answer_ = std::move(r);
  } else {
    route = server_->router.Match(head_request_ ? "GET" : req->method, req->target, &req->params,
                                  &allow);
    if (route == nullptr) {
      if (allow.empty()) {
        answer_ = HttpResponse::Error(404, "no route for " + req->target, "not_found_error");
      } else {
        answer_ = HttpResponse::Error(405, "method " + req->method + " not allowed",
                                      "invalid_request_error");
        answer_->headers["Allow"] = allow;
      }
    } else {
      handler_ = &route->handler;
      traits_ = route->traits;
      record_.route = route->pattern;
    }
  }

  // 4. The API key, on every route but the public ones (and the preflight, which browsers
  // send without credentials).
  const std::string& key = server_->options.api_key;
  if (!key.empty() && !traits_.public_access && !(preflight && !cors_origin_.empty())) {
    const std::optional<std::string_view> authorization = header("Authorization");
    const std::optional<std::string_view> token =
        authorization ? internal::BearerToken(*authorization) : std::nullopt;
    if (!token || !internal::ConstantTimeEquals(*token, key)) {
      HttpResponse r =
          HttpResponse::Json(401, ApiErrorBody(token ? "invalid API key"
                                                     : "missing API key: send Authorization: "
                                                       "Bearer <key> (--api-key)",
                                               "authentication_error", "invalid_api_key"));
      r.headers["WWW-Authenticate"] = "Bearer";
      record_.route = kUnmatchedRoute;
      return RefuseWith(std::move(r), "unauthorized", has_body);
    }
  }

  // 5. The body: stored only for a handler, and only within max_body_bytes_in_flight (the
  // per-request max_body_bytes was checked by the parser against Content-Length already).
  store_body_ = handler_ != nullptr;
  continue_ = false;
  if (has_body) {
    const auto expect = header("Expect");
    if (expect && EqualsIgnoreCase(*expect, "100-continue") && msg.version() >= 11) {
      // A refusal decided now is sent without the body; the client may never send it.
      if (!store_body_) return RefuseWith(std::move(*answer_), "", true);
      continue_ = true;
    }
  }
  if (store_body_ && length && *length > 0) {
    const size_t capacity = server_->body_budget.capacity();
    if (*length > capacity) {
      return RefuseWith(BodyOverTheWholeBudget(*length, capacity), "body_too_large", true);
    }
    if (!body_hold_.Grow(static_cast<size_t>(*length))) {
      return RefuseWith(BodyBudgetFull(), "body_budget", true);
    }
  }
  if (!has_body) return Dispatch();
  StartBody();
}

void Session::StartBody() {
  if (!continue_) return ReadBody();
  asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                    [self = shared_from_this()](ErrorCodeT ec, size_t) {
                      if (self->state_ != State::kReading) return;
                      if (ec) {
                        const bool timed_out = self->timed_out_;
                        self->CancelDeadline();
                        if (self->RefuseReadError(ec, timed_out)) return;
                        return self->Close();
                      }
                      self->ReadBody();
                    });
}

// Reads the next window of the body: into the request's body (grown a window at a time, so a
// body announced large but sent slowly is not allocated before it arrives; std::string's
// geometric growth keeps the copies linear), or into scratch_ when the body is dropped.
void Session::ReadBody() {
  auto& body = parser_->get().body();
  size_t window = kBodyStep;
  if (store_body_) {
    std::string& stored = request_->body;
    const size_t have = stored.size();
    if (const auto length = parser_->content_length()) {
      window = std::min<size_t>(window, static_cast<size_t>(*length) - have);
    }
    stored.resize(have + window);
    body.data = stored.data() + have;
  } else {
    scratch_.resize(kBodyStep);
    body.data = scratch_.data();
  }
  body.size = window;
  body.more = true;
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this(), window](ErrorCodeT ec, size_t) {
                     if (self->state_ != State::kReading) return;
                     self->OnBody(ec, window);
                   });
}

void Session::OnBody(ErrorCodeT ec, size_t window) {
  auto& body = parser_->get().body();
  const size_t got = window - body.size;
  if (store_body_) {
    std::string& stored = request_->body;
    stored.resize(stored.size() - window + got);
    // A chunked body is counted as it arrives (a Content-Length one was admitted whole); one
    // that outgrows the whole budget could never fit, so it is the permanent 413.
    if (!parser_->content_length() && got > 0 && !body_hold_.Grow(got)) {
      const size_t capacity = server_->body_budget.capacity();
      if (body_hold_.bytes() + got > capacity) {
        return RefuseWith(BodyOverTheWholeBudget(body_hold_.bytes() + got, capacity),
                          "body_too_large", true);
      }
      return RefuseWith(BodyBudgetFull(), "body_budget", true);
    }
  }
  if (ec == http::error::need_buffer) ec = {};
  if (ec) {
    const bool timed_out = timed_out_;
    CancelDeadline();
    if (RefuseReadError(ec, timed_out)) return;
    return Close();
  }
  if (!parser_->is_done()) return ReadBody();
  Dispatch();
}

void Session::Dispatch() {
  parser_.reset();
  CancelDeadline();
  if (handler_ == nullptr) {  // 404, 405 or a preflight: the body (if any) was drained
    BeginInFlight();
    HttpResponse answer = std::move(*answer_);
    answer_.reset();
    request_.reset();
    return WriteResponse(answer, false);
  }
  std::shared_ptr<HttpRequest> req = std::move(request_);
  BeginInFlight();
  state_ = State::kHandling;
  const uint64_t id = request_count_;
  if (traits_.on_io_thread) {
    return RunHandler(req, handler_, std::move(body_hold_), id, /*inline_call=*/true);
  }
  StartDisconnectWatch();
  auto hold = std::make_shared<BudgetHold>(std::move(body_hold_));
  server_->pool.Post([self = shared_from_this(), req, handler = handler_, hold, id] {
    self->RunHandler(req, handler, std::move(*hold), id, /*inline_call=*/false);
  });
}

// On a handler thread, or on the strand for RouteTraits::on_io_thread. The body's share of the
// budget is given back as soon as the handler returned.
void Session::RunHandler(const std::shared_ptr<HttpRequest>& req, const Handler* handler,
                         BudgetHold hold, uint64_t id, bool inline_call) {
  HttpResponse response;
  try {
    response = (*handler)(*req);
  } catch (const std::exception& e) {
    // An exception text may name server files (std::filesystem puts paths in its messages).
    response =
        HttpResponse::Error(500, "handler failed: " + WithoutServerPaths(e.what()), "server_error");
  } catch (...) {
    response = HttpResponse::Error(500, "handler failed", "server_error");
  }
  hold.Reset();
  if (response.later) {
    auto channel = std::make_shared<Responder::Channel>();
    channel->session = weak_from_this();
    channel->disconnect = disconnect_;
    channel->request = id;
    LaterStart start = std::move(response.later);
    try {
      start(std::make_shared<Responder>(channel));
    } catch (...) {
      // The responder went with the exception: it answered 500.
    }
    return;
  }
  if (inline_call) return OnHandled(std::move(response));
  PostAnswer(id, std::move(response));
}

void Session::OnHandled(HttpResponse response) {
  if (state_ != State::kHandling) return;
  ErrorCodeT ec;
  socket_.cancel(ec);  // the disconnect watch (the only pending operation)
  if (response.sse) return StartStream(std::move(response));
  if (response.later) {
    response = HttpResponse::Error(500, "a later answer cannot answer later", "server_error");
  }
  WriteResponse(response, false);
}

// Watches the socket while a handler runs or a stream is open: readable with nothing to read
// means the client closed (or reset) the connection.
void Session::StartDisconnectWatch() {
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](ErrorCodeT ec) {
    if (ec == asio::error::operation_aborted) return;
    State s = self->state_;
    if (s != State::kHandling && s != State::kStreaming) return;
    ErrorCodeT aec;
    size_t available = ec ? 0 : self->socket_.available(aec);
    if (!ec && !aec && available == 0) {
      // A read-readiness wakeup can be stale (left from the request's own bytes, already
      // read): only a peek that sees end-of-stream means the client closed.
      char byte;
      const ssize_t n = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return self->StartDisconnectWatch();
      }
    }
    if (ec || aec || available == 0) {
      self->disconnect_->Fire();
      if (s == State::kStreaming) self->Close();
      return;
    }
    if (s == State::kStreaming) {  // a stream has no request to come: discard and re-arm
      char scratch[4096];
      self->socket_.read_some(asio::buffer(scratch, std::min(available, sizeof(scratch))), aec);
      if (aec) return self->Close();
      self->StartDisconnectWatch();
    }
    // kHandling with bytes waiting: a pipelined request; it is read after the response.
  });
}

// A request refused before routing (limits, malformed): answered and reported with `reason`.
void Session::Refuse(int status, const std::string& message, std::string_view type,
                     const char* reason) {
  RefuseWith(HttpResponse::Error(status, message, type), reason, true);
}

// A request answered before its body was read: with `close` (a body may follow that nothing
// will read) the connection closes after the answer, discarding what still arrives.
void Session::RefuseWith(HttpResponse response, const char* reason, bool close) {
  record_active_ = true;
  if (reason[0] != '\0') record_.route = kUnmatchedRoute;
  record_.rejected_reason = reason;
  // The start line is parsed first: the method is known unless the refusal came before it.
  if (parser_ && record_.method.empty())
    record_.method = std::string(parser_->get().method_string());
  parser_.reset();
  request_.reset();
  body_hold_.Reset();
  CancelDeadline();
  BeginInFlight();
  WriteResponse(response, close);
}

// Reports the current request once (when it got an answer); see ServerOptions::on_request.
void Session::FinishRecord() {
  if (!record_active_) return;
  record_active_ = false;
  if (record_.status == 0) return;  // closed before any answer
  record_.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - record_start_).count();
  server_->Report(record_);
}

void Session::WriteResponse(const HttpResponse& r, bool close_after) {
  state_ = State::kWriting;
  record_.status = r.status;
  auto res = std::make_shared<http::response<http::string_body>>();
  res->version(11);
  res->result(static_cast<unsigned>(r.status));
  for (const auto& [name, value] : r.headers) {
    if (name.empty() || HasCrLf(name) || HasCrLf(value)) continue;  // no header injection
    res->insert(name, value);
  }
  if (!cors_origin_.empty() && !HasCrLf(cors_origin_)) {
    res->set(http::field::access_control_allow_origin, cors_origin_);
    res->set(http::field::vary, "Origin");
  }
  res->body() = r.body;
  keep_alive_ = keep_alive_ && !close_after && !server_->draining.load();
  res->keep_alive(keep_alive_);
  res->prepare_payload();
  if (head_request_) {
    res->body().clear();  // the Content-Length set above stays: the size of the GET body
  }
  ArmDeadline(limits().write_timeout);
  http::async_write(socket_, *res, [self = shared_from_this(), res](ErrorCodeT ec, size_t) {
    self->OnWritten(ec);
  });
}

void Session::OnWritten(ErrorCodeT ec) {
  if (state_ != State::kWriting) return;
  CancelDeadline();
  FinishRecord();
  EndInFlight();
  if (ec) return Close();
  if (!keep_alive_) return LingerClose();
  WaitForRequest();
}

// Half-closes, then discards what the client still sends (up to 1 MiB or 1 s), so the
// response is not lost to a reset caused by unread request bytes.
void Session::LingerClose() {
  state_ = State::kWriting;  // no new request is read
  ErrorCodeT ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  ArmDeadline(std::chrono::milliseconds(1000));
  linger_bytes_ = 0;
  LingerRead();
}

void Session::LingerRead() {
  linger_buf_.resize(16384);
  socket_.async_read_some(asio::buffer(linger_buf_),
                          [self = shared_from_this()](ErrorCodeT ec, size_t n) {
                            self->linger_bytes_ += n;
                            if (ec || self->linger_bytes_ > (1u << 20)) return self->Close();
                            self->LingerRead();
                          });
}

}  // namespace mineru::service
