// SPDX-License-Identifier: Apache-2.0
// The engine's inside: a request's life on the engine thread (Sequence) and the state the
// thread owns. engine.cc holds submission and the thread; scheduler.cc one iteration.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/sampling.h"
#include "model/kv_cache.h"

namespace mineru::engine {

// One admitted or waiting request, owned by the engine thread once submitted.
struct Sequence {
  enum class Phase { kWaiting, kVision, kPrefill, kDecode };

  uint64_t arrival = 0;  // submission order: the tie-break after priority
  int32_t priority = 0;
  std::optional<Clock::time_point> deadline;
  std::shared_ptr<RequestState> state;
  bool keep_logits = false;
  bool decode_text = true;  // Request::decode_text

  std::vector<int32_t> prompt;
  std::vector<model::ImageGrid> grids;
  std::vector<ImageInput> images;      // dropped once encoded
  std::vector<int32_t> vision_row_of;  // prompt index -> row of `vision`, -1 for text
  std::vector<float> vision;           // [image tokens, hidden] once encoded
  model::RopePositions positions;
  int64_t image_tokens = 0;

  std::unique_ptr<Sampler> sampler;
  std::vector<int32_t> stop_ids;
  int64_t max_new_tokens = 0;

  Phase phase = Phase::kWaiting;
  model::KvCache::Sequence kv;
  // Tokens to prefill: the prompt, plus after a preemption every output token but the last.
  int64_t prefill_target = 0;
  int64_t prefilled = 0;
  bool prefill_needs_logits = true;  // false when recomputing (the next token is known)
  std::vector<int32_t> output;       // emitted tokens (a stop token is not kept here)
  std::vector<std::vector<float>> logits;
  int64_t recomputed = 0;

  Clock::time_point submitted{}, admitted{}, vision_done{}, first_token{};
  double vision_seconds = 0;

  bool has_vision_pending() const { return !grids.empty() && vision.empty(); }
  int64_t prefill_length() const { return static_cast<int64_t>(prompt.size()); }
  // Token id at prefill index i (prompt, then earlier output).
  int32_t PrefillId(int64_t i) const {
    const auto n = static_cast<int64_t>(prompt.size());
    return i < n ? prompt[static_cast<size_t>(i)] : output[static_cast<size_t>(i - n)];
  }
  std::array<int32_t, 3> PrefillPosition(int64_t i) const {
    const auto n = static_cast<int64_t>(prompt.size());
    if (i < n) return positions.positions[static_cast<size_t>(i)];
    const auto p = static_cast<int32_t>(positions.next_position + (i - n));
    return {p, p, p};
  }
  // Rank for admission and preemption: smaller is more important.
  std::pair<int32_t, uint64_t> rank() const { return {priority, arrival}; }
};

class Engine::Impl {
 public:
  Impl(std::shared_ptr<const model::Model> model, const EngineOptions& options);
  ~Impl();

  Result<RequestHandle> Submit(Request request);
  void Start();
  EngineStats Stats() const;

  // Fixed after Create.
  std::shared_ptr<const model::Model> model_;
  EngineOptions options_;
  std::vector<int32_t> default_stop_ids_;
  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::optional<image::ImageProcessorConfig> processor_;
  int64_t max_context_ = 0;
  int64_t kv_capacity_tokens_ = 0;

 private:
  Result<std::unique_ptr<Sequence>> Prepare(Request request);
  void Loop();
  // One scheduling iteration; false when there was nothing to do.
  bool Iterate();
  void TakeSubmissions();
  void ExpireAndCancel();
  void Admit();
  void RunVision();
  void RunBatch();
  void Preempt(Sequence* victim);
  void Finish(Sequence* seq, FinishReason reason, std::string error = {});
  void RemoveFinished();
  bool VisionDue(Clock::time_point now) const;
  void PublishStats();

  // Shared with submitting threads.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Sequence>> inbox_;
  bool stopping_ = false;
  int64_t queued_ = 0;  // inbox + waiting, bounded by max_waiting
  uint64_t next_arrival_ = 0;
  EngineStats stats_;

  // Engine thread only.
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<model::KvCache> cache_;
  std::vector<std::unique_ptr<Sequence>> waiting_;  // sorted by rank
  std::vector<std::unique_ptr<Sequence>> running_;  // admitted, sorted by rank
  std::vector<Sequence*> finished_;                 // this iteration, removed at its end
  EngineStats local_;                               // counters kept by the engine thread
  std::vector<float> logits_;                       // [rows with logits, vocab] of a pass
  std::thread thread_;
};

}  // namespace mineru::engine
