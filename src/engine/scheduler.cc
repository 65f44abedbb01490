// SPDX-License-Identifier: Apache-2.0
// One scheduling iteration of the engine thread (see engine.h for the steps).
//
// Invariants between iterations:
//   - waiting_ and running_ are sorted by rank (priority, then arrival);
//   - a running sequence holds KV blocks for at least every token it has prefilled, and from
//     admission on, blocks for its whole prefill target (so prefill never waits for memory);
//   - a decoding sequence has emitted output.back(), which is not yet in its KV cache;
//   - blocks in use = the sum of running sequences' blocks (finished ones released at once).
#include <algorithm>

#include "engine/engine_impl.h"
#include "ops/elementwise.h"
#include "text/text_assembler.h"

namespace mineru::engine {

namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

template <class T>
void InsertByRank(std::vector<std::unique_ptr<T>>& list, std::unique_ptr<T> item) {
  auto at = std::upper_bound(list.begin(), list.end(), item,
                             [](const auto& a, const auto& b) { return a->rank() < b->rank(); });
  list.insert(at, std::move(item));
}

}  // namespace

bool Engine::Impl::Iterate() {
  if (options_.before_iteration) options_.before_iteration();
  TakeSubmissions();
  ExpireAndCancel();
  Admit();
  const int64_t iterations_before = local_.iterations;
  if (VisionDue(Clock::now())) RunVision();
  RunBatch();
  RemoveFinished();
  PublishStats();
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
    InsertByRank(waiting_, std::move(seq));
  }
}

void Engine::Impl::ExpireAndCancel() {
  const Clock::time_point now = Clock::now();
  for (auto* list : {&waiting_, &running_}) {
    for (auto& seq : *list) {
      if (seq->state->cancel_requested()) {
        Finish(seq.get(), FinishReason::kCancelled);
      } else if (seq->deadline && now >= *seq->deadline) {
        Finish(seq.get(), FinishReason::kDeadline);
      }
    }
  }
  RemoveFinished();
}

void Engine::Impl::Admit() {
  // Keep about 1% of the blocks free for running sequences to grow into (vLLM's watermark),
  // unless nothing runs.
  const int64_t watermark = running_.empty() ? 0 : cache_->num_blocks() / 100;
  while (!waiting_.empty() && static_cast<int64_t>(running_.size()) < options_.max_running) {
    Sequence& seq = *waiting_.front();
    const int64_t needed =
        (seq.prefill_target + cache_->block_tokens() - 1) / cache_->block_tokens();
    // Strict priority: the head waits for memory rather than be overtaken.
    if (needed > cache_->free_blocks() - watermark) break;
    MINERU_CHECK(cache_->Reserve(seq.kv, seq.prefill_target).has_value(), "reserve after check");
    seq.admitted = Clock::now();
    seq.phase = seq.has_vision_pending() ? Sequence::Phase::kVision : Sequence::Phase::kPrefill;
    InsertByRank(running_, std::move(waiting_.front()));
    waiting_.erase(waiting_.begin());
    std::lock_guard lock(mutex_);
    --queued_;
  }
}

bool Engine::Impl::VisionDue(Clock::time_point now) const {
  int64_t images = 0;
  bool overdue = false;
  for (const auto& seq : running_) {
    if (seq->phase != Sequence::Phase::kVision) continue;
    images += static_cast<int64_t>(seq->grids.size());
    overdue = overdue || now - seq->admitted >= options_.vision_max_wait;
  }
  return images > 0 && (images >= options_.vision_max_images || overdue);
}

void Engine::Impl::RunVision() {
  const model::ModelConfig& config = model_->config();
  std::vector<Sequence*> batch;
  int64_t images = 0, patches = 0;
  for (const auto& seq : running_) {
    if (seq->phase != Sequence::Phase::kVision) continue;
    int64_t seq_patches = 0;
    for (const model::ImageGrid& g : seq->grids) seq_patches += g.patches();
    const auto seq_images = static_cast<int64_t>(seq->grids.size());
    if (!batch.empty() && (images + seq_images > options_.vision_max_images ||
                           patches + seq_patches > options_.vision_max_patches)) {
      break;
    }
    batch.push_back(seq.get());
    images += seq_images;
    patches += seq_patches;
  }
  const Clock::time_point start = Clock::now();
  // Pixel values of every image in order; RGB images are preprocessed here, on the pool.
  const int64_t patch_dim = config.vision.in_channels * config.vision.temporal_patch_size *
                            config.vision.patch_size * config.vision.patch_size;
  std::vector<float> pixels;
  pixels.reserve(static_cast<size_t>(patches * patch_dim));
  std::vector<model::ImageGrid> grids;
  std::vector<Sequence*> encoded;
  for (Sequence* seq : batch) {
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
      Finish(seq, FinishReason::kError, error);
      continue;
    }
    grids.insert(grids.end(), seq->grids.begin(), seq->grids.end());
    encoded.push_back(seq);
  }
  if (!encoded.empty()) {
    auto rows = model_->vision().Encode(*pool_, pixels, grids);
    const double seconds = Seconds(Clock::now() - start);
    const int64_t d = config.text.hidden_size;
    int64_t offset = 0;
    for (Sequence* seq : encoded) {
      if (!rows) {
        Finish(seq, FinishReason::kError, rows.error().ToString());
        continue;
      }
      seq->vision.assign(rows->begin() + offset * d,
                         rows->begin() + (offset + seq->image_tokens) * d);
      offset += seq->image_tokens;
      seq->images.clear();
      seq->images.shrink_to_fit();
      seq->vision_seconds += seconds;
      seq->vision_done = Clock::now();
      seq->phase = Sequence::Phase::kPrefill;
    }
    ++local_.vision_passes;
    local_.vision_images += static_cast<int64_t>(grids.size());
    ++local_.iterations;
  }
  RemoveFinished();
}

void Engine::Impl::Preempt(Sequence* victim) {
  // Recompute preemption: the KV blocks go back to the pool; the sequence later prefills its
  // prompt and every output token but the last again (the last is its pending next input).
  cache_->Release(victim->kv);
  victim->prefilled = 0;
  const auto out = static_cast<int64_t>(victim->output.size());
  victim->prefill_target =
      static_cast<int64_t>(victim->prompt.size()) + std::max<int64_t>(out - 1, 0);
  victim->prefill_needs_logits = out == 0;
  victim->recomputed += victim->prefill_target;
  victim->phase = Sequence::Phase::kWaiting;
  ++local_.preemptions;
  auto it = std::find_if(running_.begin(), running_.end(),
                         [&](const auto& s) { return s.get() == victim; });
  std::unique_ptr<Sequence> owned = std::move(*it);
  running_.erase(it);
  InsertByRank(waiting_, std::move(owned));
  std::lock_guard lock(mutex_);
  ++queued_;
}

void Engine::Impl::RunBatch() {
  const model::ModelConfig& config = model_->config();
  const int64_t d = config.text.hidden_size, vocab = config.text.vocab_size;
  struct Item {
    Sequence* seq;
    int64_t n;    // tokens this iteration
    bool logits;  // needs the logits of its last row
  };
  // Every decoding sequence advances one token; prefill chunks share the remaining budget.
  std::vector<Item> items;
  int64_t budget = options_.max_batch_tokens;
  for (const auto& seq : running_) {
    if (seq->phase == Sequence::Phase::kDecode) {
      items.push_back({seq.get(), 1, true});
      --budget;
    }
  }
  for (const auto& seq : running_) {
    if (seq->phase != Sequence::Phase::kPrefill || budget <= 0) continue;
    const int64_t n = std::min(budget, seq->prefill_target - seq->prefilled);
    const bool last = seq->prefilled + n == seq->prefill_target;
    items.push_back({seq.get(), n, last && seq->prefill_needs_logits});
    budget -= n;
  }
  // Reserve the blocks this step needs; when the pool runs dry, preempt the least important
  // running sequence (possibly the one asking) and try again.
  for (size_t i = 0; i < items.size();) {
    Sequence* seq = items[i].seq;
    if (cache_->Reserve(seq->kv, seq->kv.length + items[i].n)) {
      ++i;
      continue;
    }
    Sequence* victim = nullptr;
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
      if (!(*it)->kv.blocks.empty()) {
        victim = it->get();
        break;
      }
    }
    MINERU_CHECK(victim != nullptr, "KV cache full with no sequence holding blocks");
    auto at =
        std::find_if(items.begin(), items.end(), [&](const Item& x) { return x.seq == victim; });
    if (at != items.end()) {
      if (at - items.begin() < static_cast<ptrdiff_t>(i)) --i;
      items.erase(at);
    }
    Preempt(victim);
  }
  if (items.empty()) return;

  // Inputs: ids (decode: the pending token; prefill: the chunk), positions, logit rows.
  std::vector<int32_t> ids;
  std::vector<std::array<int32_t, 3>> positions;
  std::vector<model::DecoderStep> steps;
  std::vector<int64_t> logit_rows;
  for (const Item& item : items) {
    Sequence& seq = *item.seq;
    if (seq.phase == Sequence::Phase::kDecode) {
      ids.push_back(seq.output.back());
      const auto p = static_cast<int32_t>(seq.positions.next_position +
                                          static_cast<int64_t>(seq.output.size()) - 1);
      positions.push_back({p, p, p});
    } else {
      for (int64_t i = seq.prefilled; i < seq.prefilled + item.n; ++i) {
        ids.push_back(seq.PrefillId(i));
        positions.push_back(seq.PrefillPosition(i));
      }
    }
    steps.push_back({&seq.kv, item.n});
    if (item.logits) logit_rows.push_back(static_cast<int64_t>(ids.size()) - 1);
  }
  const auto rows = static_cast<int64_t>(ids.size());
  std::vector<float> x(static_cast<size_t>(rows * d));
  Status status = model_->decoder().Embed(*pool_, ids, x.data());
  int64_t row = 0;
  for (const Item& item : items) {  // image tokens take their vision rows
    const Sequence& seq = *item.seq;
    if (seq.phase == Sequence::Phase::kPrefill && !seq.vision.empty()) {
      for (int64_t i = seq.prefilled; i < seq.prefilled + item.n; ++i) {
        const int64_t prompt_n = static_cast<int64_t>(seq.prompt.size());
        const int32_t v = i < prompt_n ? seq.vision_row_of[static_cast<size_t>(i)] : -1;
        if (v >= 0)
          std::copy_n(seq.vision.data() + int64_t{v} * d, d,
                      x.data() + (row + i - seq.prefilled) * d);
      }
    }
    row += item.n;
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
  if (!status) {
    for (const Item& item : items)
      Finish(item.seq, FinishReason::kError, status.error().ToString());
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
  for (const Item& item : items) {
    Sequence& seq = *item.seq;
    if (seq.phase == Sequence::Phase::kPrefill) {
      seq.prefilled += item.n;
      if (seq.prefilled < seq.prefill_target) continue;
      seq.phase = Sequence::Phase::kDecode;
      if (!item.logits) continue;  // recomputed: output.back() is the next input
    }
    picks.push_back({&seq, logits_.data() + logit_index++ * static_cast<size_t>(vocab), 0});
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
    seq.state->Emit(token);
    const auto produced = static_cast<int64_t>(seq.output.size());
    if (produced >= seq.max_new_tokens) Finish(&seq, FinishReason::kLength);
  }
}

void Engine::Impl::Finish(Sequence* seq, FinishReason reason, std::string error) {
  if (std::find(finished_.begin(), finished_.end(), seq) != finished_.end()) return;
  cache_->Release(seq->kv);
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
  result.usage.recomputed_tokens = seq->recomputed;
  Timings& t = result.timings;
  const bool admitted = seq->admitted != Clock::time_point{};
  const bool first = seq->first_token != Clock::time_point{};
  t.queued = Seconds((admitted ? seq->admitted : now) - seq->submitted);
  t.vision = seq->vision_seconds;
  if (first) {
    const Clock::time_point prefill_start =
        seq->vision_done != Clock::time_point{} ? seq->vision_done : seq->admitted;
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
  if (finished_.empty()) return;
  auto is_finished = [&](const std::unique_ptr<Sequence>& s) {
    return std::find(finished_.begin(), finished_.end(), s.get()) != finished_.end();
  };
  const auto waiting_before = static_cast<int64_t>(waiting_.size());
  std::erase_if(waiting_, is_finished);
  std::erase_if(running_, is_finished);
  finished_.clear();
  const int64_t left_waiting = waiting_before - static_cast<int64_t>(waiting_.size());
  if (left_waiting > 0) {
    std::lock_guard lock(mutex_);
    queued_ -= left_waiting;
  }
}

void Engine::Impl::PublishStats() {
  local_.waiting = static_cast<int64_t>(waiting_.size());
  local_.running = static_cast<int64_t>(running_.size());
  local_.kv_blocks_used = cache_->num_blocks() - cache_->free_blocks();
  std::lock_guard lock(mutex_);
  const int64_t submitted = stats_.submitted, rejected = stats_.rejected;
  local_.waiting += static_cast<int64_t>(inbox_.size());
  stats_ = local_;
  stats_.submitted = submitted;
  stats_.rejected = rejected;
}

}  // namespace mineru::engine
