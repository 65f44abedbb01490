// SPDX-License-Identifier: Apache-2.0
// RemoteGenerator against a model server that misbehaves (model_server_stub.h), by MinerU's
// client's retry rule (pipeline/retry_policy.h): slow answers past the per-attempt timeout,
// storms of 503 with and without Retry-After, 429, the other retried statuses, statuses never
// retried, connection resets, malformed and truncated bodies, a server that goes away and comes
// back on the same port, and deadlines shorter than the retries. The counts come from the stub
// (how many requests it saw) and from GenerationResult::retries, never from the clock.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/remote_generator.h"
#include "remote_generator_fixture.h"

namespace mineru::pipeline::testing {
namespace {

// The request ended by its deadline: kDeadline, or kError saying so.
bool EndedByDeadline(const engine::GenerationResult& result) {
  return result.finish_reason == FinishReason::kDeadline ||
         (result.finish_reason == FinishReason::kError &&
          result.error.find("deadline") != std::string::npos);
}

TEST_F(RemoteGeneratorTest, SlowAnswerPastTheTimeoutIsRetriedThenFails) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "sleep": 30}])")) << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.request_timeout = 300ms;
  options.server.retry.max_retries = 2;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("slow"));
  EXPECT_EQ(result.finish_reason, FinishReason::kError);
  EXPECT_FALSE(result.error.empty());
  EXPECT_EQ(result.retries, 2);
  EXPECT_EQ(stub_.ChatRequests(), 3);  // 1 + max_retries attempts
  ASSERT_TRUE(
      WaitForStats(*generator, [](const RemoteGeneratorStats& s) { return s.failed == 1; }));
  EXPECT_EQ(generator->Stats().attempts, 3);
  EXPECT_EQ(generator->Stats().retries, 2);
}

TEST_F(RemoteGeneratorTest, SlowAnswerOnceThenAFastOneSucceeds) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "sleep": 30}, {"do": "answer", "content": "fast"}])"))
      << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.request_timeout = 300ms;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
  EXPECT_EQ(result.text, "fast");
  EXPECT_EQ(result.retries, 1);
  EXPECT_EQ(stub_.ChatRequests(), 2);
}

TEST_F(RemoteGeneratorTest, StormOf503WithRetryAfterThenSuccess) {
  ASSERT_TRUE(StartStub(R"([
      {"do": "status", "status": 503, "retry_after": "1"},
      {"do": "status", "status": 503, "retry_after": "1"},
      {"do": "answer", "content": "after the storm"}])"))
      << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
  EXPECT_EQ(result.text, "after the storm");
  EXPECT_EQ(result.retries, 2);
  EXPECT_EQ(stub_.ChatRequests(), 3);
}

// Retry-After is honoured: a wait it asks for that outlasts the deadline means no retry at all
// (the backoff alone, 10 ms here, would have retried and succeeded).
TEST_F(RemoteGeneratorTest, RetryAfterPastTheDeadlineMeansNoRetry) {
  ASSERT_TRUE(StartStub(R"([{"do": "status", "status": 503, "retry_after": "5"},
                            {"do": "answer", "content": "too early"}])"))
      << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.deadline = 500ms;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_NE(result.finish_reason, FinishReason::kStop) << result.text;
  EXPECT_TRUE(result.finish_reason == FinishReason::kDeadline ||
              result.finish_reason == FinishReason::kError)
      << engine::FinishReasonName(result.finish_reason);
  EXPECT_EQ(stub_.ChatRequests(), 1);
}

TEST_F(RemoteGeneratorTest, StormOf503WithoutRetryAfterBacksOffThenSucceeds) {
  ASSERT_TRUE(StartStub(R"([
      {"do": "status", "status": 503}, {"do": "status", "status": 503},
      {"do": "status", "status": 503}, {"do": "answer", "content": "finally"}])"))
      << kStubDidNotStart;
  auto generator = Make(Options());  // max_retries 3, backoff_base 10 ms
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
  EXPECT_EQ(result.text, "finally");
  EXPECT_EQ(result.retries, 3);
  EXPECT_EQ(stub_.ChatRequests(), 4);
}

TEST_F(RemoteGeneratorTest, EndlessStormOf503FailsAfterMaxRetriesNamingTheStatus) {
  ASSERT_TRUE(StartStub(R"([{"do": "status", "status": 503}])")) << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_EQ(result.finish_reason, FinishReason::kError);
  EXPECT_NE(result.error.find("503"), std::string::npos) << result.error;
  EXPECT_EQ(result.retries, 3);
  EXPECT_EQ(stub_.ChatRequests(), 4);
}

TEST_F(RemoteGeneratorTest, TooManyRequestsWithRetryAfterIsRetried) {
  ASSERT_TRUE(StartStub(R"([{"do": "status", "status": 429, "retry_after": "1"},
                            {"do": "answer", "content": "served"}])"))
      << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
  EXPECT_EQ(result.text, "served");
  EXPECT_EQ(result.retries, 1);
  EXPECT_EQ(stub_.ChatRequests(), 2);
}

// Each transport failure and retried status, once, then an answer: one retry, the answer taken.
// A body cut short of its Content-Length is a transport failure too.
TEST_F(RemoteGeneratorTest, RetriedFailuresAreRetriedOnceThenAnswered) {
  const std::vector<std::string> first = {
      R"({"do": "status", "status": 429})", R"({"do": "status", "status": 500})",
      R"({"do": "status", "status": 502})", R"({"do": "status", "status": 503})",
      R"({"do": "status", "status": 504})", R"({"do": "reset"})",
      R"({"do": "reset_partial"})",         R"({"do": "truncated", "content": "first half"})"};
  for (const std::string& action : first) {
    SCOPED_TRACE(action);
    ASSERT_TRUE(StartStub("[" + action + R"(, {"do": "answer", "content": "ok"}])"))
        << kStubDidNotStart;
    auto generator = Make(Options());
    ASSERT_NE(generator, nullptr);
    engine::GenerationResult result = Generate(*generator, CropRequest("x"));
    EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
    EXPECT_EQ(result.text, "ok");
    EXPECT_EQ(result.retries, 1);
    EXPECT_EQ(stub_.ChatRequests(), 2);
    generator.reset();
    stub_.Stop();
  }
}

// Statuses never retried, and a complete body that is not JSON (it arrived whole: the server
// would answer the same again): one request, an error naming what came back.
TEST_F(RemoteGeneratorTest, OtherFailuresAreNotRetriedAndNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"do": "status", "status": 400})", "400"},
      {R"({"do": "status", "status": 401})", "401"},
      {R"({"do": "status", "status": 404})", "404"},
      {R"({"do": "status", "status": 422})", "422"},
      {R"({"do": "malformed"})", "not a JSON object"}};
  for (const auto& [action, named] : cases) {
    SCOPED_TRACE(action);
    ASSERT_TRUE(StartStub("[" + action + R"(, {"do": "answer", "content": "never asked"}])"))
        << kStubDidNotStart;
    auto generator = Make(Options());
    ASSERT_NE(generator, nullptr);
    engine::GenerationResult result = Generate(*generator, CropRequest("x"));
    EXPECT_EQ(result.finish_reason, FinishReason::kError);
    EXPECT_NE(result.error.find(named), std::string::npos) << result.error;
    EXPECT_EQ(result.retries, 0);
    EXPECT_EQ(stub_.ChatRequests(), 1);
    ASSERT_TRUE(
        WaitForStats(*generator, [](const RemoteGeneratorStats& s) { return s.failed == 1; }));
    EXPECT_EQ(generator->Stats().retries, 0);
    generator.reset();
    stub_.Stop();
  }
}

// The server stops (its pooled connection dies with it, the port refuses) and comes back on
// the same port while the request is retrying: the request succeeds.
TEST_F(RemoteGeneratorTest, ServerThatGoesAwayAndComesBackIsWaitedFor) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "content": "{prompt}"}])")) << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.retry.max_retries = 10;
  options.server.retry.backoff_base = 50ms;
  options.server.deadline = 50s;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  EXPECT_EQ(Generate(*generator, CropRequest("before")).text, "before");

  stub_.Stop();
  engine::RequestHandle handle = SubmitOrFail(*generator, CropRequest("while away"));
  // Restarted only once an attempt has failed against the stopped server.
  ASSERT_TRUE(WaitForStats(
      *generator, [](const RemoteGeneratorStats& s) { return s.retries >= 1 || s.failed >= 1; }));
  ASSERT_TRUE(stub_.Restart()) << kStubDidNotStart;

  engine::GenerationResult result = Await(handle);
  EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
  EXPECT_EQ(result.text, "while away");
  EXPECT_GE(result.retries, 1);
  EXPECT_EQ(stub_.ChatRequests(), 1);  // the restarted stub's count
}

TEST_F(RemoteGeneratorTest, UnreachableServerFailsAfterTheRetries) {
  ASSERT_TRUE(StartStub("[]")) << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  stub_.Stop();  // the port refuses from now on
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_EQ(result.finish_reason, FinishReason::kError);
  EXPECT_FALSE(result.error.empty());
  EXPECT_EQ(result.retries, 3);
}

// The deadline (options.deadline) ends a request whose retries would go on longer.
TEST_F(RemoteGeneratorTest, DeadlineShorterThanTheRetriesEndsTheRequest) {
  ASSERT_TRUE(StartStub(R"([{"do": "status", "status": 503}])")) << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.deadline = 400ms;
  options.server.retry.max_retries = 1000;
  options.server.retry.backoff_base = 100ms;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_TRUE(EndedByDeadline(result))
      << engine::FinishReasonName(result.finish_reason) << ": " << result.error;
  EXPECT_LT(result.retries, 1000);
  EXPECT_GE(stub_.ChatRequests(), 1);
  ASSERT_TRUE(
      WaitForStats(*generator, [](const RemoteGeneratorStats& s) { return s.failed == 1; }));
}

// The request's own engine deadline wins when it is sooner than options.deadline, also in the
// middle of an attempt.
TEST_F(RemoteGeneratorTest, RequestDeadlineSoonerThanTheOptionsWins) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "sleep": 30}])")) << kStubDidNotStart;
  auto generator = Make(Options());  // deadline 30 s, request_timeout 10 s
  ASSERT_NE(generator, nullptr);
  engine::Request request = CropRequest("x");
  request.deadline = engine::Clock::now() + 400ms;
  engine::GenerationResult result = Generate(*generator, std::move(request));
  EXPECT_TRUE(EndedByDeadline(result))
      << engine::FinishReasonName(result.finish_reason) << ": " << result.error;
  EXPECT_EQ(stub_.ChatRequests(), 1);
}

}  // namespace
}  // namespace mineru::pipeline::testing
