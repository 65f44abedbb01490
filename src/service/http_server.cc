// SPDX-License-Identifier: Apache-2.0
// HttpServer on Boost.Beast 1.74 / Asio. All Beast and Asio code of the service layer is in this
// file, so only it pays their compile time.
//
// Per connection (Session), everything runs on the connection's strand:
//   idle (wait_read, keep_alive_idle) -> reading (one request_deadline for header+body)
//   -> handling (handler pool; socket watched for disconnect) -> writing (write_timeout)
//   -> idle again, or closing; or -> streaming (SSE) until the stream or the client ends.
// One steady_timer per connection enforces whichever deadline is current by cancelling the
// socket's operations (never closing it), so a timed-out read can still be answered 408.
#include "service/http_server.h"

#include <sys/socket.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "service/http_internal.h"

namespace mineru::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Strand = asio::strand<asio::io_context::executor_type>;
using ErrorCodeT = boost::system::error_code;

namespace {

using internal::DisconnectState;
using internal::ErrorJson;
using internal::HasCrLf;
using internal::LowerAscii;
using internal::SplitPath;
using internal::WorkQueue;

// RequestRecord::route of requests no route answered.
constexpr const char* kUnmatchedRoute = "unmatched";

std::string ReasonPhrase(int status) {
  return std::string(http::obsolete_reason(static_cast<http::status>(status)));
}

}  // namespace

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
  std::atomic<bool> running{false};
  std::atomic<bool> ready{false};
  std::atomic<bool> draining{false};
  std::atomic<size_t> connections{0};
  std::atomic<size_t> in_flight{0};
  std::atomic<int> port{0};
  std::mutex mu;  // guards sessions; cv waits on in_flight
  std::condition_variable cv;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  WorkQueue pool;
  // Destroyed before everything above (pending handlers hold Sessions that touch it).
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<Strand> accept_strand;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> accept_retry;
  std::vector<std::thread> io_threads;
};

// One TCP connection. Invariant: every member is touched only on exec_ (the strand), except
// the atomics and disconnect_ used by SSE writers on other threads.
class Session : public std::enable_shared_from_this<Session> {
 public:
  enum class State { kIdle, kReading, kHandling, kWriting, kStreaming, kClosed };

  Session(HttpServer::Impl* server, tcp::socket socket)
      : server_(server),
        exec_(socket.get_executor()),
        socket_(std::move(socket)),
        deadline_(exec_),
        heartbeat_(exec_),
        disconnect_(std::make_shared<DisconnectState>()) {
    ErrorCodeT ec;
    auto endpoint = socket_.remote_endpoint(ec);
    if (!ec) remote_ = endpoint.address().to_string();
  }
  ~Session() {
    server_->Unregister(this);
    server_->connections.fetch_sub(1);
  }

  const asio::any_io_executor& executor() const { return exec_; }
  const ServerLimits& limits() const { return server_->options.limits; }

  void Start() { WaitForRequest(); }

  // On drain: idle keep-alive connections are closed now, the others after their response.
  void OnDrain() {
    if (state_ == State::kIdle) Close();
  }

  void Close() {
    if (state_ == State::kClosed) return;
    state_ = State::kClosed;
    CancelDeadline();
    heartbeat_.cancel();
    ErrorCodeT ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    disconnect_->Fire();
    FinishRecord();  // an event stream that ended, or a response whose write was cut short
    EndInFlight();
  }

  // Thread-safe: queues SSE bytes for the strand to write.
  bool SseEnqueue(std::string text) {
    if (sse_closed_.load() || disconnect_->flag->load()) return false;
    size_t before = sse_bytes_.fetch_add(text.size());
    if (before + text.size() > limits().max_sse_queue_bytes) {
      asio::post(exec_, [self = shared_from_this()] { self->Close(); });
      return false;
    }
    asio::post(exec_, [self = shared_from_this(), text = std::move(text)]() mutable {
      if (self->state_ != State::kStreaming) return;
      self->sse_queue_.push_back(std::move(text));
      self->SseWriteNext();
    });
    return true;
  }

  void SseCloseRequest() {
    if (sse_closed_.exchange(true)) return;
    asio::post(exec_, [self = shared_from_this()] {
      self->sse_close_requested_ = true;
      if (!self->sse_writing_ && self->sse_queue_.empty()) self->Close();
    });
  }

  std::shared_ptr<DisconnectState> disconnect() const { return disconnect_; }

 private:
  // Deadline: cancels the socket's pending operations when it fires; generation_ discards
  // stale expiries.
  void ArmDeadline(std::chrono::milliseconds d) {
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
  void CancelDeadline() {
    ++deadline_gen_;
    deadline_.cancel();
  }

  void BeginInFlight() {
    if (in_flight_) return;
    in_flight_ = true;
    server_->in_flight.fetch_add(1);
  }
  void EndInFlight() {
    if (!in_flight_) return;
    in_flight_ = false;
    server_->InFlightDone();
  }

  void WaitForRequest() {
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

  void ReadRequest() {
    state_ = State::kReading;
    record_ = {};
    record_active_ = false;
    record_start_ = std::chrono::steady_clock::now();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(limits().max_header_bytes));
    parser_->body_limit(static_cast<uint64_t>(limits().max_body_bytes));
    ArmDeadline(limits().request_deadline);
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](ErrorCodeT ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(ErrorCodeT ec) {
    if (state_ != State::kReading) return;
    bool timed_out = timed_out_;
    CancelDeadline();
    if (ec) {
      if (timed_out) {
        return Refuse(408, "request not received within the deadline", "timeout_error", "timeout");
      }
      if (ec == http::error::header_limit) {
        return Refuse(431, "request header block too large", "invalid_request_error",
                      "header_too_large");
      }
      if (ec == http::error::body_limit) {
        return Refuse(413, "request body too large", "invalid_request_error", "body_too_large");
      }
      if (ec == http::error::end_of_stream ||
          ec.category() != http::make_error_code(http::error::bad_target).category()) {
        return Close();  // the client went away or the socket failed
      }
      return Refuse(400, "malformed HTTP request: " + ec.message(), "invalid_request_error",
                    "bad_request");
    }
    Dispatch();
  }

  void Dispatch() {
    http::request<http::string_body> msg = parser_->release();
    parser_.reset();
    keep_alive_ = msg.keep_alive();
    auto req = std::make_shared<HttpRequest>();
    req->method = std::string(msg.method_string());
    // HEAD is GET without the body (RFC 9110 9.3.2): the GET route answers, WriteResponse
    // sends only the head, with the Content-Length the body would have had.
    head_request_ = req->method == "HEAD";
    std::string_view target(msg.target().data(), msg.target().size());
    size_t q = target.find('?');
    req->target = std::string(target.substr(0, q));
    if (q != std::string_view::npos) req->query = std::string(target.substr(q + 1));
    for (const auto& field : msg) {
      std::string name(field.name_string());
      std::string value(field.value());
      auto [it, inserted] = req->headers.emplace(name, value);
      if (!inserted) it->second += ", " + value;
    }
    req->body = std::move(msg.body());
    req->remote_address = remote_;
    req->disconnected = disconnect_->flag;
    BeginInFlight();
    std::string allow;
    record_active_ = true;
    record_.method = req->method;
    const Handler* handler = server_->router.Match(head_request_ ? "GET" : req->method, req->target,
                                                   &req->params, &allow, &record_.route);
    if (handler == nullptr) {
      record_.route = kUnmatchedRoute;
      if (allow.empty()) return WriteError(404, "no route for " + req->target, "not_found_error");
      HttpResponse r = HttpResponse::Error(405, "method " + req->method + " not allowed",
                                           "invalid_request_error");
      r.headers["Allow"] = allow;
      return WriteResponse(r, false);
    }
    state_ = State::kHandling;
    StartDisconnectWatch();
    server_->pool.Post([self = shared_from_this(), req, handler] {
      HttpResponse response;
      try {
        response = (*handler)(*req);
      } catch (const std::exception& e) {
        response =
            HttpResponse::Error(500, std::string("handler failed: ") + e.what(), "server_error");
      } catch (...) {
        response = HttpResponse::Error(500, "handler failed", "server_error");
      }
      asio::post(self->exec_, [self, response = std::move(response)]() mutable {
        self->OnHandled(std::move(response));
      });
    });
  }

  // Watches the socket while a handler runs or a stream is open: readable with nothing to read
  // means the client closed (or reset) the connection.
  void StartDisconnectWatch() {
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

  void OnHandled(HttpResponse response) {
    if (state_ != State::kHandling) return;
    ErrorCodeT ec;
    socket_.cancel(ec);  // the disconnect watch (the only pending operation)
    if (response.sse) return StartStream(std::move(response));
    WriteResponse(response, false);
  }

  // A request refused before routing (limits, malformed): answered and reported with `reason`.
  void Refuse(int status, const std::string& message, std::string_view type, const char* reason) {
    record_active_ = true;
    record_.route = kUnmatchedRoute;
    record_.rejected_reason = reason;
    // The start line is parsed first: the method is known unless the refusal came before it.
    if (parser_) record_.method = std::string(parser_->get().method_string());
    WriteError(status, message, type);
  }

  // Reports the current request once (when it got an answer); see ServerOptions::on_request.
  void FinishRecord() {
    if (!record_active_) return;
    record_active_ = false;
    if (record_.status == 0) return;  // closed before any answer
    record_.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - record_start_).count();
    server_->Report(record_);
  }

  void WriteError(int status, const std::string& message, std::string_view type) {
    BeginInFlight();
    WriteResponse(HttpResponse::Error(status, message, type), true);
  }

  void WriteResponse(const HttpResponse& r, bool close_after) {
    state_ = State::kWriting;
    record_.status = r.status;
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(r.status));
    for (const auto& [name, value] : r.headers) {
      if (name.empty() || HasCrLf(name) || HasCrLf(value)) continue;  // no header injection
      res->insert(name, value);
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

  void OnWritten(ErrorCodeT ec) {
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
  void LingerClose() {
    state_ = State::kWriting;  // no new request is read
    ErrorCodeT ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    ArmDeadline(std::chrono::milliseconds(1000));
    linger_bytes_ = 0;
    LingerRead();
  }
  void LingerRead() {
    linger_buf_.resize(16384);
    socket_.async_read_some(asio::buffer(linger_buf_),
                            [self = shared_from_this()](ErrorCodeT ec, size_t n) {
                              self->linger_bytes_ += n;
                              if (ec || self->linger_bytes_ > (1u << 20)) return self->Close();
                              self->LingerRead();
                            });
  }

  void StartStream(HttpResponse response) {
    state_ = State::kStreaming;
    record_.status = response.status;
    keep_alive_ = false;
    std::string head = "HTTP/1.1 " + std::to_string(response.status) + " " +
                       ReasonPhrase(response.status) + "\r\n";
    head +=
        "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n"
        "X-Accel-Buffering: no\r\n";
    for (const auto& [name, value] : response.headers) {
      if (name.empty() || HasCrLf(name) || HasCrLf(value)) continue;
      std::string lower;
      for (char c : name) lower += LowerAscii(c);
      if (lower == "content-type" || lower == "cache-control" || lower == "connection" ||
          lower == "content-length" || lower == "transfer-encoding") {  // set by the stream
        continue;
      }
      head += name + ": " + value + "\r\n";
    }
    head += "\r\n";
    // The head is not an event: it does not count against max_sse_queue_bytes, so the first
    // events see the whole limit whether or not the head has been written yet.
    sse_uncounted_ = head.size();
    sse_queue_.push_back(std::move(head));
    SseWriteNext();
    StartDisconnectWatch();
    ArmHeartbeat();
    auto channel = std::make_shared<SseWriter::Channel>();
    SetChannel(*channel);
    server_->pool.Post([start = std::move(response.sse), channel] {
      try {
        start(std::make_shared<SseWriter>(channel));
      } catch (...) {
        // The writer is destroyed with the exception: the stream closes.
      }
    });
  }

  void SetChannel(SseWriter::Channel& channel);

  void ArmHeartbeat() {
    heartbeat_.expires_after(limits().sse_heartbeat);
    heartbeat_.async_wait([self = shared_from_this()](ErrorCodeT ec) {
      if (ec || self->state_ != State::kStreaming) return;
      if (!self->sse_writing_ && self->sse_queue_.empty() && !self->sse_close_requested_) {
        std::string ping = ": ping\n\n";
        self->sse_bytes_.fetch_add(ping.size());
        self->sse_queue_.push_back(std::move(ping));
        self->SseWriteNext();
      }
      self->ArmHeartbeat();
    });
  }

  // Writes everything queued as one batch; one write at a time.
  void SseWriteNext() {
    if (state_ != State::kStreaming || sse_writing_) return;
    if (sse_queue_.empty()) {
      if (sse_close_requested_) Close();
      return;
    }
    sse_writing_ = true;
    sse_batch_.clear();
    for (auto& s : sse_queue_) sse_batch_ += s;
    sse_queue_.clear();
    sse_batch_counted_ = sse_batch_.size() - sse_uncounted_;
    sse_uncounted_ = 0;
    ArmDeadline(limits().write_timeout);
    asio::async_write(socket_, asio::buffer(sse_batch_),
                      [self = shared_from_this()](ErrorCodeT ec, size_t) {
                        self->sse_writing_ = false;
                        self->sse_bytes_.fetch_sub(self->sse_batch_counted_);
                        if (self->state_ != State::kStreaming) return;
                        self->CancelDeadline();
                        if (ec) return self->Close();
                        self->SseWriteNext();
                      });
  }

  HttpServer::Impl* server_;
  asio::any_io_executor exec_;
  tcp::socket socket_;
  asio::steady_timer deadline_;
  asio::steady_timer heartbeat_;
  std::shared_ptr<DisconnectState> disconnect_;
  std::string remote_;
  State state_ = State::kIdle;
  uint64_t deadline_gen_ = 0;
  bool timed_out_ = false;
  bool in_flight_ = false;
  bool keep_alive_ = false;
  bool head_request_ = false;  // the request being answered is a HEAD
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::vector<char> linger_buf_;
  size_t linger_bytes_ = 0;
  // The request being answered; reported once by FinishRecord.
  RequestRecord record_;
  bool record_active_ = false;
  std::chrono::steady_clock::time_point record_start_;
  // SSE state (strand only, except the atomics).
  std::deque<std::string> sse_queue_;
  std::string sse_batch_;
  size_t sse_batch_counted_ = 0;  // bytes of sse_batch_ counted in sse_bytes_
  size_t sse_uncounted_ = 0;      // bytes at the front of sse_queue_ not counted (the head)
  bool sse_writing_ = false;
  bool sse_close_requested_ = false;
  std::atomic<bool> sse_closed_{false};
  std::atomic<size_t> sse_bytes_{0};
};

class SseWriter::Channel {
 public:
  std::weak_ptr<Session> session;
  std::shared_ptr<DisconnectState> disconnect;
};

void Session::SetChannel(SseWriter::Channel& channel) {
  channel.session = weak_from_this();
  channel.disconnect = disconnect_;
}

SseWriter::SseWriter(std::shared_ptr<Channel> channel) : channel_(std::move(channel)) {}
SseWriter::~SseWriter() { Close(); }

bool SseWriter::Send(std::string_view event, std::string_view data) {
  auto s = channel_->session.lock();
  return s != nullptr && s->SseEnqueue(internal::FormatSseEvent(event, data));
}

bool SseWriter::SendComment(std::string_view text) {
  auto s = channel_->session.lock();
  if (s == nullptr) return false;
  std::string line = ": ";
  for (char c : text) line += (c == '\r' || c == '\n') ? ' ' : c;
  return s->SseEnqueue(line + "\n\n");
}

void SseWriter::Close() {
  if (auto s = channel_->session.lock()) s->SseCloseRequest();
}

bool SseWriter::disconnected() const { return channel_->disconnect->flag->load(); }

std::shared_ptr<const std::atomic<bool>> SseWriter::disconnected_flag() const {
  return channel_->disconnect->flag;
}

void SseWriter::OnDisconnect(std::function<void()> callback) {
  channel_->disconnect->Add(std::move(callback));
}

void HttpServer::Impl::DoAccept() {
  acceptor->async_accept(
      asio::make_strand(ioc),
      asio::bind_executor(*accept_strand, [this](ErrorCodeT ec, tcp::socket socket) {
        if (!acceptor->is_open() || ec == asio::error::operation_aborted) return;
        if (ec) {  // e.g. out of file descriptors: retry shortly instead of spinning
          accept_retry->expires_after(std::chrono::milliseconds(50));
          accept_retry->async_wait(asio::bind_executor(*accept_strand, [this](ErrorCodeT e) {
            if (!e && acceptor->is_open()) DoAccept();
          }));
          return;
        }
        OnAccept(std::move(socket));
        DoAccept();
      }));
}

// Answers 503 to a connection over the limit, then closes it after a short linger.
class Rejecter : public std::enable_shared_from_this<Rejecter> {
 public:
  Rejecter(HttpServer::Impl* server, tcp::socket socket)
      : server_(server),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        start_(std::chrono::steady_clock::now()) {}
  void Run() {
    std::string body =
        ErrorJson(503, "server at its connection limit, retry later", "server_overloaded");
    text_ =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    timer_.expires_after(std::chrono::milliseconds(1000));
    timer_.async_wait([self = shared_from_this()](ErrorCodeT ec) {
      if (ec) return;
      ErrorCodeT ignored;
      self->socket_.close(ignored);
    });
    asio::async_write(socket_, asio::buffer(text_),
                      [self = shared_from_this()](ErrorCodeT ec, size_t) {
                        self->Report();
                        if (ec) return self->Finish();
                        ErrorCodeT ignored;
                        self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                        self->Drain();
                      });
  }

 private:
  void Drain() {
    socket_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](ErrorCodeT ec, size_t) {
                              if (ec) return self->Finish();
                              self->Drain();
                            });
  }
  void Finish() {
    timer_.cancel();
    ErrorCodeT ignored;
    socket_.close(ignored);
  }
  void Report() {
    RequestRecord record;
    record.route = kUnmatchedRoute;
    record.status = 503;
    record.rejected_reason = "too_many_connections";
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    server_->Report(record);
  }

  HttpServer::Impl* server_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::chrono::steady_clock::time_point start_;
  std::string text_;
  char scratch_[4096];
};

void HttpServer::Impl::OnAccept(tcp::socket socket) {
  if (draining.load()) return;  // socket closes as it goes out of scope
  if (connections.load() >= options.limits.max_connections) {
    std::make_shared<Rejecter>(this, std::move(socket))->Run();
    return;
  }
  connections.fetch_add(1);
  // No Nagle: a response's or an event stream's small writes go out at once instead of waiting
  // for the client's delayed ACK of the previous one (up to 40 ms on Linux).
  ErrorCodeT ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto session = std::make_shared<Session>(this, std::move(socket));
  Register(session);
  asio::dispatch(session->executor(), [session] { session->Start(); });
}

void HttpServer::Impl::Register(const std::shared_ptr<Session>& s) {
  std::lock_guard lock(mu);
  sessions[s.get()] = s;
}

void HttpServer::Impl::Unregister(Session* s) {
  std::lock_guard lock(mu);
  sessions.erase(s);
  cv.notify_all();
}

void HttpServer::Impl::ForEachSession(
    const std::function<void(const std::shared_ptr<Session>&)>& fn) {
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(mu);
    for (auto& [ptr, weak] : sessions) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) fn(s);
}

HttpServer::HttpServer() : impl_(std::make_unique<Impl>()) {}

HttpServer::~HttpServer() { Stop(std::chrono::milliseconds(0)); }

void HttpServer::Route(std::string method, std::string path_pattern, Handler handler) {
  MINERU_CHECK(!impl_->running.load(), "Route after Start");
  impl_->router.Add(std::move(method), path_pattern, std::move(handler));
}

Status HttpServer::Start(const ServerOptions& options) {
  Impl& d = *impl_;
  if (d.running.load()) return Fail(ErrorCode::kInvalidArgument, "server already started");
  if (d.draining.load()) return Fail(ErrorCode::kInvalidArgument, "server was stopped");
  if (options.port < 0 || options.port > 65535) {
    return Fail(ErrorCode::kInvalidArgument, "port {} out of range", options.port);
  }
  d.options = options;
  ErrorCodeT ec;
  tcp::resolver resolver(d.ioc);
  auto endpoints = resolver.resolve(options.host, std::to_string(options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "cannot resolve listen address '{}': {}", options.host,
                ec.message());
  }
  tcp::endpoint endpoint = endpoints.begin()->endpoint();
  d.accept_strand.emplace(asio::make_strand(d.ioc));
  d.acceptor.emplace(*d.accept_strand);
  d.accept_retry.emplace(*d.accept_strand);
  d.acceptor->open(endpoint.protocol(), ec);
  if (!ec) d.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) d.acceptor->bind(endpoint, ec);
  if (!ec) d.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    ErrorCodeT ignored;
    d.acceptor->close(ignored);
    return Fail(ErrorCode::kUnavailable, "cannot listen on {}:{}: {}", options.host, options.port,
                ec.message());
  }
  d.port.store(d.acceptor->local_endpoint().port());
  d.work.emplace(d.ioc.get_executor());
  d.pool.Start(options.handler_threads);
  d.running.store(true);
  d.ready.store(true);
  asio::post(*d.accept_strand, [&d] { d.DoAccept(); });
  for (int i = 0; i < std::max(1, options.io_threads); ++i) {
    d.io_threads.emplace_back([&d] { d.ioc.run(); });
  }
  return OkStatus();
}

int HttpServer::port() const { return impl_->port.load(); }
bool HttpServer::ready() const { return impl_->ready.load(); }
size_t HttpServer::open_connections() const { return impl_->connections.load(); }
size_t HttpServer::in_flight_requests() const { return impl_->in_flight.load(); }

void HttpServer::BeginDrain() {
  Impl& d = *impl_;
  d.ready.store(false);
  if (!d.running.load() || d.draining.exchange(true)) return;
  // Closing the acceptor is done on its strand; wait so that connects after BeginDrain returns
  // are refused (unless called on that strand, where it happens at once).
  auto close = [&d] {
    ErrorCodeT ignored;
    d.acceptor->close(ignored);
    d.accept_retry->cancel();
  };
  if (d.accept_strand->running_in_this_thread()) {
    close();
  } else {
    std::promise<void> done;
    asio::post(*d.accept_strand, [&] {
      close();
      done.set_value();
    });
    done.get_future().wait();
  }
  d.ForEachSession(
      [](const std::shared_ptr<Session>& s) { asio::post(s->executor(), [s] { s->OnDrain(); }); });
}

void HttpServer::Stop(std::chrono::milliseconds drain_timeout) {
  Impl& d = *impl_;
  if (!d.running.load()) return;
  BeginDrain();
  {
    std::unique_lock lock(d.mu);
    d.cv.wait_for(lock, drain_timeout, [&] { return d.in_flight.load() == 0; });
  }
  d.ForEachSession(
      [](const std::shared_ptr<Session>& s) { asio::post(s->executor(), [s] { s->Close(); }); });
  {
    // Closing is quick; bounded anyway so a stuck strand cannot hang Stop.
    std::unique_lock lock(d.mu);
    d.cv.wait_for(lock, std::chrono::seconds(2), [&] { return d.sessions.empty(); });
  }
  d.work.reset();
  d.ioc.stop();
  for (auto& t : d.io_threads) t.join();
  d.io_threads.clear();
  // A session whose Close never ran (the I/O threads stopped first) still tells its SSE writers
  // and handlers that the client is gone.
  d.ForEachSession([](const std::shared_ptr<Session>& s) { s->disconnect()->Fire(); });
  d.pool.Shutdown();
  d.running.store(false);
}

}  // namespace mineru::service
