// SPDX-License-Identifier: Apache-2.0
#include "pipeline/sampling_presets.h"

namespace mineru::pipeline {
namespace {

engine::SamplingParams MineruGreedy(float presence, float frequency) {
  engine::SamplingParams p;
  p.temperature = 0.0f;
  p.top_p = 0.01f;
  p.top_k = 1;
  p.presence_penalty = presence;
  p.frequency_penalty = frequency;
  p.repetition_penalty = 1.0f;
  p.no_repeat_ngram_size = 100;
  return p;
}

}  // namespace

engine::SamplingParams MineruLayoutSampling() { return MineruGreedy(0.0f, 0.0f); }
engine::SamplingParams MineruTableSampling() { return MineruGreedy(1.0f, 0.005f); }
engine::SamplingParams MineruEquationSampling() { return MineruGreedy(1.0f, 0.05f); }
engine::SamplingParams MineruDefaultSampling() { return MineruGreedy(1.0f, 0.05f); }

}  // namespace mineru::pipeline
