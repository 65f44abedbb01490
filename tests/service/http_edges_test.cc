// SPDX-License-Identifier: Apache-2.0
// The edges of HTTP/1.1 that issue 14 found wrong, against a raw POSIX-socket client:
// Transfer-Encoding other than exactly "chunked" (RFC 9112 6.1: refused and closed, so a body
// the server cannot frame is never read as the next request), 404 and 405 that keep a
// keep-alive connection usable (pipelined requests behind them answered, their bodies drained
// unstored), and "Expect: 100-continue" (100 before the body; a refusal without reading it).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "../support/http_client.h"
#include "service/http_server.h"

namespace mineru::service {
namespace {

using testing_support::Client;
using testing_support::GetRequest;
using testing_support::PostRequest;

class HttpEdgesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.port = 0;
    server_.Route("GET", "/health",
                  [](const HttpRequest&) { return HttpResponse::Json(200, "{\"ok\":true}"); });
    server_.Route("GET", "/v1/jobs/{id}", [](const HttpRequest& r) {
      return HttpResponse::Text(200, "job " + r.Param("id"));
    });
    server_.Route("POST", "/echo", [this](const HttpRequest& r) {
      ++echoes_;
      return HttpResponse::Text(200, "echo " + r.body);
    });
  }
  void StartServer() {
    auto status = server_.Start(options_);
    ASSERT_TRUE(status) << status.error().ToString();
  }
  void TearDown() override { server_.Stop(std::chrono::milliseconds(2000)); }

  ServerOptions options_;
  HttpServer server_;
  std::atomic<int> echoes_{0};
};

// Issue 14: "Transfer-Encoding: gzip" (or xchunked, identity, "chunked, gzip") without
// Content-Length was read as no body, and the body was then served as the next request (a
// smuggling primitive). Each is now refused (400, or 501 when chunked comes last after an
// unknown coding) and the connection closed: the smuggled request is never answered.
TEST_F(HttpEdgesTest, TransferEncodingOtherThanChunkedIsRefusedAndClosed) {
  StartServer();
  const std::string smuggled = GetRequest("/v1/jobs/smuggled");
  for (const auto& [coding, status] :
       std::vector<std::pair<std::string, int>>{{"gzip", 400},
                                                {"xchunked", 400},
                                                {"identity", 400},
                                                {"chunked, gzip", 400},
                                                {"gzip, chunked", 501},
                                                {"chunked, chunked", 501}}) {
    Client c(server_.port());
    ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: " + coding +
                       "\r\n\r\n" + smuggled));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r) << coding;
    EXPECT_EQ(r->status, status) << coding << ": " << r->body;
    EXPECT_EQ(r->Header("connection"), "close") << coding;
    EXPECT_TRUE(c.ReadsEof()) << coding;
    EXPECT_EQ(c.buffer().find("job smuggled"), std::string::npos) << coding << ": " << c.buffer();
  }
  // Two fields whose join is not "chunked" alone are refused too.
  Client c(server_.port());
  ASSERT_TRUE(
      c.Send("POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n"
             "Transfer-Encoding: gzip\r\n\r\n" +
             smuggled));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(c.ReadsEof());
  EXPECT_EQ(echoes_.load(), 0);
  // "chunked" alone (any case) still works, on a connection that stays open.
  Client ok(server_.port());
  ASSERT_TRUE(
      ok.Send("POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: Chunked\r\n\r\n"
              "5\r\nhello\r\n0\r\n\r\n" +
              GetRequest("/health")));
  auto echoed = ok.ReadResponse();
  ASSERT_TRUE(echoed);
  EXPECT_EQ(echoed->body, "echo hello");
  auto health = ok.ReadResponse();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// Issue 14: a 404 or 405 closed the connection and lost the requests pipelined behind it.
// Now their bodies are drained (not stored) and the connection keeps serving.
TEST_F(HttpEdgesTest, NotFoundAndMethodNotAllowedKeepTheConnection) {
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send(GetRequest("/nope") + PostRequest("/v1/jobs/1", std::string(5000, 'x')) +
                     PostRequest("/missing", "chunk me") +
                     "POST /elsewhere HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n"
                     "\r\n4\r\nabcd\r\n0\r\n\r\n" +
                     GetRequest("/v1/jobs/2")));
  auto not_found = c.ReadResponse();
  ASSERT_TRUE(not_found);
  EXPECT_EQ(not_found->status, 404);
  EXPECT_NE(not_found->Header("connection"), "close");
  auto not_allowed = c.ReadResponse();
  ASSERT_TRUE(not_allowed);
  EXPECT_EQ(not_allowed->status, 405);
  EXPECT_EQ(not_allowed->Header("allow"), "GET");
  auto missing = c.ReadResponse();
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto chunked = c.ReadResponse();
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 404);
  auto job = c.ReadResponse();
  ASSERT_TRUE(job) << "the request pipelined behind the 404s and the 405 was lost";
  EXPECT_EQ(job->status, 200);
  EXPECT_EQ(job->body, "job 2");
  EXPECT_EQ(server_.body_bytes_in_flight(), 0u);
}

// Issue 14: "Expect: 100-continue" was never answered (a client that waits for it stalled).
// Now 100 comes before the body is read; a request refused without its body gets the final
// answer at once, and the connection closes (the client may or may not send the body).
TEST_F(HttpEdgesTest, ExpectContinueIsAnswered) {
  options_.limits.max_body_bytes = 100;
  StartServer();
  {
    Client c(server_.port());
    ASSERT_TRUE(
        c.Send("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n"
               "Expect: 100-continue\r\n\r\n"));
    ASSERT_TRUE(c.ReadUntil("\r\n\r\n"));
    EXPECT_EQ(c.buffer(), "HTTP/1.1 100 Continue\r\n\r\n");
    c.buffer().clear();
    ASSERT_TRUE(c.Send("hello"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "echo hello");
  }
  {  // no route: 404 without waiting for the body
    Client c(server_.port());
    ASSERT_TRUE(
        c.Send("POST /nope HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n"
               "Expect: 100-continue\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    EXPECT_EQ(r->Header("connection"), "close");
  }
  {  // too large: 413 without waiting for the body
    Client c(server_.port());
    ASSERT_TRUE(
        c.Send("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 101\r\n"
               "Expect: 100-continue\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
  }
  EXPECT_EQ(echoes_.load(), 1);
}

}  // namespace
}  // namespace mineru::service
