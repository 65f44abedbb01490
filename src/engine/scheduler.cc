// SPDX-License-Identifier: Apache-2.0
// One iteration of the engine thread: plan (engine/planner.h decides everything into a
// BatchPlan), execute (the model runs exactly what the plan names: a vision pass over its
// images, one decoder pass over its steps' tokens, into its steps' KV blocks) and commit
// (sampling, stop checks, streaming, finishing). Requests the plan ends (cancelled, expired)
// are finished before the passes, so their results do not wait for compute.
//
// Invariants between iterations:
//   - every live sequence is in the planner's waiting or running list, and the other way round;
//   - a decoding sequence has emitted output.back(), which is not yet in its KV cache;
//   - blocks in use = the sum of running sequences' blocks (finished ones released at once).
#include <algorithm>

#include "engine/engine_impl.h"
#include "ops/elementwise.h"
#include "text/text_assembler.h"

namespace mineru::engine {

namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

bool Engine::Impl::Iterate() {
  if (options_.before_iteration) options_.before_iteration();
  TakeSubmissions();
  for (auto& [id, seq] : live_) seq->sched.cancelled = seq->state->cancel_requested();
  const int64_t iterations_before = local_.iterations;
  const BatchPlan plan = planner_->Plan(Clock::now());
  SyncQueued();
  for (const BatchPlan::Ended& ended : plan.ended) Finish(Live(ended.id), ended.reason);
  local_.preemptions += static_cast<int64_t>(plan.preempted.size());
  PassResult result = Execute(plan);
  Commit(plan, result);
  RemoveFinished();
  SyncQueued();
  PublishStats();
  // A vision pass or a decoder pass ran (not so when every planned image failed to load).
  return local_.iterations != iterations_before;
}

void Engine::Impl::TakeSubmissions() {
  std::deque<std::unique_ptr<Sequence>> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(inbox_);
  }
  for (auto& seq : taken) {
    local_.prompt_tokens += static_cast<int64_t>(seq->prompt.size());
    planner_->Add(&seq->sched);
    const uint64_t id = seq->sched.id;
    live_.emplace(id, std::move(seq));
  }
}

void Engine::Impl::SyncQueued() {
  std::lock_guard lock(mutex_);
  queued_ = static_cast<int64_t>(inbox_.size() + planner_->waiting().size());
}

PassResult Engine::Impl::Execute(const BatchPlan& plan) {
  PassResult result;
  if (!plan.vision.empty()) RunVision(plan, result);
  RunDecoder(plan, result);
  return result;
}

void Engine::Impl::RunVision(const BatchPlan& plan, PassResult& result) {
  const model::ModelConfig& config = model_->config();
  const Clock::time_point start = Clock::now();
  // Pixel values of every image in order; RGB images are preprocessed here, on the pool.
  const int64_t patch_dim = config.vision.in_channels * config.vision.temporal_patch_size *
                            config.vision.patch_size * config.vision.patch_size;
  int64_t patches = 0;
  for (uint64_t id : plan.vision) patches += Live(id)->sched.patches;
  std::vector<float> pixels;
  pixels.reserve(static_cast<size_t>(patches * patch_dim));
  std::vector<model::ImageGrid> grids;
  std::vector<Sequence*> encoded;
  for (uint64_t id : plan.vision) {
    Sequence* seq = Live(id);
    const size_t before = pixels.size();
    std::string error;
    for (ImageInput& image : seq->images) {
      if (image.rgb) {
        auto values = image::PreprocessImage(*image.rgb, *processor_, pool_.get());
        if (!values) {
          error = values.error().ToString();
          break;
        }
        pixels.insert(pixels.end(), values->values.begin(), values->values.end());
      } else {
        pixels.insert(pixels.end(), image.pixel_values.begin(), image.pixel_values.end());
      }
    }
    if (!error.empty()) {
      pixels.resize(before);
      result.vision_failed.emplace_back(seq, std::move(error));
      continue;
    }
    grids.insert(grids.end(), seq->grids.begin(), seq->grids.end());
    encoded.push_back(seq);
    // Copied into the pass's pixels: freed now, not after the pass (the sequence fails as a
    // whole if the pass does, so nothing would read them again).
    seq->images.clear();
    seq->images.shrink_to_fit();
  }
  if (encoded.empty()) return;
  // Encode frees the pixels once the patch embedding has read them.
  auto rows = model_->vision().Encode(*pool_, std::move(pixels), grids);
  const double seconds = Seconds(Clock::now() - start);
  const int64_t d = config.text.hidden_size;
  int64_t offset = 0;
  for (Sequence* seq : encoded) {
    if (!rows) {
      result.vision_failed.emplace_back(seq, rows.error().ToString());
      continue;
    }
    seq->vision.assign(rows->begin() + offset * d,
                       rows->begin() + (offset + seq->image_tokens) * d);
    offset += seq->image_tokens;
    seq->vision_seconds += seconds;
    seq->vision_done = Clock::now();
  }
  ++local_.vision_passes;
  local_.vision_images += static_cast<int64_t>(grids.size());
  ++local_.iterations;
}

void Engine::Impl::RunDecoder(const BatchPlan& plan, PassResult& result) {
  const model::ModelConfig& config = model_->config();
  const int64_t d = config.text.hidden_size, vocab = config.text.vocab_size;
  // A sequence whose images failed does not run: its steps drop out of the pass.
  result.step_seqs.reserve(plan.steps.size());
  for (const BatchPlan::Step& step : plan.steps) {
    Sequence* seq = Live(step.id);
    const bool failed = std::any_of(result.vision_failed.begin(), result.vision_failed.end(),
                                    [&](const auto& failure) { return failure.first == seq; });
    result.step_seqs.push_back(failed ? nullptr : seq);
  }
  // Inputs: ids (decode: the pending token; prefill: the chunk), positions, logit rows.
  std::vector<int32_t> ids;
  std::vector<std::array<int32_t, 3>> positions;
  std::vector<model::DecoderStep> steps;
  std::vector<int64_t> logit_rows;
  ids.reserve(static_cast<size_t>(plan.tokens()));
  positions.reserve(static_cast<size_t>(plan.tokens()));
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const BatchPlan::Step& step = plan.steps[s];
    const Sequence* seq = result.step_seqs[s];
    if (seq == nullptr) continue;
    if (step.decode) {
      ids.push_back(seq->output.back());
      const auto p = static_cast<int32_t>(seq->positions.next_position +
                                          static_cast<int64_t>(seq->output.size()) - 1);
      positions.push_back({p, p, p});
    } else {
      for (int64_t i = step.start; i < step.start + step.num_tokens; ++i) {
        ids.push_back(seq->PrefillId(i));
        positions.push_back(seq->PrefillPosition(i));
      }
    }
    steps.push_back({step.blocks, step.start, step.num_tokens});
    if (step.logits) logit_rows.push_back(static_cast<int64_t>(ids.size()) - 1);
  }
  if (steps.empty()) return;
  const auto rows = static_cast<int64_t>(ids.size());
  std::vector<float> x(static_cast<size_t>(rows * d));
  Status status = model_->decoder().Embed(*pool_, ids, x.data());
  int64_t row = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {  // image tokens take their vision rows
    const BatchPlan::Step& step = plan.steps[s];
    const Sequence* seq = result.step_seqs[s];
    if (seq == nullptr) continue;
    if (!step.decode && !seq->vision.empty()) {
      const auto prompt_n = static_cast<int64_t>(seq->prompt.size());
      for (int64_t i = step.start; i < step.start + step.num_tokens; ++i) {
        const int32_t v = i < prompt_n ? seq->vision_row_of[static_cast<size_t>(i)] : -1;
        if (v >= 0)
          std::copy_n(seq->vision.data() + int64_t{v} * d, d,
                      x.data() + (row + i - step.start) * d);
      }
    }
    row += step.num_tokens;
  }
  // Kept across iterations: a fresh buffer of up to max_running x vocab floats per step would
  // cost page faults on every step.
  const size_t logit_floats = logit_rows.size() * static_cast<size_t>(vocab);
  if (logits_.size() < logit_floats) logits_.resize(logit_floats);
  if (status) {
    status = model_->decoder().Forward(*pool_, *cache_, steps, x.data(), positions, logit_rows,
                                       logits_.data());
  }
  ++local_.iterations;
  result.decoder_ran = true;
  result.decoder = std::move(status);
}

void Engine::Impl::Commit(const BatchPlan& plan, PassResult& result) {
  const int64_t vocab = model_->config().text.vocab_size;
  for (auto& [seq, error] : result.vision_failed) Finish(seq, FinishReason::kError, error);
  if (!result.decoder_ran) return;
  if (!result.decoder) {
    for (Sequence* seq : result.step_seqs) {
      if (seq != nullptr) Finish(seq, FinishReason::kError, result.decoder.error().ToString());
    }
    return;
  }

  // Rows whose sequences take a token now; their samplers run in parallel (each touches only
  // its own sequence's state and per-thread scratch), then tokens are streamed in order.
  struct Pick {
    Sequence* seq;
    float* logits;
    int32_t token;
  };
  std::vector<Pick> picks;
  size_t logit_index = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    Sequence* seq = result.step_seqs[s];
    if (seq == nullptr) continue;
    if (!planner_->Advance(&seq->sched, plan.steps[s])) continue;
    picks.push_back({seq, logits_.data() + logit_index++ * static_cast<size_t>(vocab), 0});
  }
  pool_->ParallelFor(picks.size(), [&](size_t i, int) {
    Pick& pick = picks[i];
    if (pick.seq->keep_logits) pick.seq->logits.emplace_back(pick.logits, pick.logits + vocab);
    pick.token = pick.seq->sampler->Next(std::span<float>(pick.logits, static_cast<size_t>(vocab)));
  });
  const Clock::time_point now = Clock::now();
  for (const Pick& pick : picks) {
    Sequence& seq = *pick.seq;
    const int32_t token = pick.token;
    seq.sampler->Accept(token);
    ++local_.generated_tokens;
    if (seq.output.empty() && seq.first_token == Clock::time_point{}) seq.first_token = now;
    if (std::find(seq.stop_ids.begin(), seq.stop_ids.end(), token) != seq.stop_ids.end()) {
      Finish(&seq, FinishReason::kStop, {});
      continue;
    }
    seq.output.push_back(token);
    ++seq.sched.output_tokens;
    seq.state->Emit(token);
    const auto produced = static_cast<int64_t>(seq.output.size());
    if (produced >= seq.max_new_tokens) Finish(&seq, FinishReason::kLength);
  }
}

void Engine::Impl::Finish(Sequence* seq, FinishReason reason, std::string error) {
  if (std::find(finished_.begin(), finished_.end(), seq) != finished_.end()) return;
  planner_->Remove(&seq->sched);
  const Clock::time_point now = Clock::now();
  GenerationResult result;
  result.finish_reason = reason;
  result.error = std::move(error);
  result.ids = seq->output;
  if (tokenizer_ && seq->decode_text) {
    result.text = text::DecodeGenerated(*tokenizer_, result.ids, /*skip_special=*/false);
  }
  result.usage.prompt_tokens = static_cast<int64_t>(seq->prompt.size());
  result.usage.image_tokens = seq->image_tokens;
  result.usage.completion_tokens =
      static_cast<int64_t>(seq->output.size()) + (reason == FinishReason::kStop ? 1 : 0);
  if (reason == FinishReason::kStop) result.stop_id = seq->sampler->output().back();
  result.usage.recomputed_tokens = seq->sched.recomputed;
  Timings& t = result.timings;
  const Clock::time_point admitted_at = seq->sched.admitted;
  const bool admitted = admitted_at != Clock::time_point{};
  const bool first = seq->first_token != Clock::time_point{};
  t.queued = Seconds((admitted ? admitted_at : now) - seq->submitted);
  t.vision = seq->vision_seconds;
  if (first) {
    const Clock::time_point prefill_start =
        seq->vision_done != Clock::time_point{} ? seq->vision_done : admitted_at;
    t.prefill = Seconds(seq->first_token - prefill_start);
    t.decode = Seconds(now - seq->first_token);
    t.time_to_first_token = Seconds(seq->first_token - seq->submitted);
  }
  t.total = Seconds(now - seq->submitted);
  result.logits = std::move(seq->logits);
  ++local_.finished[static_cast<int>(reason)];
  finished_.push_back(seq);
  if (options_.on_request_finished) {
    try {
      options_.on_request_finished(result);
    } catch (...) {
      // An observer must not take the engine thread down; the request still finishes.
    }
  }
  seq->state->Finish(std::move(result));
}

void Engine::Impl::RemoveFinished() {
  for (Sequence* seq : finished_) live_.erase(seq->sched.id);
  finished_.clear();
}

void Engine::Impl::PublishStats() {
  local_.waiting = static_cast<int64_t>(planner_->waiting().size());
  local_.running = static_cast<int64_t>(planner_->running().size());
  local_.kv_blocks_used = planner_->blocks().used_blocks();
  std::lock_guard lock(mutex_);
  const int64_t submitted = stats_.submitted, rejected = stats_.rejected;
  local_.waiting += static_cast<int64_t>(inbox_.size());
  stats_ = local_;
  stats_.submitted = submitted;
  stats_.rejected = rejected;
}

}  // namespace mineru::engine
