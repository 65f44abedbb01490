// SPDX-License-Identifier: Apache-2.0
// EngineOptions::on_request_finished: fires once per request, whatever its finish reason, with
// the result its handle gets.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "engine/engine.h"
#include "engine_test_util.h"

namespace mineru::engine {
namespace {

using testing::GoldenPrompt;
using testing::GoldenPrompts;
using testing::GreedyRequest;
using testing::LoadGoldenModel;
using testing::WaitIdle;

struct Observed {
  std::mutex mu;
  std::vector<GenerationResult> results;

  std::vector<GenerationResult> WithReason(FinishReason reason) {
    std::lock_guard lock(mu);
    std::vector<GenerationResult> out;
    for (const GenerationResult& r : results) {
      if (r.finish_reason == reason) out.push_back(r);
    }
    return out;
  }
  size_t size() {
    std::lock_guard lock(mu);
    return results.size();
  }
};

void ExpectSameResult(const GenerationResult& seen, const GenerationResult& delivered) {
  EXPECT_EQ(seen.finish_reason, delivered.finish_reason);
  EXPECT_EQ(seen.ids, delivered.ids);
  EXPECT_EQ(seen.error, delivered.error);
  EXPECT_EQ(seen.usage.prompt_tokens, delivered.usage.prompt_tokens);
  EXPECT_EQ(seen.usage.image_tokens, delivered.usage.image_tokens);
  EXPECT_EQ(seen.usage.completion_tokens, delivered.usage.completion_tokens);
  EXPECT_EQ(seen.timings.total, delivered.timings.total);
}

TEST(EngineObserverTest, FiresOncePerRequestWithTheDeliveredResult) {
  Observed observed;  // outlives the engine: the shutdown path calls the observer too
  EngineOptions options;
  options.threads = 2;
  options.kv_cache_bytes = int64_t{64} << 20;
  options.kv_block_tokens = 16;
  options.vision_max_wait = std::chrono::milliseconds(1);
  options.max_running = 1;  // the last request below is still waiting at shutdown
  options.on_request_finished = [&observed](const GenerationResult& result) {
    std::lock_guard lock(observed.mu);
    observed.results.push_back(result);
  };
  auto created = Engine::Create(LoadGoldenModel(), testing::kGoldenModel, options);
  ASSERT_TRUE(created) << created.error().ToString();
  std::unique_ptr<Engine> engine = std::move(*created);
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];

  auto finished = engine->Submit(GreedyRequest(p, 4));
  ASSERT_TRUE(finished);
  const GenerationResult length = finished->Wait();
  ASSERT_EQ(length.finish_reason, FinishReason::kLength);

  auto cancelled = engine->Submit(GreedyRequest(p, 100000));
  ASSERT_TRUE(cancelled);
  ASSERT_TRUE(cancelled->Next());  // decoding
  cancelled->Cancel();
  const GenerationResult cancel = cancelled->Wait();
  ASSERT_EQ(cancel.finish_reason, FinishReason::kCancelled);

  Request late = GreedyRequest(p, 4);
  late.deadline = Clock::now() - std::chrono::milliseconds(1);
  auto expired = engine->Submit(std::move(late));
  ASSERT_TRUE(expired);
  const GenerationResult deadline = expired->Wait();
  ASSERT_EQ(deadline.finish_reason, FinishReason::kDeadline);
  WaitIdle(*engine);

  // The observer ran before each result was delivered, so it has seen all three by now.
  EXPECT_EQ(observed.size(), 3u);
  for (auto [reason, delivered] :
       {std::pair{FinishReason::kLength, &length}, std::pair{FinishReason::kCancelled, &cancel},
        std::pair{FinishReason::kDeadline, &deadline}}) {
    std::vector<GenerationResult> seen = observed.WithReason(reason);
    ASSERT_EQ(seen.size(), 1u) << FinishReasonName(reason);
    ExpectSameResult(seen[0], *delivered);
  }
  EXPECT_EQ(observed.WithReason(FinishReason::kLength)[0].usage.completion_tokens, 4);

  // Requests still held at shutdown end with kError, and are observed too.
  auto running = engine->Submit(GreedyRequest(p, 100000));
  auto waiting = engine->Submit(GreedyRequest(p, 100000));
  ASSERT_TRUE(running && waiting);
  ASSERT_TRUE(running->Next());
  engine.reset();
  const GenerationResult shut_running = running->Wait();
  const GenerationResult shut_waiting = waiting->Wait();
  EXPECT_EQ(shut_running.finish_reason, FinishReason::kError);
  EXPECT_EQ(shut_waiting.finish_reason, FinishReason::kError);
  std::vector<GenerationResult> errors = observed.WithReason(FinishReason::kError);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(observed.size(), 5u);
  // Told apart by what they generated: the waiting one never ran.
  const GenerationResult& seen_waiting = errors[0].ids.empty() ? errors[0] : errors[1];
  const GenerationResult& seen_running = errors[0].ids.empty() ? errors[1] : errors[0];
  ExpectSameResult(seen_waiting, shut_waiting);
  ExpectSameResult(seen_running, shut_running);
}

}  // namespace
}  // namespace mineru::engine
