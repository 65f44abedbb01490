// SPDX-License-Identifier: Apache-2.0
// HttpServer against a hand-written POSIX socket client: routing, each limit at its boundary,
// keep-alive, the connection cap, SSE streaming and disconnects, drain and concurrency, and a
// client too slow to read (write_timeout, max_sse_queue_bytes).
#include "service/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/http_client.h"
#include "../support/wait.h"

namespace mineru::service {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using testing_support::Client;
using testing_support::WaitUntil;
using Response = testing_support::HttpReply;

std::string Get(std::string_view path, std::string_view extra = "") {
  return testing_support::GetRequest(path, extra);
}
std::string Post(std::string_view path, std::string_view body, std::string_view extra = "") {
  return testing_support::PostRequest(path, body, extra);
}

std::optional<Response> RoundTrip(int port, const std::string& request) {
  Client c(port);
  if (!c.connected() || !c.Send(request)) return std::nullopt;
  return c.ReadResponse();
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.port = 0;
    options_.handler_threads = 4;
    server_.Route("GET", "/health",
                  [](const HttpRequest&) { return HttpResponse::Json(200, "{\"ok\":true}"); });
    server_.Route("GET", "/v1/jobs/{id}", [](const HttpRequest& r) {
      return HttpResponse::Text(200, "job " + r.Param("id"));
    });
    server_.Route("GET", "/v1/jobs/latest",
                  [](const HttpRequest&) { return HttpResponse::Text(200, "latest"); });
    server_.Route("DELETE", "/v1/jobs/{id}", [](const HttpRequest& r) {
      return HttpResponse::Text(200, "deleted " + r.Param("id"));
    });
    server_.Route("POST", "/echo", [](const HttpRequest& r) {
      HttpResponse res = HttpResponse::Text(200, r.body);
      res.headers["X-Query"] = r.query;
      res.headers["X-Token"] = r.Header("x-TOKEN");
      res.headers["X-Remote"] = r.remote_address;
      return res;
    });
    server_.Route("GET", "/throw",
                  [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
    server_.Route("GET", "/throw-path", [](const HttpRequest&) -> HttpResponse {
      throw std::runtime_error("filesystem error: cannot open /srv/mineru/work/7f3a/input.pdf");
    });
    server_.Route("GET", "/slow", [](const HttpRequest&) {
      std::this_thread::sleep_for(milliseconds(500));
      return HttpResponse::Text(200, "slow done");
    });
  }
  void StartServer() {
    auto status = server_.Start(options_);
    ASSERT_TRUE(status) << status.error().ToString();
    ASSERT_GT(server_.port(), 0);
  }
  void TearDown() override { server_.Stop(milliseconds(2000)); }

  ServerOptions options_;
  HttpServer server_;
};

TEST_F(HttpServerTest, RoutesExactPathsAndParams) {
  StartServer();
  auto r = RoundTrip(server_.port(), Get("/health"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"ok\":true}");
  EXPECT_EQ(r->headers["content-type"], "application/json");
  r = RoundTrip(server_.port(), Get("/v1/jobs/42?x=1"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "job 42");
  r = RoundTrip(server_.port(), Get("/v1/jobs/latest"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "latest");  // the literal route wins over {id}
  r = RoundTrip(server_.port(), "DELETE /v1/jobs/7 HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "deleted 7");
  r = RoundTrip(server_.port(), Post("/echo?a=b&c", "hello", "X-Token: secret\r\n"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello");
  EXPECT_EQ(r->headers["x-query"], "a=b&c");
  EXPECT_EQ(r->headers["x-token"], "secret");
  EXPECT_EQ(r->headers["x-remote"], "127.0.0.1");
}

TEST_F(HttpServerTest, UnknownRoute404AndWrongMethod405) {
  StartServer();
  auto r = RoundTrip(server_.port(), Get("/nope"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find("\"error\""), std::string::npos);
  EXPECT_NE(r->body.find("\"code\":404"), std::string::npos);
  EXPECT_NE(r->body.find("\"type\":\"not_found_error\""), std::string::npos);
  r = RoundTrip(server_.port(), Get("/v1/jobs/1/extra"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  r = RoundTrip(server_.port(), Post("/v1/jobs/1", ""));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->headers["allow"], "GET, DELETE");
  EXPECT_NE(r->body.find("\"code\":405"), std::string::npos);
}

TEST_F(HttpServerTest, HeadAnswersTheGetHeadWithoutTheBody) {
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send("HEAD /health HTTP/1.1\r\nHost: test\r\n\r\n"));
  ASSERT_TRUE(c.ReadUntil("\r\n\r\n"));
  const std::string head = c.buffer();
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Length: 11\r\n"), std::string::npos) << head;  // {"ok":true}
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");                        // and no body
  c.buffer().clear();
  // The connection is still in step: the next request's answer follows at once.
  ASSERT_TRUE(c.Send(Get("/health")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "{\"ok\":true}");
  // HEAD only where GET is routed (the answer, a head alone too, is read up to its blank line).
  Client other(server_.port());
  ASSERT_TRUE(other.Send("HEAD /echo HTTP/1.1\r\nHost: test\r\n\r\n"));
  ASSERT_TRUE(other.ReadUntil("\r\n\r\n"));
  EXPECT_EQ(other.buffer().rfind("HTTP/1.1 405", 0), 0u) << other.buffer();
}

TEST_F(HttpServerTest, HandlerExceptionIs500) {
  StartServer();
  auto r = RoundTrip(server_.port(), Get("/throw"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("boom"), std::string::npos);
}

// Issue 14: an exception's text went to the client as it was, and std::filesystem names the
// server's files in its messages. The 500 keeps the text but only the file's name.
TEST_F(HttpServerTest, HandlerExceptionTextNamesNoServerPath) {
  StartServer();
  auto r = RoundTrip(server_.port(), Get("/throw-path"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->body.find("/srv/mineru"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("cannot open input.pdf"), std::string::npos) << r->body;
}

TEST_F(HttpServerTest, BodyLimitExactlyAcceptedOneMoreIs413) {
  options_.limits.max_body_bytes = 1000;
  StartServer();
  auto r = RoundTrip(server_.port(), Post("/echo", std::string(1000, 'a')));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.size(), 1000u);
  r = RoundTrip(server_.port(), Post("/echo", std::string(1001, 'a')));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("\"code\":413"), std::string::npos);
  EXPECT_EQ(r->headers["connection"], "close");
  // Chunked bodies are counted as they arrive.
  std::string chunked =
      "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3e9\r\n" +
      std::string(1001, 'b') + "\r\n0\r\n\r\n";
  r = RoundTrip(server_.port(), chunked);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
}

TEST_F(HttpServerTest, MalformedAndSmugglingRequestsAre400) {
  StartServer();
  for (const std::string& request :
       {std::string("GARBAGE\r\n\r\n"),
        std::string("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n"
                    "Content-Length: 2\r\n\r\nab"),
        std::string("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")}) {
    auto r = RoundTrip(server_.port(), request);
    ASSERT_TRUE(r) << request;
    EXPECT_EQ(r->status, 400) << request;
    EXPECT_EQ(r->headers["connection"], "close");
  }
}

TEST_F(HttpServerTest, HeaderLimitIs431) {
  options_.limits.max_header_bytes = 1024;
  StartServer();
  auto r = RoundTrip(server_.port(), Get("/health", "X-Pad: " + std::string(500, 'p') + "\r\n"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = RoundTrip(server_.port(), Get("/health", "X-Pad: " + std::string(2000, 'p') + "\r\n"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  EXPECT_NE(r->body.find("\"code\":431"), std::string::npos);
}

TEST_F(HttpServerTest, StalledRequestGets408ThenClose) {
  options_.limits.request_deadline = milliseconds(300);
  StartServer();
  {  // half a body
    Client c(server_.port());
    ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc"));
    auto start = Clock::now();
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 408);
    EXPECT_NE(r->body.find("\"code\":408"), std::string::npos);
    EXPECT_LT(Clock::now() - start, milliseconds(2000));
    EXPECT_TRUE(c.ReadsEof());
  }
  {  // headers trickled a byte at a time: the deadline covers the whole block, not each byte
    Client c(server_.port());
    auto start = Clock::now();
    std::string request = Get("/health");
    std::optional<Response> r;
    for (char ch : request.substr(0, 12)) {
      if (!c.Send(std::string(1, ch))) break;
      std::this_thread::sleep_for(milliseconds(60));
    }
    r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 408);
    EXPECT_LT(Clock::now() - start, milliseconds(2000));
  }
}

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsThenIdleCloses) {
  options_.limits.keep_alive_idle = milliseconds(300);
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send(Get("/health")));
  auto r1 = c.ReadResponse();
  ASSERT_TRUE(r1);
  EXPECT_EQ(r1->status, 200);
  ASSERT_TRUE(c.Send(Post("/echo", "second")));
  auto r2 = c.ReadResponse();
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->body, "second");
  EXPECT_EQ(server_.open_connections(), 1u);
  // Pipelined: two requests in one send.
  ASSERT_TRUE(c.Send(Get("/v1/jobs/1") + Get("/v1/jobs/2")));
  auto r3 = c.ReadResponse();
  auto r4 = c.ReadResponse();
  ASSERT_TRUE(r3 && r4);
  EXPECT_EQ(r3->body, "job 1");
  EXPECT_EQ(r4->body, "job 2");
  auto start = Clock::now();
  EXPECT_TRUE(c.ReadsEof());  // closed after keep_alive_idle
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_TRUE(WaitUntil([&] { return server_.open_connections() == 0; }));
}

TEST_F(HttpServerTest, OverMaxConnectionsIs503WithRetryAfter) {
  options_.limits.max_connections = 2;
  StartServer();
  Client a(server_.port()), b(server_.port());
  ASSERT_TRUE(WaitUntil([&] { return server_.open_connections() == 2; }));
  Client c(server_.port());
  ASSERT_TRUE(c.Send(Get("/health")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->headers["retry-after"], "1");
  EXPECT_NE(r->body.find("\"code\":503"), std::string::npos);
  // The held connections still work, and a slot frees when one closes.
  ASSERT_TRUE(a.Send(Get("/health")));
  auto ra = a.ReadResponse();
  ASSERT_TRUE(ra);
  EXPECT_EQ(ra->status, 200);
  b.Close();
  ASSERT_TRUE(WaitUntil([&] { return server_.open_connections() == 1; }));
  auto rd = RoundTrip(server_.port(), Get("/health"));
  ASSERT_TRUE(rd);
  EXPECT_EQ(rd->status, 200);
}

TEST_F(HttpServerTest, SlowHandlerDoesNotBlockOthers) {
  StartServer();
  std::thread slow([&] {
    auto r = RoundTrip(server_.port(), Get("/slow"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->body, "slow done");
  });
  std::this_thread::sleep_for(milliseconds(50));
  auto start = Clock::now();
  auto r = RoundTrip(server_.port(), Get("/health"));
  ASSERT_TRUE(r);
  EXPECT_LT(Clock::now() - start, milliseconds(300));
  slow.join();
}

// Events pushed from a test thread through a writer the handler hands over.
struct SseProbe {
  std::mutex mu;
  std::condition_variable cv;
  std::shared_ptr<SseWriter> writer;
  std::atomic<bool> callback_ran{false};
};

TEST_F(HttpServerTest, SseEventsArriveIncrementallyAndDisconnectIsSeen) {
  auto probe = std::make_shared<SseProbe>();
  server_.Route("GET", "/events", [probe](const HttpRequest&) {
    return HttpResponse::EventStream([probe](std::shared_ptr<SseWriter> w) {
      w->OnDisconnect([probe] { probe->callback_ran = true; });
      std::lock_guard lock(probe->mu);
      probe->writer = std::move(w);
      probe->cv.notify_all();
    });
  });
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send(Get("/events")));
  ASSERT_TRUE(c.ReadUntil("\r\n\r\n"));
  EXPECT_NE(c.buffer().find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(c.buffer().find("Content-Type: text/event-stream"), std::string::npos);
  std::shared_ptr<SseWriter> writer;
  {
    std::unique_lock lock(probe->mu);
    ASSERT_TRUE(
        probe->cv.wait_for(lock, milliseconds(3000), [&] { return probe->writer != nullptr; }));
    writer = probe->writer;
  }
  EXPECT_TRUE(writer->Send("progress", "page 1"));
  ASSERT_TRUE(c.ReadUntil("event: progress\ndata: page 1\n\n"));
  EXPECT_EQ(c.buffer().find("page 2"), std::string::npos);  // not sent yet
  EXPECT_TRUE(writer->Send("", "line a\nline b"));
  ASSERT_TRUE(c.ReadUntil("data: line a\ndata: line b\n\n"));
  EXPECT_FALSE(writer->disconnected());
  auto flag = writer->disconnected_flag();
  c.Close();
  EXPECT_TRUE(WaitUntil([&] { return flag->load(); }));
  EXPECT_TRUE(WaitUntil([&] { return probe->callback_ran.load(); }));
  EXPECT_TRUE(WaitUntil([&] { return !writer->Send("x", "after close"); }));
  EXPECT_TRUE(WaitUntil([&] { return server_.open_connections() == 0; }));
}

TEST_F(HttpServerTest, SseCloseEndsTheStream) {
  server_.Route("GET", "/count", [](const HttpRequest&) {
    return HttpResponse::EventStream([](std::shared_ptr<SseWriter> w) {
      for (int i = 0; i < 3; ++i) w->Send("n", std::to_string(i));
      w->Close();
    });
  });
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send(Get("/count")));
  while (c.Fill()) {
  }
  EXPECT_NE(c.buffer().find("event: n\ndata: 0\n\nevent: n\ndata: 1\n\nevent: n\ndata: 2\n\n"),
            std::string::npos);
}

// Found by fuzz/http_request_fuzzer.cc: a lone CR inside event data was sent as is, and an SSE
// reader ends a line there, so the text after it became a field of its own ("event: x" or
// "id: y" injected into the stream). Every CR, LF and CRLF now ends a data line.
TEST_F(HttpServerTest, SseDataLinesEndAtCrLfAndLoneCr) {
  server_.Route("GET", "/cr", [](const HttpRequest&) {
    return HttpResponse::EventStream([](std::shared_ptr<SseWriter> w) {
      w->Send("", "a\revent: injected\r\nb\nc\r");
      w->Close();
    });
  });
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send(Get("/cr")));
  while (c.Fill()) {
  }
  const size_t body = c.buffer().find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(c.buffer().substr(body + 4),
            "data: a\ndata: event: injected\ndata: b\ndata: c\ndata: \n\n");
}

TEST_F(HttpServerTest, SseHeartbeatWhileIdle) {
  options_.limits.sse_heartbeat = milliseconds(100);
  auto keep = std::make_shared<std::shared_ptr<SseWriter>>();
  server_.Route("GET", "/quiet", [keep](const HttpRequest&) {
    return HttpResponse::EventStream([keep](std::shared_ptr<SseWriter> w) { *keep = w; });
  });
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send(Get("/quiet")));
  ASSERT_TRUE(c.ReadUntil(": ping\n\n"));
}

TEST_F(HttpServerTest, HandlerSeesClientDisconnect) {
  std::atomic<int> seen{-1};
  server_.Route("GET", "/long", [&](const HttpRequest& r) {
    auto end = Clock::now() + milliseconds(3000);
    while (!r.disconnected->load() && Clock::now() < end) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    seen = r.disconnected->load() ? 1 : 0;
    return HttpResponse::Text(200, "late");
  });
  StartServer();
  {
    Client c(server_.port());
    ASSERT_TRUE(c.Send(Get("/long")));
    ASSERT_TRUE(WaitUntil([&] { return server_.in_flight_requests() == 1; }));
  }  // the client goes away mid-request
  ASSERT_TRUE(WaitUntil([&] { return seen.load() != -1; }));
  EXPECT_EQ(seen.load(), 1);
}

TEST_F(HttpServerTest, BeginDrainRefusesNewWhileInFlightFinishes) {
  StartServer();
  EXPECT_TRUE(server_.ready());
  Client slow(server_.port());
  ASSERT_TRUE(slow.Send(Get("/slow")));
  Client idle(server_.port());  // an idle keep-alive connection is closed by the drain
  ASSERT_TRUE(WaitUntil([&] { return server_.in_flight_requests() == 1; }));
  server_.BeginDrain();
  EXPECT_FALSE(server_.ready());
  Client late(server_.port());
  EXPECT_FALSE(late.connected());
  EXPECT_EQ(late.connect_errno(), ECONNREFUSED);
  EXPECT_TRUE(idle.ReadsEof());
  auto r = slow.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "slow done");
  EXPECT_EQ(r->headers["connection"], "close");
  auto start = Clock::now();
  server_.Stop(milliseconds(5000));
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
}

TEST_F(HttpServerTest, StopClosesStreamsAfterDrainTimeout) {
  auto flag = std::make_shared<std::shared_ptr<const std::atomic<bool>>>();
  std::atomic<bool> got{false};
  server_.Route("GET", "/forever", [&](const HttpRequest&) {
    return HttpResponse::EventStream([&, flag](std::shared_ptr<SseWriter> w) {
      *flag = w->disconnected_flag();
      got = true;
      std::thread([w] {
        while (w->Send("tick", "x")) std::this_thread::sleep_for(milliseconds(10));
      }).detach();
    });
  });
  StartServer();
  Client c(server_.port());
  ASSERT_TRUE(c.Send(Get("/forever")));
  ASSERT_TRUE(c.ReadUntil("event: tick"));
  ASSERT_TRUE(WaitUntil([&] { return got.load(); }));
  auto start = Clock::now();
  server_.Stop(milliseconds(200));
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_TRUE((*flag)->load());
}

TEST_F(HttpServerTest, ManyConcurrentClientsAllAnswered) {
  options_.io_threads = 2;
  StartServer();
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 50; ++t) {
    threads.emplace_back([&, t] {
      Client keep(server_.port());
      for (int i = 0; i < 20; ++i) {
        std::string body = std::to_string(t) + ":" + std::to_string(i);
        std::optional<Response> r;
        if (t % 2 == 0) {  // even threads reuse one connection, odd ones open one per request
          if (keep.Send(Post("/echo", body))) r = keep.ReadResponse();
        } else {
          r = RoundTrip(server_.port(), Post("/echo", body));
        }
        if (r && r->status == 200 && r->body == body) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 50 * 20);
}

TEST(HttpServerStartTest, BindErrorsAreErrors) {
  HttpServer first;
  ServerOptions options;
  options.port = 0;
  ASSERT_TRUE(first.Start(options));
  HttpServer second;
  options.port = first.port();
  auto status = second.Start(options);
  EXPECT_FALSE(status);
  HttpServer third;
  options.host = "not an address";
  options.port = 0;
  EXPECT_FALSE(third.Start(options));
  first.Stop(milliseconds(0));
}

// A client too slow for the server: a tiny receive buffer (SO_RCVBUF set before connecting, so
// the TCP window stays small) and reads only when told to.
class SlowReader {
 public:
  explicit SlowReader(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int size = 4096;
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    timeval timeout{60, 0};  // a hung server fails the test instead of hanging it
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~SlowReader() { close(fd_); }
  SlowReader(const SlowReader&) = delete;
  SlowReader& operator=(const SlowReader&) = delete;

  bool Send(std::string_view data) {
    return connected_ &&
           send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // Reads until at least n bytes have arrived in all; false on EOF, error or timeout.
  bool ReadAtLeast(size_t n) {
    while (received_ < n) {
      if (ReadSome() <= 0) return false;
    }
    return true;
  }
  // Reads until the server ends the connection (EOF or reset): true; false on a timeout.
  bool ReadToEnd() {
    while (true) {
      const ssize_t n = ReadSome();
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n < 0) return false;
    }
  }
  size_t received() const { return received_; }

 private:
  ssize_t ReadSome() {
    char buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n > 0) received_ += static_cast<size_t>(n);
    return n;
  }

  int fd_ = -1;
  bool connected_ = false;
  size_t received_ = 0;
};

// Far more than the socket buffers of both ends hold (4 MiB send, a tiny receive buffer), so a
// client that stops reading stops the write.
constexpr size_t kUnwritableBytes = size_t{32} << 20;

TEST_F(HttpServerTest, WriteTimeoutClosesAConnectionThatStopsReading) {
  options_.limits.write_timeout = milliseconds(300);
  server_.Route("GET", "/large", [](const HttpRequest&) {
    return HttpResponse::Text(200, std::string(kUnwritableBytes, 'x'));
  });
  StartServer();
  SlowReader slow(server_.port());
  ASSERT_TRUE(slow.Send(Get("/large")));
  ASSERT_TRUE(slow.ReadAtLeast(1));  // the response is being written (the connection is open)
  // No more reading: the write cannot finish, and write_timeout closes the connection.
  EXPECT_TRUE(WaitUntil([&] { return server_.open_connections() == 0; }, milliseconds(30000)));
  EXPECT_EQ(server_.in_flight_requests(), 0u);
  // The client gets what the kernels had buffered, then the end; never the whole response.
  EXPECT_TRUE(slow.ReadToEnd());
  EXPECT_LT(slow.received(), kUnwritableBytes);
  auto r = RoundTrip(server_.port(), Get("/health"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// max_sse_queue_bytes counts event bytes not yet written (the response head is not an event).
// The client reads nothing and the first event is larger than the socket buffers, so it stays
// unwritten: an event filling the limit exactly is accepted, one byte more is refused, and a
// refusal closes the connection.
TEST_F(HttpServerTest, SseQueueLimitExactlyAcceptedOneMoreRefused) {
  constexpr size_t kLimit = kUnwritableBytes / 2;
  constexpr size_t kFraming = 8;  // "data: " and "\n\n" around a one-line payload
  options_.limits.max_sse_queue_bytes = kLimit;
  options_.limits.sse_heartbeat = std::chrono::hours(1);  // no ping joins the queue
  struct Sent {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::pair<bool, bool>> results;  // (first Send, second Send) per stream
  };
  auto sent = std::make_shared<Sent>();
  server_.Route("GET", "/flood", [sent](const HttpRequest& request) {
    const size_t first = request.query == "over" ? kLimit + 1 : kLimit;
    return HttpResponse::EventStream([sent, first](std::shared_ptr<SseWriter> w) {
      const bool a = w->Send("", std::string(first - kFraming, 'a'));
      const bool b = w->Send("", "b");
      std::lock_guard lock(sent->mu);
      sent->results.emplace_back(a, b);
      sent->cv.notify_all();
    });
  });
  StartServer();
  for (const std::string query : {"", "over"}) {
    const size_t streams = sent->results.size();
    SlowReader slow(server_.port());
    ASSERT_TRUE(slow.Send(Get("/flood?" + query)));
    std::pair<bool, bool> result;
    {
      std::unique_lock lock(sent->mu);
      ASSERT_TRUE(sent->cv.wait_for(lock, std::chrono::seconds(60),
                                    [&] { return sent->results.size() > streams; }));
      result = sent->results.back();
    }
    if (query.empty()) {
      EXPECT_TRUE(result.first) << "an event of exactly max_sse_queue_bytes";
      EXPECT_FALSE(result.second) << "one more event while the first is unwritten";
    } else {
      EXPECT_FALSE(result.first) << "an event of max_sse_queue_bytes + 1";
      EXPECT_FALSE(result.second) << "after the refusal the stream is closed";
    }
    EXPECT_TRUE(WaitUntil([&] { return server_.open_connections() == 0; }, milliseconds(30000)));
    EXPECT_TRUE(slow.ReadToEnd());
    EXPECT_LT(slow.received(), kLimit);
  }
  auto r = RoundTrip(server_.port(), Get("/health"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

}  // namespace
}  // namespace mineru::service
