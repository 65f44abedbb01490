// SPDX-License-Identifier: Apache-2.0
// Batch invariance: a request's greedy tokens and the logits they came from are the same
// whether it runs alone or among up to 32 others of different lengths, with and without
// images, that join and leave at different steps and split its prompt into different prefill
// chunks.
//
// Why exact equality is the right assertion: every decoder kernel computes a row from that row
// alone, in an order fixed by the shapes of the model (packed matrix products sum each output
// over fixed depth blocks whatever the number of rows; attention visits a sequence's keys in
// block order whatever the query tiling; element-wise kernels treat every element alike), so
// batching changes no rounding. A kernel that broke this would show here as a logit off by an
// ulp long before it changed a token. The bf16 products (ops/bf16_matmul.h) keep the same
// property, and so do the int8 products (ops/q8_matrix.h): the test runs for each precision and
// weight format.
#include <gtest/gtest.h>

#include <random>

#include "engine_test_util.h"

namespace mineru::engine {
namespace {

using testing::GoldenPrompts;
using testing::LoadGoldenModel;

struct Spec {
  std::vector<int32_t> ids;
  std::vector<ImageInput> images;
  int64_t tokens = 0;
};

std::vector<Spec> MakeSpecs(int count) {
  std::vector<Spec> specs;
  std::vector<testing::GoldenPrompt> golden;
  for (const char* name : {"single_doc", "single_odd"}) {
    for (auto& p : GoldenPrompts(name)) golden.push_back(std::move(p));
  }
  std::mt19937 rng(20261130);
  for (int i = 0; i < count; ++i) {
    Spec spec;
    if (i % 4 == 1) {  // an image prompt
      const testing::GoldenPrompt& p = golden[static_cast<size_t>(i / 4) % golden.size()];
      spec.ids = p.ids;
      spec.images = p.images;
    } else {  // text of 1 to 300 ordinary tokens
      const int length = 1 + static_cast<int>(rng() % 300);
      for (int t = 0; t < length; ++t) spec.ids.push_back(static_cast<int32_t>(rng() % 150000));
    }
    spec.tokens = 1 + static_cast<int64_t>(rng() % 8);
    specs.push_back(std::move(spec));
  }
  return specs;
}

Request ToRequest(const Spec& spec) {
  Request request;
  request.prompt_ids = spec.ids;
  request.images = spec.images;
  request.max_new_tokens = spec.tokens;
  request.stop_ids = std::vector<int32_t>{};
  request.keep_logits = true;
  return request;
}

using Mode = std::pair<model::Precision, model::WeightFormat>;

std::unique_ptr<Engine> MakeEngine(int64_t max_batch_tokens, Mode mode) {
  EngineOptions options;
  options.threads = 2;
  options.kv_cache_bytes = int64_t{64} << 20;
  options.kv_block_tokens = 16;
  options.max_batch_tokens = max_batch_tokens;
  options.vision_max_wait = std::chrono::milliseconds(1);
  auto engine =
      Engine::Create(LoadGoldenModel(mode.first, mode.second), testing::kGoldenModel, options);
  EXPECT_TRUE(engine) << engine.error().ToString();
  return std::move(*engine);
}

class BatchInvarianceTest : public ::testing::TestWithParam<Mode> {};

TEST_P(BatchInvarianceTest, TokensAndLogitsEqualAloneAndAmongOthers) {
  const Mode mode = GetParam();
  const std::vector<Spec> specs = MakeSpecs(33);
  // Together: waves join while earlier ones decode; small iterations split long prompts into
  // chunks that share passes with other requests' decode rows.
  std::vector<GenerationResult> together(specs.size());
  {
    auto engine = MakeEngine(/*max_batch_tokens=*/48, mode);
    std::vector<RequestHandle> handles;
    const size_t waves[] = {1, 2, 6, 33};
    size_t next = 0;
    for (size_t wave_end : waves) {
      for (; next < wave_end; ++next) {
        auto handle = engine->Submit(ToRequest(specs[next]));
        ASSERT_TRUE(handle) << handle.error().ToString();
        handles.push_back(*handle);
      }
      handles.front().Next();  // let a step or more pass before the next wave joins
    }
    for (size_t i = 0; i < specs.size(); ++i) together[i] = handles[i].Wait();
    EXPECT_GT(engine->Stats().iterations, 10);
  }
  // Alone, one request at a time, whole prompts in one pass.
  auto engine = MakeEngine(/*max_batch_tokens=*/512, mode);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i) + " of " + std::to_string(specs[i].ids.size()) +
                 " tokens" + (specs[i].images.empty() ? "" : " with an image"));
    auto handle = engine->Submit(ToRequest(specs[i]));
    ASSERT_TRUE(handle);
    const GenerationResult& alone = handle->Wait();
    ASSERT_EQ(alone.finish_reason, FinishReason::kLength) << alone.error;
    ASSERT_EQ(together[i].finish_reason, FinishReason::kLength) << together[i].error;
    EXPECT_EQ(together[i].ids, alone.ids);
    ASSERT_EQ(together[i].logits.size(), alone.logits.size());
    for (size_t s = 0; s < alone.logits.size(); ++s) {
      EXPECT_TRUE(together[i].logits[s] == alone.logits[s]) << "logits of step " << s << " differ";
    }
    together[i] = {};  // free the logits as we go
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, BatchInvarianceTest,
    ::testing::Values(Mode{model::Precision::kFp32, model::WeightFormat::kBf16},
                      Mode{model::Precision::kBf16, model::WeightFormat::kBf16},
                      Mode{model::Precision::kFp32, model::WeightFormat::kInt8},
                      Mode{model::Precision::kBf16, model::WeightFormat::kInt8}),
    [](const ::testing::TestParamInfo<Mode>& info) {
      return std::string(model::PrecisionName(info.param.first)) + "_" +
             std::string(model::WeightFormatName(info.param.second));
    });

}  // namespace
}  // namespace mineru::engine
