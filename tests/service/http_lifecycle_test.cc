// SPDX-License-Identifier: Apache-2.0
// How requests live and end, against a raw POSIX-socket client: routes on the I/O thread that
// answer while the handler pool is saturated, later answers (HttpResponse::Later) that hold no
// handler thread, and Stop, which ends within its drain timeout whatever runs: a request that
// cannot finish gets 503 (not a closed socket), a stream its abort text, and a handler that
// never returns is left behind instead of hanging Stop. Tests never assert on time: a hang is
// caught by the client's receive timeout or the test's timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "handler_gate.h"
#include "service/http_server.h"
#include "service/routes.h"
#include "service/service_metrics.h"

namespace mineru::service {
namespace {

using testing_support::Client;
using testing_support::GetRequest;

using testing::Gate;
using testing::kWaitLimit;
using testing::WaitUntil;

// Responders handed out by a Later route, for the test to answer.
struct Pending {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::shared_ptr<Responder>> responders;
  bool WaitFor(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, kWaitLimit, [&] { return responders.size() >= n; });
  }
};

class HttpLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.port = 0;
    options_.handler_threads = 1;
    server_.Route(
        "GET", "/live", [](const HttpRequest&) { return HttpResponse::Json(200, "{}"); },
        RouteTraits{.on_io_thread = true});
    server_.Route("GET", "/block", [gate = gate_](const HttpRequest&) {
      gate->Wait();
      return HttpResponse::Text(200, "unblocked");
    });
    server_.Route("POST", "/upload", [](const HttpRequest& r) {
      return HttpResponse::Text(200, std::to_string(r.body.size()));
    });
    server_.Route("GET", "/later", [pending = pending_](const HttpRequest&) {
      return HttpResponse::Later([pending](std::shared_ptr<Responder> responder) {
        std::lock_guard lock(pending->mu);
        pending->responders.push_back(std::move(responder));
        pending->cv.notify_all();
      });
    });
  }
  void StartServer() {
    auto status = server_.Start(options_);
    ASSERT_TRUE(status) << status.error().ToString();
  }
  void TearDown() override {
    gate_->Open();
    {
      std::lock_guard lock(pending_->mu);
      pending_->responders.clear();
    }
    server_.Stop(std::chrono::milliseconds(2000));
  }

  ServerOptions options_;
  ServiceMetrics metrics_;  // outlives the server's serving (declared before it)
  HttpServer server_;
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
  std::shared_ptr<Pending> pending_ = std::make_shared<Pending>();
};

// Issue 14: probes shared the handler pool with work that holds a thread, and timed out while
// it was saturated. A route on the I/O thread is answered while the only handler thread is
// held and two more requests wait for it.
TEST_F(HttpLifecycleTest, IoThreadRouteAnswersWhileThePoolIsSaturated) {
  StartServer();
  Client a(server_.port()), b(server_.port()), c(server_.port());
  ASSERT_TRUE(a.Send(GetRequest("/block")));
  ASSERT_TRUE(gate_->WaitWaiting(1));
  ASSERT_TRUE(b.Send(GetRequest("/block")));
  ASSERT_TRUE(c.Send(GetRequest("/block")));
  ASSERT_TRUE(WaitUntil([&] { return server_.in_flight_requests() == 3; }));
  for (int i = 0; i < 3; ++i) {
    auto probe = testing_support::Exchange(server_.port(), "GET", "/live");
    ASSERT_TRUE(probe);
    EXPECT_EQ(probe->status, 200);
  }
  EXPECT_EQ(gate_->waiting(), 1) << "the probe was answered while the pool was saturated";
  EXPECT_TRUE(WaitUntil([&] { return server_.in_flight_requests() == 3; }));
  gate_->Open();
  for (Client* client : {&a, &b, &c}) {
    auto r = client->ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->body, "unblocked");
  }
}

// The service's own probes and /metrics (AddHealthRoutes, AddMetricsRoute) are such routes: with
// the only handler thread held and another request waiting for it, each answers 200.
TEST_F(HttpLifecycleTest, ServiceProbesAndMetricsAnswerWhileThePoolIsSaturated) {
  AddHealthRoutes(server_);
  AddMetricsRoute(server_, metrics_);
  StartServer();
  Client a(server_.port()), b(server_.port());
  ASSERT_TRUE(a.Send(GetRequest("/block")));
  ASSERT_TRUE(gate_->WaitWaiting(1));
  ASSERT_TRUE(b.Send(GetRequest("/block")));
  ASSERT_TRUE(WaitUntil([&] { return server_.in_flight_requests() == 2; }));
  for (const char* path : {"/health/live", "/health/ready", "/metrics"}) {
    auto probe = testing_support::Exchange(server_.port(), "GET", path);
    ASSERT_TRUE(probe) << path;
    EXPECT_EQ(probe->status, 200) << path;
  }
  EXPECT_EQ(gate_->waiting(), 1) << "a probe was answered only once the pool was free";
  gate_->Open();
  for (Client* client : {&a, &b}) {
    auto r = client->ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->body, "unblocked");
  }
}

// A later answer holds no handler thread: with one handler thread, five requests all reach
// their handler while none is answered yet; each is answered from the test's thread.
TEST_F(HttpLifecycleTest, LaterAnswersHoldNoHandlerThread) {
  StartServer();
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 5; ++i) {
    clients.push_back(std::make_unique<Client>(server_.port()));
    ASSERT_TRUE(clients.back()->Send(GetRequest("/later")));
  }
  ASSERT_TRUE(pending_->WaitFor(5));
  EXPECT_EQ(server_.in_flight_requests(), 5u);
  std::vector<std::shared_ptr<Responder>> responders;
  {
    std::lock_guard lock(pending_->mu);
    responders.swap(pending_->responders);
  }
  for (size_t i = 0; i + 1 < responders.size(); ++i) {
    EXPECT_TRUE(responders[i]->Send(HttpResponse::Text(200, "later")));
    EXPECT_FALSE(responders[i]->Send(HttpResponse::Text(200, "twice"))) << "only once";
  }
  responders.back().reset();  // dropped without an answer: 500
  int ok = 0, failed = 0;
  for (auto& client : clients) {
    auto r = client->ReadResponse();
    ASSERT_TRUE(r);
    if (r->status == 200 && r->body == "later") ++ok;
    if (r->status == 500) ++failed;
  }
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(failed, 1);
  // The connection goes on after a later answer.
  ASSERT_TRUE(clients[0]->Send(GetRequest("/live")));
  auto again = clients[0]->ReadResponse();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

// A later answer's disconnect callbacks go when it is sent: a keep-alive connection that serves
// many later answers does not pile them up, and closing it runs none of them.
TEST_F(HttpLifecycleTest, LaterAnswerCallbacksEndWithTheAnswer) {
  StartServer();
  auto fired = std::make_shared<std::atomic<int>>(0);
  Client c(server_.port());
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.Send(GetRequest("/later")));
    ASSERT_TRUE(pending_->WaitFor(i + 1));
    std::shared_ptr<Responder> responder;
    {
      std::lock_guard lock(pending_->mu);
      responder = pending_->responders[i];
    }
    responder->OnDisconnect([fired] { ++*fired; });
    EXPECT_TRUE(responder->Send(HttpResponse::Text(200, "later")));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->body, "later");
  }
  // One more, left unanswered: only its callback runs when the client goes away.
  ASSERT_TRUE(c.Send(GetRequest("/later")));
  ASSERT_TRUE(pending_->WaitFor(4));
  {
    std::lock_guard lock(pending_->mu);
    pending_->responders[3]->OnDisconnect([fired] { ++*fired; });
  }
  c.Close();
  // One Fire runs every callback still registered, so the first one seen is all of them.
  ASSERT_TRUE(WaitUntil([&] { return fired->load() > 0; }));
  EXPECT_EQ(fired->load(), 1);
}

// Issue 14: a request still running at the end of the drain got a closed socket, and a handler
// that did not return kept the process from stopping. Stop now answers 503 with Retry-After,
// tells the handler (HttpRequest::disconnected), and returns even though the handler never
// does (false: its thread is left running).
TEST_F(HttpLifecycleTest, StopAnswers503AndDoesNotWaitForAStuckHandler) {
  auto told = std::make_shared<std::atomic<bool>>(false);
  auto finished = std::make_shared<std::atomic<bool>>(false);
  server_.Route("GET", "/stuck", [gate = gate_, told, finished](const HttpRequest& r) {
    gate->Wait();  // ignores its client: the gate opens only after Stop returned
    *told = r.disconnected->load();
    *finished = true;
    return HttpResponse::Text(200, "too late");
  });
  StartServer();
  Client stuck(server_.port());
  ASSERT_TRUE(stuck.Send(GetRequest("/stuck")));
  ASSERT_TRUE(gate_->WaitWaiting(1));
  Client reading(server_.port());  // a request whose body never comes
  ASSERT_TRUE(reading.Send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nab"));
  // Its header is read (the body admitted) before the drain begins.
  ASSERT_TRUE(WaitUntil([&] { return server_.body_bytes_in_flight() == 10; }));
  EXPECT_FALSE(server_.Stop(std::chrono::milliseconds(400)));
  auto r = stuck.ReadResponse();
  ASSERT_TRUE(r) << "a closed socket instead of an answer";
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->Header("retry-after"), "1");
  EXPECT_EQ(r->Header("connection"), "close");
  auto cut = reading.ReadResponse();
  ASSERT_TRUE(cut) << reading.buffer();
  EXPECT_EQ(cut->status, 503);
  gate_->Open();
  ASSERT_TRUE(WaitUntil([&] { return finished->load(); }));
  EXPECT_TRUE(told->load());
}

// Stop's deadline: a later answer that never came is 503 (and Stop returns true: no handler
// thread was held); an open stream gets its abort text, then the end of the connection.
TEST_F(HttpLifecycleTest, StopEndsLaterAnswersAndStreams) {
  auto writers = std::make_shared<std::vector<std::shared_ptr<SseWriter>>>();
  auto mu = std::make_shared<std::mutex>();
  server_.Route("GET", "/stream", [writers, mu](const HttpRequest&) {
    HttpResponse r = HttpResponse::EventStream([writers, mu](std::shared_ptr<SseWriter> w) {
      w->Send("", "first");
      std::lock_guard lock(*mu);
      writers->push_back(std::move(w));
    });
    r.sse_abort = "event: error\ndata: stopping\n\ndata: [DONE]\n\n";
    return r;
  });
  StartServer();
  Client later(server_.port());
  ASSERT_TRUE(later.Send(GetRequest("/later")));
  ASSERT_TRUE(pending_->WaitFor(1));
  Client stream(server_.port());
  ASSERT_TRUE(stream.Send(GetRequest("/stream")));
  ASSERT_TRUE(stream.ReadUntil("data: first\n\n"));
  EXPECT_TRUE(server_.Stop(std::chrono::milliseconds(400)));
  auto r = later.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_TRUE(stream.ReadUntil("event: error\ndata: stopping\n\ndata: [DONE]\n\n"))
      << stream.buffer();
  EXPECT_TRUE(stream.ReadsEof());
  std::lock_guard lock(*mu);
  ASSERT_EQ(writers->size(), 1u);
  EXPECT_TRUE(writers->front()->disconnected());
  EXPECT_FALSE(writers->front()->Send("", "after the end"));
}

}  // namespace
}  // namespace mineru::service
