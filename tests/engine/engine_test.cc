// SPDX-License-Identifier: Apache-2.0
// The engine on the golden tiny checkpoint: transformers' greedy ids through the scheduler,
// stop ids, limits, cancellation, deadlines, priorities, streaming and request validation.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "engine_test_util.h"

namespace mineru::engine {
namespace {

using testing::GoldenPrompt;
using testing::GoldenPrompts;
using testing::GreedyRequest;
using testing::LoadGoldenModel;
using testing::WaitIdle;

EngineOptions SmallOptions() {
  EngineOptions options;
  options.threads = 2;
  options.kv_cache_bytes = int64_t{64} << 20;
  options.kv_block_tokens = 16;
  options.vision_max_wait = std::chrono::milliseconds(1);
  return options;
}

std::unique_ptr<Engine> MakeEngine(const EngineOptions& options = SmallOptions()) {
  auto engine = Engine::Create(LoadGoldenModel(), testing::kGoldenModel, options);
  EXPECT_TRUE(engine) << engine.error().ToString();
  return std::move(*engine);
}

TEST(EngineTest, GoldenGreedyIdsWithImages) {
  auto engine = MakeEngine();
  std::vector<RequestHandle> handles;
  std::vector<GoldenPrompt> prompts;
  for (const char* name : {"single_doc", "single_odd", "batch_doc_odd"}) {
    for (GoldenPrompt& p : GoldenPrompts(name)) prompts.push_back(std::move(p));
  }
  for (const GoldenPrompt& p : prompts) {
    auto handle = engine->Submit(GreedyRequest(p, 16));
    ASSERT_TRUE(handle) << handle.error().ToString();
    handles.push_back(*handle);
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    const GenerationResult& result = handles[i].Wait();
    EXPECT_EQ(result.finish_reason, FinishReason::kLength) << result.error;
    EXPECT_EQ(result.ids, prompts[i].expected) << "prompt " << i;
    EXPECT_EQ(result.usage.prompt_tokens, static_cast<int64_t>(prompts[i].ids.size()));
    EXPECT_EQ(result.usage.completion_tokens, 16);
    EXPECT_GT(result.usage.image_tokens, 0);
    EXPECT_GE(result.timings.total, result.timings.time_to_first_token);
    EXPECT_GT(result.timings.vision, 0);
  }
  const EngineStats stats = WaitIdle(*engine);
  EXPECT_EQ(stats.kv_blocks_used, 0);
  EXPECT_EQ(stats.finished[static_cast<int>(FinishReason::kLength)], 4);
  EXPECT_EQ(stats.vision_images, 4);
}

TEST(EngineTest, StopIdEndsGenerationAndIsNotOutput) {
  auto engine = MakeEngine();
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];
  // The 6th greedy token (54055) as a stop id: five tokens come out, the stop ends it.
  Request request = GreedyRequest(p, 16);
  request.stop_ids = std::vector<int32_t>{p.expected[5], 7};
  auto handle = engine->Submit(std::move(request));
  ASSERT_TRUE(handle);
  const GenerationResult& result = handle->Wait();
  EXPECT_EQ(result.finish_reason, FinishReason::kStop);
  EXPECT_EQ(result.ids, std::vector<int32_t>(p.expected.begin(), p.expected.begin() + 5));
  ASSERT_TRUE(result.stop_id);
  EXPECT_EQ(*result.stop_id, p.expected[5]);
  EXPECT_EQ(result.usage.completion_tokens, 6);
}

TEST(EngineTest, DefaultStopIdsComeFromGenerationConfig) {
  auto engine = MakeEngine();
  EXPECT_EQ(engine->default_stop_ids(), (std::vector<int32_t>{151645, 151643}));
}

TEST(EngineTest, MaxNewTokensGivesLengthAndDefaultIsRemainingContext) {
  EngineOptions options = SmallOptions();
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];
  options.max_context = static_cast<int64_t>(p.ids.size()) + 3;
  auto engine = MakeEngine(options);
  Request request = GreedyRequest(p, 16);
  request.max_new_tokens.reset();  // the remaining context: 3 tokens
  auto handle = engine->Submit(std::move(request));
  ASSERT_TRUE(handle);
  const GenerationResult& result = handle->Wait();
  EXPECT_EQ(result.finish_reason, FinishReason::kLength);
  EXPECT_EQ(result.ids, std::vector<int32_t>(p.expected.begin(), p.expected.begin() + 3));
}

TEST(EngineTest, StreamDeliversEveryTokenInOrder) {
  auto engine = MakeEngine();
  const GoldenPrompt p = GoldenPrompts("single_odd")[0];
  std::mutex mutex;
  std::vector<int32_t> callback_tokens;
  int finished_events = 0;
  Request request = GreedyRequest(p, 16);
  request.on_token = [&](const TokenEvent& event) {
    std::lock_guard lock(mutex);
    if (event.token) callback_tokens.push_back(*event.token);
    if (event.finished) ++finished_events;
  };
  auto handle = engine->Submit(std::move(request));
  ASSERT_TRUE(handle);
  std::vector<int32_t> pulled;
  while (auto tokens = handle->Next()) pulled.insert(pulled.end(), tokens->begin(), tokens->end());
  EXPECT_EQ(pulled, p.expected);
  handle->Wait();
  std::lock_guard lock(mutex);
  EXPECT_EQ(callback_tokens, p.expected);
  EXPECT_EQ(finished_events, 1);
}

TEST(EngineTest, CancelEndsRequestAndFreesBlocks) {
  auto engine = MakeEngine();
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];
  auto handle = engine->Submit(GreedyRequest(p, 100000));
  ASSERT_TRUE(handle);
  auto first = handle->Next();  // generation is under way
  ASSERT_TRUE(first);
  handle->Cancel();
  const GenerationResult& result = handle->Wait();
  EXPECT_EQ(result.finish_reason, FinishReason::kCancelled);
  EXPECT_GE(result.ids.size(), 1u);
  EXPECT_EQ(WaitIdle(*engine).kv_blocks_used, 0);
}

TEST(EngineTest, DeadlineEndsRequest) {
  auto engine = MakeEngine();
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];
  Request request = GreedyRequest(p, 1000000);
  request.deadline = Clock::now() + std::chrono::milliseconds(200);
  auto handle = engine->Submit(std::move(request));
  ASSERT_TRUE(handle);
  const GenerationResult& result = handle->Wait();
  EXPECT_EQ(result.finish_reason, FinishReason::kDeadline);
  Request late = GreedyRequest(p, 4);
  late.deadline = Clock::now() - std::chrono::milliseconds(1);
  auto expired = engine->Submit(std::move(late));
  ASSERT_TRUE(expired);
  EXPECT_EQ(expired->Wait().finish_reason, FinishReason::kDeadline);
  EXPECT_TRUE(expired->Wait().ids.empty());
  EXPECT_EQ(WaitIdle(*engine).kv_blocks_used, 0);
}

TEST(EngineTest, FullQueueIsRejectedExplicitly) {
  EngineOptions options = SmallOptions();
  options.max_running = 1;
  options.max_waiting = 2;
  auto engine = MakeEngine(options);
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];
  auto running = engine->Submit(GreedyRequest(p, 100000));
  ASSERT_TRUE(running);
  ASSERT_TRUE(running->Next());  // admitted and decoding: the queue is empty again
  auto second = engine->Submit(GreedyRequest(p, 4));
  auto third = engine->Submit(GreedyRequest(p, 4));
  ASSERT_TRUE(second && third);
  auto fourth = engine->Submit(GreedyRequest(p, 4));
  ASSERT_FALSE(fourth);
  EXPECT_EQ(fourth.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(fourth.error().message.find("max_waiting"), std::string::npos);
  EXPECT_EQ(engine->Stats().rejected, 1);
  running->Cancel();
  EXPECT_EQ(second->Wait().ids, std::vector<int32_t>(p.expected.begin(), p.expected.begin() + 4));
  EXPECT_EQ(third->Wait().finish_reason, FinishReason::kLength);
}

TEST(EngineTest, LowerPriorityValueIsAdmittedFirst) {
  EngineOptions options = SmallOptions();
  options.max_running = 1;
  auto engine = MakeEngine(options);
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];
  auto blocker = engine->Submit(GreedyRequest(p, 100000));
  ASSERT_TRUE(blocker && blocker->Next());
  std::mutex mutex;
  std::vector<int> order;
  auto submit = [&](int priority) {
    Request request = GreedyRequest(p, 2);
    request.priority = priority;
    request.on_token = [&, priority](const TokenEvent& event) {
      std::lock_guard lock(mutex);
      if (event.finished) order.push_back(priority);
    };
    auto handle = engine->Submit(std::move(request));
    EXPECT_TRUE(handle);
    return *handle;
  };
  RequestHandle low = submit(5), high = submit(-1), middle = submit(0);
  blocker->Cancel();
  low.Wait();
  high.Wait();
  middle.Wait();
  std::lock_guard lock(mutex);
  EXPECT_EQ(order, (std::vector<int>{-1, 0, 5}));
}

TEST(EngineTest, PreemptedRequestsRecomputeToTheSameTokens) {
  // 30 blocks of 16 tokens: two image prompts (181 and 243 tokens, 28 blocks) cannot both grow
  // by 64 tokens (36 blocks), so the later one is preempted and recomputed at least once.
  EngineOptions options = SmallOptions();
  const int64_t block_bytes =
      model::KvCache::BlockBytes(LoadGoldenModel()->config().text, options.kv_block_tokens);
  options.kv_cache_bytes = 30 * block_bytes;
  auto engine = MakeEngine(options);
  std::vector<GoldenPrompt> prompts = GoldenPrompts("batch_doc_odd");
  std::vector<RequestHandle> handles;
  for (const GoldenPrompt& p : prompts) {
    auto handle = engine->Submit(GreedyRequest(p, 16 * 4));
    ASSERT_TRUE(handle) << handle.error().ToString();
    handles.push_back(*handle);
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    const GenerationResult& result = handles[i].Wait();
    ASSERT_EQ(result.finish_reason, FinishReason::kLength) << result.error;
    EXPECT_EQ(std::vector<int32_t>(result.ids.begin(), result.ids.begin() + 16),
              prompts[i].expected);
  }
  const EngineStats stats = WaitIdle(*engine);
  EXPECT_GT(stats.preemptions, 0);
  EXPECT_EQ(stats.kv_blocks_used, 0);
}

// Three image requests (616 patches each) submitted together.
EngineStats RunThreeImageRequests(const EngineOptions& options) {
  auto engine = MakeEngine(options);
  const GoldenPrompt p = GoldenPrompts("single_doc")[0];
  std::vector<RequestHandle> handles;
  for (int i = 0; i < 3; ++i) {
    auto handle = engine->Submit(GreedyRequest(p, 2));
    EXPECT_TRUE(handle);
    handles.push_back(*handle);
  }
  for (RequestHandle& h : handles) {
    EXPECT_EQ(h.Wait().ids, std::vector<int32_t>(p.expected.begin(), p.expected.begin() + 2));
  }
  return WaitIdle(*engine);
}

TEST(EngineTest, VisionBatchesHoldAtMostMaxImages) {
  EngineOptions options = SmallOptions();
  options.vision_max_images = 2;
  options.vision_max_wait = std::chrono::milliseconds(100);
  const EngineStats stats = RunThreeImageRequests(options);
  EXPECT_EQ(stats.vision_images, 3);
  EXPECT_EQ(stats.vision_passes, 2);  // two at once, the third after its wait
}

TEST(EngineTest, VisionBatchesHoldAtMostMaxPatches) {
  EngineOptions options = SmallOptions();
  options.vision_max_wait = std::chrono::milliseconds(100);
  options.vision_max_patches = 2 * 616 - 1;  // one image per pass
  EXPECT_EQ(RunThreeImageRequests(options).vision_passes, 3);
  options.vision_max_patches = 3 * 616;  // all three in one pass (after the wait)
  options.vision_max_images = 3;
  EXPECT_EQ(RunThreeImageRequests(options).vision_passes, 1);
}

TEST(EngineTest, InvalidRequestsAreRefusedWithReasons) {
  EngineOptions options = SmallOptions();
  options.max_images_per_request = 1;
  options.max_context = 200;
  auto engine = MakeEngine(options);
  const GoldenPrompt doc = GoldenPrompts("single_doc")[0];  // 181 tokens
  auto expect_refused = [&](Request request, std::string_view words) {
    auto handle = engine->Submit(std::move(request));
    ASSERT_FALSE(handle) << words;
    EXPECT_EQ(handle.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(handle.error().message.find(words), std::string::npos) << handle.error().message;
  };
  expect_refused(Request{}, "exactly one");
  Request both = GreedyRequest(doc, 4);
  both.messages = {{"user", {text::ChatPart::Text("hi")}}};
  expect_refused(std::move(both), "exactly one");
  Request outside = GreedyRequest(doc, 4);
  outside.prompt_ids[3] = 151936;
  expect_refused(std::move(outside), "outside the vocabulary");
  Request wrong_pixels = GreedyRequest(doc, 4);
  wrong_pixels.images[0].pixel_values.pop_back();
  expect_refused(std::move(wrong_pixels), "pixel values");
  Request odd_grid = GreedyRequest(doc, 4);
  odd_grid.images[0].grid.h = 21;
  expect_refused(std::move(odd_grid), "merge size");
  Request two_images = GreedyRequest(doc, 4);
  two_images.images.push_back(two_images.images[0]);
  expect_refused(std::move(two_images), "the limit is 1");
  Request no_images = GreedyRequest(doc, 4);
  no_images.images.clear();
  expect_refused(std::move(no_images), "image");
  Request zero = GreedyRequest(doc, 4);
  zero.max_new_tokens = 0;
  expect_refused(std::move(zero), "max_new_tokens");
  Request hot = GreedyRequest(doc, 4);
  hot.sampling.temperature = -1;
  expect_refused(std::move(hot), "temperature");
  Request long_prompt = GreedyRequest(doc, 4);
  long_prompt.images.clear();
  long_prompt.prompt_ids.assign(200, 872);
  expect_refused(std::move(long_prompt), "context");
  Request chat;
  chat.messages = {{"user", {text::ChatPart::Text("hi")}}};
  expect_refused(std::move(chat), "tokenizer");  // the golden checkpoint has none
  Request bad_stop = GreedyRequest(doc, 4);
  bad_stop.stop_ids = std::vector<int32_t>{-1};
  expect_refused(std::move(bad_stop), "stop id");
  Request bad_bias = GreedyRequest(doc, 4);
  bad_bias.sampling.logit_bias = {{151936, 1.0f}};
  expect_refused(std::move(bad_bias), "logit_bias token 151936 is outside the vocabulary");
  EXPECT_EQ(engine->Stats().rejected, 13);
}

TEST(EngineTest, OptionsAreValidated) {
  auto model = LoadGoldenModel();
  auto expect_invalid = [&](EngineOptions options, std::string_view field) {
    auto engine = Engine::Create(model, testing::kGoldenModel, options);
    ASSERT_FALSE(engine) << field;
    EXPECT_NE(engine.error().message.find(field), std::string::npos) << engine.error().message;
  };
  EngineOptions o = SmallOptions();
  o.kv_block_tokens = 24;
  expect_invalid(o, "kv_block_tokens");
  o = SmallOptions();
  o.kv_cache_bytes = 100;
  expect_invalid(o, "holds no block");
  o = SmallOptions();
  o.max_batch_tokens = 0;
  expect_invalid(o, "max_batch_tokens");
  o = SmallOptions();
  o.max_waiting = 0;
  expect_invalid(o, "max_waiting");
  o = SmallOptions();
  o.vision_max_images = 0;
  expect_invalid(o, "vision_max_images");
}

}  // namespace
}  // namespace mineru::engine
