// SPDX-License-Identifier: Apache-2.0
// RemoteGenerator's queue against a scripted model server (model_server_stub.h): at most
// options.concurrency requests in the server at once (the stub counts them), the queue served
// by priority then arrival, Cancel of a request in flight, waiting to retry or still queued,
// the destructor ending what is unfinished, and the counts of Stats and on_request_finished.
// Order is made by the stub's gates (an answer held until the test opens it), never by sleeps.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline/remote_generator.h"
#include "remote_generator_fixture.h"

namespace mineru::pipeline::testing {
namespace {

std::vector<std::string> Prompts(const std::vector<StubRequest>& received) {
  std::vector<std::string> prompts;
  for (const StubRequest& request : received) prompts.push_back(request.prompt);
  return prompts;
}

TEST_F(RemoteGeneratorTest, ConcurrencyBoundsTheRequestsInTheServer) {
  // Each answer is held until three requests are in the server at once, or for 1 s: a client
  // that sends a third while two are unanswered is caught at it, and one allowed two has both
  // in the server together.
  ASSERT_TRUE(StartStub(
      R"([{"do": "answer", "until_in_flight": 3, "max_wait": 1, "content": "{prompt}"}])"))
      << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.concurrency = 2;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  std::vector<engine::RequestHandle> handles;
  for (int i = 0; i < 6; ++i) {
    handles.push_back(SubmitOrFail(*generator, CropRequest("r" + std::to_string(i))));
  }
  for (int i = 0; i < 6; ++i) {
    engine::GenerationResult result = Await(handles[i]);
    EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
    EXPECT_EQ(result.text, "r" + std::to_string(i));  // each its own answer
  }
  auto stats = stub_.Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->chat_requests, 6);
  EXPECT_EQ(stats->max_in_flight, 2);
}

// With one request at a time and the first held, the queued ones go lower priority value
// first, ties in order of submission.
TEST_F(RemoteGeneratorTest, QueueIsServedByPriorityThenArrival) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "gate": "go", "content": "{prompt}"},
                            {"do": "answer", "content": "{prompt}"}])"))
      << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.concurrency = 1;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  std::vector<engine::RequestHandle> handles;
  handles.push_back(SubmitOrFail(*generator, CropRequest("first")));
  ASSERT_TRUE(stub_.WaitForChatRequests(1));  // "first" is in the server, held
  handles.push_back(SubmitOrFail(*generator, CropRequest("p5", 5)));
  handles.push_back(SubmitOrFail(*generator, CropRequest("p1", 1)));
  handles.push_back(SubmitOrFail(*generator, CropRequest("p3a", 3)));
  handles.push_back(SubmitOrFail(*generator, CropRequest("p3b", 3)));
  ASSERT_TRUE(stub_.OpenGate("go"));
  for (engine::RequestHandle& handle : handles) {
    EXPECT_EQ(Await(handle).finish_reason, FinishReason::kStop);
  }
  std::vector<StubRequest> received = stub_.ChatReceived();
  EXPECT_EQ(Prompts(received), (std::vector<std::string>{"first", "p1", "p3a", "p3b", "p5"}));
  auto stats = stub_.Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->max_in_flight, 1);
}

TEST_F(RemoteGeneratorTest, CancelOfARequestInFlightEndsItCancelled) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "gate": "never"}])")) << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  engine::RequestHandle handle = SubmitOrFail(*generator, CropRequest("held"));
  ASSERT_TRUE(stub_.WaitForChatRequests(1));
  handle.Cancel();
  engine::GenerationResult result = Await(handle);
  EXPECT_EQ(result.finish_reason, FinishReason::kCancelled) << result.error;
  ASSERT_TRUE(
      WaitForStats(*generator, [](const RemoteGeneratorStats& s) { return s.cancelled == 1; }));
  EXPECT_EQ(generator->Stats().in_flight, 0);
  EXPECT_EQ(generator->Stats().failed, 0);
  EXPECT_EQ(stub_.ChatRequests(), 1);
  stub_.Stop();  // the held answer does not keep the stub up
}

TEST_F(RemoteGeneratorTest, CancelWhileWaitingToRetryEndsItCancelled) {
  ASSERT_TRUE(StartStub(R"([{"do": "status", "status": 503, "retry_after": "30"}])"))
      << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.retry.max_retry_after = 60s;
  options.server.deadline = 120s;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::RequestHandle handle = SubmitOrFail(*generator, CropRequest("x"));
  ASSERT_TRUE(stub_.WaitForChatRequests(1));
  ASSERT_TRUE(WaitForStats(*generator, [](const RemoteGeneratorStats& s) {
    return s.waiting == 1 && s.in_flight == 0;  // the 503 read, the retry pending
  }));
  handle.Cancel();
  engine::GenerationResult result = Await(handle);
  EXPECT_EQ(result.finish_reason, FinishReason::kCancelled) << result.error;
  EXPECT_EQ(stub_.ChatRequests(), 1);  // the retry was never made
}

// A cancelled request that was still queued is never sent.
TEST_F(RemoteGeneratorTest, CancelledQueuedRequestIsNeverSent) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "gate": "go", "content": "{prompt}"},
                            {"do": "answer", "content": "{prompt}"}])"))
      << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.concurrency = 1;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::RequestHandle first = SubmitOrFail(*generator, CropRequest("first"));
  ASSERT_TRUE(stub_.WaitForChatRequests(1));
  engine::RequestHandle queued = SubmitOrFail(*generator, CropRequest("queued"));
  queued.Cancel();
  EXPECT_EQ(Await(queued).finish_reason, FinishReason::kCancelled);
  ASSERT_TRUE(stub_.OpenGate("go"));
  EXPECT_EQ(Await(first).text, "first");
  // Anything still queued would go before a request submitted now.
  EXPECT_EQ(Generate(*generator, CropRequest("last")).text, "last");
  EXPECT_EQ(Prompts(stub_.ChatReceived()), (std::vector<std::string>{"first", "last"}));
}

TEST_F(RemoteGeneratorTest, DestructorEndsUnfinishedRequests) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "gate": "never"}])")) << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.concurrency = 1;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::RequestHandle in_flight = SubmitOrFail(*generator, CropRequest("in flight"));
  ASSERT_TRUE(stub_.WaitForChatRequests(1));
  engine::RequestHandle queued = SubmitOrFail(*generator, CropRequest("queued"));
  generator.reset();
  for (engine::RequestHandle* handle : {&in_flight, &queued}) {
    engine::GenerationResult result = Await(*handle);
    EXPECT_EQ(result.finish_reason, FinishReason::kError);
    EXPECT_NE(result.error.find("stopped"), std::string::npos) << result.error;
  }
  EXPECT_EQ(stub_.ChatRequests(), 1);
}

// Every count of Stats and every record of on_request_finished, over one request of each
// outcome: answered, truncated, failed (400), answered after a retry (503), cancelled.
TEST_F(RemoteGeneratorTest, StatsAndRecordsCountEveryOutcome) {
  ASSERT_TRUE(StartStub(R"([
      {"do": "answer", "content": "ok"},
      {"do": "answer", "content": "cut", "finish_reason": "length"},
      {"do": "status", "status": 400},
      {"do": "status", "status": 503},
      {"do": "answer", "content": "retried"},
      {"do": "answer", "gate": "never"}])"))
      << kStubDidNotStart;
  std::mutex mutex;
  std::vector<RemoteRequestRecord> records;
  RemoteGeneratorOptions options = Options();
  options.on_request_finished = [&](const RemoteRequestRecord& record) {
    std::lock_guard lock(mutex);
    records.push_back(record);
  };
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);

  EXPECT_EQ(Generate(*generator, CropRequest("a")).finish_reason, FinishReason::kStop);
  EXPECT_EQ(Generate(*generator, CropRequest("b")).finish_reason, FinishReason::kLength);
  EXPECT_EQ(Generate(*generator, CropRequest("c")).finish_reason, FinishReason::kError);
  engine::GenerationResult retried = Generate(*generator, CropRequest("d"));
  EXPECT_EQ(retried.finish_reason, FinishReason::kStop) << retried.error;
  EXPECT_EQ(retried.retries, 1);
  engine::RequestHandle held = SubmitOrFail(*generator, CropRequest("e"));
  ASSERT_TRUE(stub_.WaitForChatRequests(6));
  held.Cancel();
  EXPECT_EQ(Await(held).finish_reason, FinishReason::kCancelled);

  ASSERT_TRUE(WaitForStats(*generator, [](const RemoteGeneratorStats& s) {
    return s.succeeded + s.failed + s.cancelled == 5 && s.in_flight == 0;
  }));
  const RemoteGeneratorStats stats = generator->Stats();
  EXPECT_EQ(stats.requests, 5);
  EXPECT_EQ(stats.attempts, 6);
  EXPECT_EQ(stats.retries, 1);
  EXPECT_EQ(stats.succeeded, 3);
  EXPECT_EQ(stats.truncated, 1);
  EXPECT_EQ(stats.failed, 1);
  EXPECT_EQ(stats.cancelled, 1);
  EXPECT_EQ(stats.in_flight, 0);
  EXPECT_EQ(stats.waiting, 0);
  EXPECT_GT(stats.seconds, 0.0);

  const auto until = std::chrono::steady_clock::now() + kHangGuard;
  for (;;) {
    {
      std::lock_guard lock(mutex);
      if (records.size() >= 5) break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "on_request_finished not called 5 times";
    std::this_thread::sleep_for(5ms);
  }
  std::lock_guard lock(mutex);
  ASSERT_EQ(records.size(), 5u);
  using Outcome = RemoteRequestRecord::Outcome;
  // The requests ran one after the other, so the records come in that order.
  const std::vector<Outcome> outcomes = {Outcome::kOk, Outcome::kTruncated, Outcome::kFailed,
                                         Outcome::kOk, Outcome::kCancelled};
  const std::vector<int> attempts = {1, 1, 1, 2, 1};
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(records[i].outcome, outcomes[i]);
    EXPECT_EQ(records[i].attempts, attempts[i]);
    EXPECT_GE(records[i].seconds, 0.0);
  }
}

}  // namespace
}  // namespace mineru::pipeline::testing
