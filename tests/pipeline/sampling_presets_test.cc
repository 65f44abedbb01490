// SPDX-License-Identifier: Apache-2.0
// MinerU's sampling presets (pipeline/sampling_presets.h) against docs/MINERU.md table 2.5, and
// one of them through the engine's sampler.
#include "pipeline/sampling_presets.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/sampling.h"

namespace mineru::pipeline {
namespace {

TEST(SamplingPresetsTest, MineruPresetsMatchSpecTable) {
  struct Row {
    engine::SamplingParams params;
    float presence;
    float frequency;
  };
  const std::vector<Row> rows = {
      {MineruLayoutSampling(), 0.0f, 0.0f},
      {MineruTableSampling(), 1.0f, 0.005f},
      {MineruEquationSampling(), 1.0f, 0.05f},
      {MineruDefaultSampling(), 1.0f, 0.05f},
  };
  for (const Row& row : rows) {
    const engine::SamplingParams& p = row.params;
    EXPECT_TRUE(p.Validate().has_value());
    EXPECT_EQ(p.temperature, 0.0f);
    EXPECT_EQ(p.top_p, 0.01f);
    EXPECT_EQ(p.top_k, 1);
    EXPECT_EQ(p.presence_penalty, row.presence);
    EXPECT_EQ(p.frequency_penalty, row.frequency);
    EXPECT_EQ(p.repetition_penalty, 1.0f);
    EXPECT_EQ(p.no_repeat_ngram_size, 100);
    EXPECT_FALSE(p.seed.has_value());
    EXPECT_TRUE(p.greedy());
  }
}

TEST(SamplingPresetsTest, MineruDefaultPresetEndToEnd) {
  // Greedy with presence 1.0 and frequency 0.05: token 1 leads by 1.12 until its penalty
  // 1.0 + 0.05 * count passes that lead.
  engine::Sampler sampler(MineruDefaultSampling(), {}, 3);
  const std::vector<float> logits = {0.0f, 1.12f, 0.0f};
  std::vector<int32_t> tokens;
  for (int i = 0; i < 4; ++i) {
    std::vector<float> row = logits;
    const int32_t token = sampler.Next(row);
    sampler.Accept(token);
    tokens.push_back(token);
  }
  // 1 (1.12), then 1 (1.12 - 1.05 = 0.07 > 0), then 1 (1.12 - 1.1 = 0.02 > 0), then 0
  // (1.12 - 1.15 < 0; tie of 0 and 2 goes to 0).
  EXPECT_EQ(tokens, (std::vector<int32_t>{1, 1, 1, 0}));
}

}  // namespace
}  // namespace mineru::pipeline
