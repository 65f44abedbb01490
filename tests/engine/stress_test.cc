// SPDX-License-Identifier: Apache-2.0
// 10,000 randomized requests from four threads against a small KV cache: random prompt and
// output lengths, images, priorities, sampling, cancels at random moments and deadlines. Every
// request must end exactly once with a consistent result, and the cache must end with zero
// blocks in use.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "../support/scratch.h"
#include "devtools/random_checkpoint.h"
#include "engine/engine.h"
#include "engine_test_util.h"

namespace mineru::engine {
namespace {

constexpr int kRequests = 10000;
constexpr int kProducers = 4;
constexpr int kVocab = 1024;

// The tiny golden shape with a 1,024-token vocabulary (special tokens moved inside it), so
// thousands of requests run in seconds.
std::string WriteSmallModel() {
  Json config = devtools::TinyModelConfig();
  config["vocab_size"] = kVocab;
  config["bos_token_id"] = 1000;
  config["eos_token_id"] = 1001;
  config["vision_start_token_id"] = 1002;
  config["vision_end_token_id"] = 1003;
  config["vision_token_id"] = 1004;
  config["image_token_id"] = 1005;
  config["video_token_id"] = 1006;
  const std::string dir = testing_support::TestDir() + "/model";
  ThreadPool pool(2);
  devtools::RandomCheckpointOptions options;
  options.seed = 5;
  auto status = devtools::WriteRandomCheckpoint(pool, config, dir, options);
  EXPECT_TRUE(status) << status.error().ToString();
  return dir;
}

struct Submitted {
  RequestHandle handle;
  int64_t max_new_tokens = 0;
  bool cancel = false;
};

TEST(EngineStressTest, TenThousandRandomRequestsEndWithZeroBlocksInUse) {
  const std::string dir = WriteSmallModel();
  auto loaded = model::Model::Load(dir);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  std::shared_ptr<const model::Model> model(std::move(*loaded));
  EngineOptions options;
  options.threads = 2;
  options.kv_block_tokens = 16;
  // 48 blocks of 16 tokens: far less than the requests in flight want, so admission waits
  // and running sequences preempt each other.
  options.kv_cache_bytes = 48 * model::KvCache::BlockBytes(model->config().text, 16);
  options.max_running = 24;
  options.max_waiting = 256;
  options.max_batch_tokens = 96;
  options.vision_max_wait = std::chrono::milliseconds(1);
  auto created = Engine::Create(model, dir, options);
  ASSERT_TRUE(created) << created.error().ToString();
  Engine& engine = **created;
  const std::vector<int32_t> stop_ids = engine.default_stop_ids();
  ASSERT_EQ(stop_ids, (std::vector<int32_t>{1001, 1000}));  // eos, then bos as pad

  std::vector<std::vector<Submitted>> submitted(kProducers);
  std::atomic<int> rejected{0};
  auto produce = [&](int producer) {
    std::mt19937_64 rng(1000 + producer);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
    };
    for (int i = producer; i < kRequests; i += kProducers) {
      Request request;
      const int64_t length = uniform(1, 120);
      for (int64_t t = 0; t < length; ++t)
        request.prompt_ids.push_back(static_cast<int32_t>(uniform(0, 999)));
      if (uniform(0, 9) == 0) {  // a 4 x 4 patch image: 4 image tokens after the text
        ImageInput image;
        image.grid = {1, 4, 4};
        image.pixel_values.resize(16 * 1176);
        for (float& v : image.pixel_values) v = static_cast<float>(uniform(-100, 100)) / 50.0f;
        request.prompt_ids.push_back(1002);
        request.prompt_ids.insert(request.prompt_ids.end(), 4, 1005);
        request.prompt_ids.push_back(1003);
        request.images.push_back(std::move(image));
      }
      const int64_t max_new = uniform(1, 40);
      request.max_new_tokens = max_new;
      request.priority = static_cast<int32_t>(uniform(-2, 2));
      if (uniform(0, 3) == 0) {
        request.sampling.temperature = 0.8f;
        request.sampling.top_p = 0.9f;
        request.sampling.seed = static_cast<uint64_t>(i);
      }
      if (uniform(0, 4) == 0)
        request.sampling.no_repeat_ngram_size = static_cast<int32_t>(uniform(1, 4));
      if (uniform(0, 9) == 0) {
        request.deadline = Clock::now() + std::chrono::microseconds(uniform(0, 20000));
      }
      const bool cancel = uniform(0, 9) == 0;
      Result<RequestHandle> handle = engine.Submit(std::move(request));
      while (!handle && handle.error().code == ErrorCode::kResourceExhausted) {
        ++rejected;  // the queue is full: back off and retry, as an HTTP client would on 429
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        Request retry;
        retry.prompt_ids = {static_cast<int32_t>(uniform(0, 999))};
        retry.max_new_tokens = max_new;
        handle = engine.Submit(std::move(retry));
      }
      ASSERT_TRUE(handle) << handle.error().ToString();
      if (cancel) {
        if (uniform(0, 1) == 0) handle->Next();  // after its first token, or before
        handle->Cancel();
      }
      submitted[static_cast<size_t>(producer)].push_back({*handle, max_new, cancel});
    }
  };
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) producers.emplace_back(produce, p);
  for (std::thread& t : producers) t.join();

  int64_t count = 0, by_reason[5] = {};
  for (auto& list : submitted) {
    for (Submitted& s : list) {
      const GenerationResult& result = s.handle.Wait();
      ++count;
      ++by_reason[static_cast<int>(result.finish_reason)];
      ASSERT_NE(result.finish_reason, FinishReason::kError) << result.error;
      ASSERT_LE(static_cast<int64_t>(result.ids.size()), s.max_new_tokens);
      if (result.finish_reason == FinishReason::kLength) {
        ASSERT_EQ(static_cast<int64_t>(result.ids.size()), s.max_new_tokens);
      }
      if (result.finish_reason == FinishReason::kStop) {
        ASSERT_TRUE(result.stop_id && (*result.stop_id == 1001 || *result.stop_id == 1000));
      }
      if (result.finish_reason == FinishReason::kCancelled) {
        ASSERT_TRUE(s.cancel);
      }
      for (int32_t id : result.ids) {
        ASSERT_TRUE(id != 1001 && id != 1000);
      }
    }
  }
  EXPECT_EQ(count, kRequests);
  const EngineStats stats = testing::WaitIdle(engine);
  EXPECT_EQ(stats.kv_blocks_used, 0);
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.waiting, 0);
  int64_t finished = 0;
  for (int64_t n : stats.finished) finished += n;
  EXPECT_EQ(finished, kRequests);
  EXPECT_GT(stats.preemptions, 0);
  EXPECT_GT(by_reason[static_cast<int>(FinishReason::kCancelled)], 0);
  EXPECT_GT(by_reason[static_cast<int>(FinishReason::kLength)], 0);
  RecordProperty("rejected_then_retried", rejected.load());
  RecordProperty("preemptions", static_cast<int>(stats.preemptions));
}

}  // namespace
}  // namespace mineru::engine
