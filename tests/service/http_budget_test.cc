// SPDX-License-Identifier: Apache-2.0
// What one request or one client may hold of the server, against a raw POSIX-socket client:
// the process-wide budget of request-body bytes in flight (max_body_bytes_in_flight) at its
// boundary, for Content-Length and chunked bodies, and the cap on connections per peer address
// (max_connections_per_client), with a second loopback address standing for another client.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "handler_gate.h"
#include "service/http_server.h"

namespace mineru::service {
namespace {

using testing_support::Client;
using testing_support::GetRequest;
using testing_support::PostRequest;
using Response = testing_support::HttpReply;

using testing::Gate;
using testing::WaitUntil;

class HttpBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.port = 0;
    options_.handler_threads = 4;
    server_.Route("GET", "/health",
                  [](const HttpRequest&) { return HttpResponse::Json(200, "{\"ok\":true}"); });
    server_.Route("POST", "/hold", [this](const HttpRequest& r) {
      gate_.Wait();
      return HttpResponse::Text(200, std::to_string(r.body.size()));
    });
    server_.Route("POST", "/echo", [](const HttpRequest& r) {
      return HttpResponse::Text(200, std::to_string(r.body.size()));
    });
  }
  void StartServer() {
    auto status = server_.Start(options_);
    ASSERT_TRUE(status) << status.error().ToString();
  }
  void TearDown() override {
    gate_.Open();
    server_.Stop(std::chrono::milliseconds(2000));
  }

  ServerOptions options_;
  HttpServer server_;
  Gate gate_;
};

// Issue 14: nothing bounded the request bodies held across all connections (1,024 connections
// of 256 MiB each). With a budget of 1000 bytes and 600 held by a running handler, a body of
// exactly the remaining 400 is accepted and one of 401 is refused 503 with Retry-After, before
// it is read; a body larger than the whole budget can never fit: 413 naming the limit.
TEST_F(HttpBudgetTest, BodyBytesInFlightExactlyAcceptedOneMoreIs503) {
  options_.limits.max_body_bytes = 2000;
  options_.limits.max_body_bytes_in_flight = 1000;
  StartServer();
  Client holder(server_.port());
  ASSERT_TRUE(holder.Send(PostRequest("/hold", std::string(600, 'a'))));
  ASSERT_TRUE(gate_.WaitWaiting(1));
  EXPECT_EQ(server_.body_bytes_in_flight(), 600u);

  Client over(server_.port());
  ASSERT_TRUE(over.Send(PostRequest("/echo", std::string(401, 'b'))));
  auto refused = over.ReadResponse();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_EQ(refused->Header("retry-after"), "1");
  EXPECT_NE(refused->body.find("--max-body-bytes-in-flight"), std::string::npos) << refused->body;
  EXPECT_EQ(refused->Header("connection"), "close");

  Client exact(server_.port());
  ASSERT_TRUE(exact.Send(PostRequest("/hold", std::string(400, 'c'))));
  ASSERT_TRUE(gate_.WaitWaiting(2));
  EXPECT_EQ(server_.body_bytes_in_flight(), 1000u);

  // A chunked body is counted as it arrives: refused once it no longer fits.
  Client chunked(server_.port());
  ASSERT_TRUE(
      chunked.Send("POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "5\r\nhello\r\n0\r\n\r\n"));
  auto chunked_refused = chunked.ReadResponse();
  ASSERT_TRUE(chunked_refused);
  EXPECT_EQ(chunked_refused->status, 503);

  // Bodies that can never fit are permanent refusals, never 503.
  Client huge(server_.port());
  ASSERT_TRUE(huge.Send(PostRequest("/echo", std::string(1001, 'd'))));
  auto too_large = huge.ReadResponse();
  ASSERT_TRUE(too_large);
  EXPECT_EQ(too_large->status, 413);
  EXPECT_NE(too_large->body.find("--max-body-bytes-in-flight"), std::string::npos);
  EXPECT_NE(too_large->body.find(R"("code":"max_body_bytes_in_flight")"), std::string::npos)
      << too_large->body;
  EXPECT_EQ(too_large->Header("retry-after"), "");
  // Over the per-request limit stays the per-request 413.
  auto over_request = testing_support::Exchange(server_.port(), "POST", "/echo",
                                                std::string(2001, 'e'), "text/plain");
  ASSERT_TRUE(over_request);
  EXPECT_EQ(over_request->status, 413);
  EXPECT_NE(over_request->body.find("--max-body-bytes"), std::string::npos);

  // Requests without a body are not affected, and the budget comes back when handlers return.
  auto health = testing_support::Exchange(server_.port(), "GET", "/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  gate_.Open();
  auto first = holder.ReadResponse();
  auto second = exact.ReadResponse();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->body, "600");
  EXPECT_EQ(second->body, "400");
  ASSERT_TRUE(WaitUntil([&] { return server_.body_bytes_in_flight() == 0; }));
  auto again = testing_support::Exchange(server_.port(), "POST", "/echo", std::string(1000, 'f'),
                                         "text/plain");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(again->body, "1000");
  // A chunked body that outgrows the whole budget is the permanent 413 too (counted from an
  // empty budget, so the refusal is decided by its own size alone).
  ASSERT_TRUE(WaitUntil([&] { return server_.body_bytes_in_flight() == 0; }));
  Client huge_chunked(server_.port());
  ASSERT_TRUE(huge_chunked.Send(
      "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n" +
      std::string(1001, 'd') + "\r\n0\r\n\r\n"));
  auto chunked_too_large = huge_chunked.ReadResponse();
  ASSERT_TRUE(chunked_too_large);
  EXPECT_EQ(chunked_too_large->status, 413) << chunked_too_large->body;
  EXPECT_NE(chunked_too_large->body.find("--max-body-bytes-in-flight"), std::string::npos);
}

// Issue 14: a body for a route that does not exist, or for a method the route does not allow,
// was read whole. A 404's or 405's body is drained without being stored: it takes nothing from
// the budget, so it is answered 404 or 405 (not 503) even while the budget is full, and the
// connection goes on.
TEST_F(HttpBudgetTest, BodyOfAnUnknownRouteIsNotBuffered) {
  options_.limits.max_body_bytes_in_flight = 1000;
  StartServer();
  Client holder(server_.port());
  ASSERT_TRUE(holder.Send(PostRequest("/hold", std::string(1000, 'a'))));
  ASSERT_TRUE(gate_.WaitWaiting(1));
  Client c(server_.port());
  ASSERT_TRUE(c.Send(PostRequest("/nope", std::string(800, 'x')) +
                     PostRequest("/health", std::string(900, 'y')) + GetRequest("/health")));
  auto not_found = c.ReadResponse();
  ASSERT_TRUE(not_found);
  EXPECT_EQ(not_found->status, 404);
  auto not_allowed = c.ReadResponse();
  ASSERT_TRUE(not_allowed);
  EXPECT_EQ(not_allowed->status, 405) << not_allowed->body;
  EXPECT_EQ(not_allowed->Header("allow"), "GET");
  auto health = c.ReadResponse();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(server_.body_bytes_in_flight(), 1000u);
}

// A TCP connection to port from a chosen loopback address (127.0.0.2 is another client).
class PeerClient {
 public:
  PeerClient(const char* from, int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{60, 0};  // a hung server fails the test instead of hanging it
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, from, &local.sin_addr);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = bound_ && connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~PeerClient() { close(fd_); }
  PeerClient(const PeerClient&) = delete;
  PeerClient& operator=(const PeerClient&) = delete;

  bool bound() const { return bound_; }
  // Sends a request and reads until the peer closes (or the reply's Content-Length is in).
  std::string Exchange(const std::string& request) {
    if (!connected_ || send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
                           static_cast<ssize_t>(request.size())) {
      return "";
    }
    std::string reply;
    char buf[4096];
    while (true) {
      const size_t end = reply.find("\r\n\r\n");
      if (end != std::string::npos) {
        const size_t cl = reply.find("Content-Length: ");
        if (cl != std::string::npos && cl < end &&
            reply.size() >= end + 4 + std::stoul(reply.substr(cl + 16))) {
          return reply;
        }
      }
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return reply;
      reply.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
  bool connected_ = false;
};

// Issue 14: one client could hold all 1,024 connections. With a cap of 2 per peer address, a
// third connection from 127.0.0.1 is refused 429 with Retry-After while another address is
// still served, and a slot comes back when one of the two closes.
TEST_F(HttpBudgetTest, ConnectionsPerClientExactlyAcceptedOneMoreRefused) {
  options_.limits.max_connections_per_client = 2;
  StartServer();
  Client a(server_.port()), b(server_.port());
  ASSERT_TRUE(WaitUntil([&] { return server_.open_connections() == 2; }));
  auto refused = testing_support::Exchange(server_.port(), "GET", "/health");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429) << refused->body;
  EXPECT_EQ(refused->Header("retry-after"), "1");
  EXPECT_NE(refused->body.find("--max-connections-per-client"), std::string::npos);
  // The two held connections are still served.
  ASSERT_TRUE(a.Send(GetRequest("/health")));
  auto ra = a.ReadResponse();
  ASSERT_TRUE(ra);
  EXPECT_EQ(ra->status, 200);
  // Another client is served while this one is at its cap.
  PeerClient other("127.0.0.2", server_.port());
  if (other.bound()) {
    const std::string reply = other.Exchange(GetRequest("/health", "Connection: close\r\n"));
    EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  }
  b.Close();
  ASSERT_TRUE(WaitUntil([&] { return server_.open_connections() <= 1; }));
  auto served = testing_support::Exchange(server_.port(), "GET", "/health");
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);
}

}  // namespace
}  // namespace mineru::service
