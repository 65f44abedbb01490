// SPDX-License-Identifier: Apache-2.0
// HttpServer on Boost.Beast 1.74 / Asio: accepting connections within max_connections and
// max_connections_per_client, starting, draining and stopping (http_session.h describes the
// files of the server and a connection's life).
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <future>
#include <utility>

#include "service/api_error.h"
#include "service/http_session.h"

namespace mineru::service {

using internal::kUnmatchedRoute;

namespace {

// What Stop adds to its drain timeout at most, twice: for the last closes to run, and for
// handlers that were told to stop to return.
constexpr std::chrono::milliseconds kCloseGrace{100};

}  // namespace

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

// Answers a connection over a connection cap (503 for max_connections, 429 for
// max_connections_per_client, both with Retry-After), then closes it after a short linger.
class Rejecter : public std::enable_shared_from_this<Rejecter> {
 public:
  Rejecter(HttpServer::Impl* server, tcp::socket socket, int status, const char* reason)
      : server_(server),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        start_(std::chrono::steady_clock::now()),
        status_(status),
        reason_(reason) {}
  void Run() {
    const bool per_client = status_ == 429;
    std::string body =
        per_client ? ApiErrorBody(
                         "too many connections from your address (--max-connections-per-client), "
                         "retry later",
                         "rate_limit_error", "too_many_client_connections")
                   : internal::ErrorJson(503, "server at its connection limit, retry later",
                                         "server_overloaded");
    text_ = "HTTP/1.1 " +
            std::string(per_client ? "429 Too Many Requests" : "503 Service Unavailable") +
            "\r\nContent-Type: application/json\r\nRetry-After: " +
            std::to_string(kRetryAfter.count()) +
            "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
            body;
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
    record.status = status_;
    record.rejected_reason = reason_;
    record.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    server_->Report(record);
  }

  HttpServer::Impl* server_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::chrono::steady_clock::time_point start_;
  int status_;
  const char* reason_;
  std::string text_;
  char scratch_[4096];
};

void HttpServer::Impl::OnAccept(tcp::socket socket) {
  if (draining.load()) return;  // socket closes as it goes out of scope
  if (connections.load() >= options.limits.max_connections) {
    std::make_shared<Rejecter>(this, std::move(socket), 503, "too_many_connections")->Run();
    return;
  }
  ErrorCodeT ec;
  const tcp::endpoint endpoint = socket.remote_endpoint(ec);
  std::string peer = ec ? std::string() : endpoint.address().to_string();
  if (!peers.TryAdd(peer, options.limits.max_connections_per_client)) {
    std::make_shared<Rejecter>(this, std::move(socket), 429, "too_many_client_connections")->Run();
    return;
  }
  connections.fetch_add(1);
  // No Nagle: a response's or an event stream's small writes go out at once instead of waiting
  // for the client's delayed ACK of the previous one (up to 40 ms on Linux).
  ErrorCodeT ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto session = std::make_shared<Session>(this, std::move(socket), std::move(peer));
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

HttpServer::~HttpServer() {
  if (!Stop(std::chrono::milliseconds(0))) {
    // A handler thread still runs on this state (see Stop): it is never freed, and kept
    // reachable so that a leak checker sees it as deliberate.
    static std::mutex mu;
    static auto* kept = new std::vector<std::unique_ptr<Impl>>();
    std::lock_guard lock(mu);
    kept->push_back(std::move(impl_));
  }
}

void HttpServer::Route(std::string method, std::string path_pattern, Handler handler,
                       RouteTraits traits) {
  MINERU_CHECK(!impl_->running.load(), "Route after Start");
  impl_->router.Add(std::move(method), path_pattern, std::move(handler), traits);
}

void HttpServer::Post(std::function<void()> task) {
  impl_->pool.Post([task = std::move(task)] {
    try {
      task();
    } catch (...) {
      // A continuation's failure must not take a handler thread down.
    }
  });
}

Status HttpServer::Start(const ServerOptions& options) {
  Impl& d = *impl_;
  if (d.running.load()) return Fail(ErrorCode::kInvalidArgument, "server already started");
  if (d.draining.load()) return Fail(ErrorCode::kInvalidArgument, "server was stopped");
  if (options.port < 0 || options.port > 65535) {
    return Fail(ErrorCode::kInvalidArgument, "port {} out of range", options.port);
  }
  d.options = options;
  d.origin_policy = internal::OriginPolicy(options.host, options.allowed_origins);
  d.body_budget.SetCapacity(options.limits.max_body_bytes_in_flight);
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
size_t HttpServer::body_bytes_in_flight() const { return impl_->body_budget.used(); }

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

bool HttpServer::Stop(std::chrono::milliseconds drain_timeout) {
  Impl& d = *impl_;
  if (!d.running.load()) return !d.leaked;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + drain_timeout;
  // The last quarter of the drain (at most 2 s) answers what did not finish and closes.
  const Clock::time_point wind_down =
      deadline - std::min<Clock::duration>(drain_timeout / 4, std::chrono::seconds(2));
  BeginDrain();
  {
    std::unique_lock lock(d.mu);
    d.cv.wait_until(lock, wind_down, [&] { return d.in_flight.load() == 0; });
  }
  d.aborting.store(true);
  d.ForEachSession(
      [](const std::shared_ptr<Session>& s) { asio::post(s->executor(), [s] { s->Abort(); }); });
  {
    std::unique_lock lock(d.mu);
    d.cv.wait_until(lock, deadline, [&] { return d.sessions.empty(); });
  }
  d.ForEachSession(
      [](const std::shared_ptr<Session>& s) { asio::post(s->executor(), [s] { s->Close(); }); });
  {
    // Closing is quick; bounded anyway so a stuck strand cannot hang Stop.
    std::unique_lock lock(d.mu);
    d.cv.wait_for(lock, kCloseGrace, [&] { return d.sessions.empty(); });
  }
  d.work.reset();
  d.ioc.stop();
  for (auto& t : d.io_threads) t.join();
  d.io_threads.clear();
  // A session whose Close never ran (the I/O threads stopped first) still tells its SSE writers
  // and handlers that the client is gone.
  d.ForEachSession([](const std::shared_ptr<Session>& s) { s->disconnect()->Fire(); });
  const bool joined = d.pool.Shutdown(std::max(deadline, Clock::now() + kCloseGrace));
  d.running.store(false);
  d.leaked = !joined;
  return joined;
}

}  // namespace mineru::service
