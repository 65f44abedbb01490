// SPDX-License-Identifier: Apache-2.0
#include "model/greedy.h"

#include <algorithm>

#include "ops/elementwise.h"

namespace mineru::model {

Result<std::vector<GreedyRequest>> RequestsFromPaddedBatch(std::span<const int64_t> ids,
                                                           std::span<const int64_t> mask,
                                                           int64_t batch, int64_t length,
                                                           std::span<const ImageGrid> grids,
                                                           const ModelConfig& config) {
  if (batch <= 0 || length <= 0 || static_cast<int64_t>(ids.size()) != batch * length ||
      static_cast<int64_t>(mask.size()) != batch * length) {
    return Fail(ErrorCode::kInvalidArgument,
                "input ids ({} values) and attention mask ({} values) must both be [{}, {}]",
                ids.size(), mask.size(), batch, length);
  }
  std::vector<GreedyRequest> requests(static_cast<size_t>(batch));
  size_t next_grid = 0;
  for (int64_t b = 0; b < batch; ++b) {
    GreedyRequest& request = requests[static_cast<size_t>(b)];
    for (int64_t i = 0; i < length; ++i) {
      const int64_t m = mask[static_cast<size_t>(b * length + i)];
      const int64_t id = ids[static_cast<size_t>(b * length + i)];
      if (m != 0 && m != 1) {
        return Fail(ErrorCode::kInvalidArgument, "attention mask [{}, {}] is {}, not 0 or 1", b, i,
                    m);
      }
      if (m == 0) continue;
      if (id < 0 || id >= config.text.vocab_size) {
        return Fail(ErrorCode::kInvalidArgument, "token id {} at [{}, {}] is outside [0, {})", id,
                    b, i, config.text.vocab_size);
      }
      request.ids.push_back(static_cast<int32_t>(id));
    }
    for (size_t i = 0; i + 1 < request.ids.size(); ++i) {
      if (request.ids[i] == config.vision_start_token_id &&
          request.ids[i + 1] == config.image_token_id) {
        if (next_grid == grids.size()) {
          return Fail(ErrorCode::kInvalidArgument,
                      "the prompts hold more images than the {} grids given", grids.size());
        }
        request.grids.push_back(grids[next_grid++]);
      }
    }
  }
  if (next_grid != grids.size()) {
    return Fail(ErrorCode::kInvalidArgument, "{} grids given but the prompts hold {} images",
                grids.size(), next_grid);
  }
  return requests;
}

Result<GreedyResult> RunGreedy(const Model& model, ThreadPool& pool,
                               std::span<const float> pixel_values,
                               std::span<const GreedyRequest> requests,
                               const GreedyOptions& options) {
  const ModelConfig& config = model.config();
  const int64_t d = config.text.hidden_size, vocab = config.text.vocab_size;
  if (requests.empty()) return Fail(ErrorCode::kInvalidArgument, "no prompts");
  if (options.steps < 0) return Fail(ErrorCode::kInvalidArgument, "negative step count");
  GreedyResult result;
  result.sequences.resize(requests.size());
  std::vector<ImageGrid> all_grids;
  std::vector<int32_t> all_ids;
  for (size_t r = 0; r < requests.size(); ++r) {
    if (requests[r].ids.empty()) return Fail(ErrorCode::kInvalidArgument, "prompt {} is empty", r);
    auto positions = ComputeRopePositions(requests[r].ids, requests[r].grids, config);
    if (!positions)
      return tl::unexpected(WithContext(positions.error(), fmt::format("prompt {}", r)));
    result.sequences[r].positions = std::move(*positions);
    all_grids.insert(all_grids.end(), requests[r].grids.begin(), requests[r].grids.end());
    all_ids.insert(all_ids.end(), requests[r].ids.begin(), requests[r].ids.end());
  }

  // Embed every prompt token, then overwrite the image tokens with the vision rows in order.
  const auto total = static_cast<int64_t>(all_ids.size());
  std::vector<float> x(static_cast<size_t>(total * d));
  MINERU_RETURN_IF_ERROR(model.decoder().Embed(pool, all_ids, x.data()));
  if (!all_grids.empty()) {
    MINERU_ASSIGN_OR_RETURN(result.vision,
                            model.vision().Encode(pool, pixel_values, all_grids, options.trace));
    int64_t next_row = 0;
    for (int64_t i = 0; i < total; ++i) {
      if (all_ids[static_cast<size_t>(i)] != config.image_token_id) continue;
      std::copy_n(result.vision.data() + next_row * d, d, x.data() + i * d);
      ++next_row;
    }
  } else if (!pixel_values.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "pixel values given but no image grids");
  }
  Trace(options.trace, "decoder.input", x.data(), total, d);

  // Every sequence runs to the end, so each gets its whole block table up front: consecutive
  // blocks of one cache sized to hold them all.
  std::vector<std::vector<int32_t>> tables(requests.size());
  int32_t blocks = 0;
  for (size_t r = 0; r < requests.size(); ++r) {
    const int64_t tokens = static_cast<int64_t>(requests[r].ids.size()) + options.steps;
    const int64_t n = (tokens + options.kv_block_tokens - 1) / options.kv_block_tokens;
    for (int64_t b = 0; b < n; ++b) tables[r].push_back(blocks++);
  }
  KvCache cache = model.NewKvCache(options.kv_block_tokens, blocks);
  std::vector<int64_t> length(requests.size(), 0);  // tokens in each sequence's blocks

  // Prefill.
  std::vector<DecoderStep> steps;
  std::vector<std::array<int32_t, 3>> positions;
  std::vector<int64_t> logit_rows;
  int64_t row = 0;
  for (size_t r = 0; r < requests.size(); ++r) {
    const auto n = static_cast<int64_t>(requests[r].ids.size());
    steps.push_back({tables[r], 0, n});
    length[r] = n;
    const auto& p = result.sequences[r].positions.positions;
    positions.insert(positions.end(), p.begin(), p.end());
    if (options.all_logits) {
      for (int64_t i = 0; i < n; ++i) logit_rows.push_back(row + i);
    } else {
      logit_rows.push_back(row + n - 1);
    }
    row += n;
  }
  std::vector<float> logits(logit_rows.size() * static_cast<size_t>(vocab));
  MINERU_RETURN_IF_ERROR(model.decoder().Forward(pool, cache, steps, x.data(), positions,
                                                 logit_rows, logits.data(), options.trace));
  std::vector<const float*> last(requests.size());
  int64_t logit_row = 0;
  for (size_t r = 0; r < requests.size(); ++r) {
    GreedySequence& seq = result.sequences[r];
    const auto n = static_cast<int64_t>(requests[r].ids.size());
    const int64_t rows_here = options.all_logits ? n : 1;
    if (options.all_logits) {
      seq.logits_all.assign(logits.begin() + logit_row * vocab,
                            logits.begin() + (logit_row + n) * vocab);
    }
    last[r] = logits.data() + (logit_row + rows_here - 1) * vocab;
    seq.logits_last.assign(last[r], last[r] + vocab);
    logit_row += rows_here;
  }

  // Decode: each step takes the argmax of every sequence's last logits and feeds it back.
  // `last` points into this buffer, which each decode step replaces.
  std::vector<float> step_logits = std::move(logits);
  std::vector<int32_t> next(requests.size());
  for (int step = 0; step < options.steps; ++step) {
    for (size_t r = 0; r < requests.size(); ++r) {
      next[r] = static_cast<int32_t>(ops::ArgMax(last[r], vocab));
      result.sequences[r].generated.push_back(next[r]);
      if (options.step_logits) {
        result.sequences[r].step_logits.emplace_back(last[r], last[r] + vocab);
      }
    }
    if (step + 1 == options.steps) break;
    std::vector<float> x_step(requests.size() * static_cast<size_t>(d));
    MINERU_RETURN_IF_ERROR(model.decoder().Embed(pool, next, x_step.data()));
    steps.clear();
    positions.clear();
    logit_rows.clear();
    for (size_t r = 0; r < requests.size(); ++r) {
      steps.push_back({tables[r], length[r]++, 1});
      const auto p = static_cast<int32_t>(result.sequences[r].positions.next_position + step);
      positions.push_back({p, p, p});
      logit_rows.push_back(static_cast<int64_t>(r));
    }
    std::vector<float> decode_logits(requests.size() * static_cast<size_t>(vocab));
    MINERU_RETURN_IF_ERROR(model.decoder().Forward(pool, cache, steps, x_step.data(), positions,
                                                   logit_rows, decode_logits.data()));
    step_logits = std::move(decode_logits);
    for (size_t r = 0; r < requests.size(); ++r) last[r] = step_logits.data() + r * vocab;
  }
  return result;
}

}  // namespace mineru::model
