// SPDX-License-Identifier: Apache-2.0
// Greedy generation over a fixed batch of prompts, the way transformers' generate() with
// do_sample=False runs them: one vision pass for all images, one prefill for all prompts, then
// one decode step per token for all sequences together. It is the reference driver behind
// debug-forward and the parity tests (the serving engine schedules requests itself).
#pragma once

#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"
#include "model/positions.h"
#include "model/trace.h"

namespace mineru::model {

struct GreedyRequest {
  std::vector<int32_t> ids;      // the prompt, unpadded
  std::vector<ImageGrid> grids;  // its images, in prompt order
};

struct GreedyOptions {
  int steps = 16;            // tokens to generate per sequence (no stop on EOS)
  bool all_logits = false;   // keep the prompt logits of every position, not just the last
  bool step_logits = false;  // keep the logits each generated token was chosen from
  int64_t kv_block_tokens = 64;
  const TraceFn* trace = nullptr;
};

struct GreedySequence {
  RopePositions positions;
  std::vector<float> logits_last;  // [vocab] at the last prompt position
  std::vector<float> logits_all;   // [prompt length, vocab] with all_logits
  std::vector<int32_t> generated;  // steps tokens, each the argmax (ties: lowest id)
  // With step_logits: [steps][vocab], the logits each generated token was chosen from.
  std::vector<std::vector<float>> step_logits;
};

struct GreedyResult {
  std::vector<float> vision;  // [image tokens of all prompts, hidden]
  std::vector<GreedySequence> sequences;
};

// Splits a padded batch (ids and attention mask, both [batch, length], mask 1 = token) into
// unpadded prompts; each prompt takes the next grids for its images, an image being a
// vision-start token followed by an image token (as transformers counts them).
Result<std::vector<GreedyRequest>> RequestsFromPaddedBatch(std::span<const int64_t> ids,
                                                           std::span<const int64_t> mask,
                                                           int64_t batch, int64_t length,
                                                           std::span<const ImageGrid> grids,
                                                           const ModelConfig& config);

// pixel_values: the patches of every image of every request, request by request, in prompt
// order. Traces the model's names plus "decoder.input" (embeddings after the image splice).
Result<GreedyResult> RunGreedy(const Model& model, ThreadPool& pool,
                               std::span<const float> pixel_values,
                               std::span<const GreedyRequest> requests,
                               const GreedyOptions& options);

}  // namespace mineru::model
