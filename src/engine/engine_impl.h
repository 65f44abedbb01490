// SPDX-License-Identifier: Apache-2.0
// The engine's inside: a request's life on the engine thread (Sequence) and the state the
// thread owns. engine.cc holds submission and the thread; scheduler.cc one iteration (plan with
// engine/planner.h, execute on the model, commit).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/thread_pool.h"
#include "engine/batch_plan.h"
#include "engine/engine.h"
#include "engine/planner.h"
#include "engine/sampling.h"
#include "model/kv_cache.h"

namespace mineru::engine {

// One admitted or waiting request, owned by the engine thread once submitted: what the
// planner decides on (`sched`) and the tokens, images and sampler the passes and commits use.
struct Sequence {
  ScheduledSequence sched;  // id = arrival order
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

  std::vector<int32_t> output;  // emitted tokens (a stop token is not kept here)
  std::vector<std::vector<float>> logits;

  Clock::time_point submitted{}, vision_done{}, first_token{};
  double vision_seconds = 0;

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
};

// What the execute step hands the commit step: the plan's outcome, in the plan's order.
struct PassResult {
  std::vector<Sequence*> step_seqs;  // per plan step; null when the step did not run
  // Sequences whose images failed (preprocessing or the vision pass), with the message.
  std::vector<std::pair<Sequence*, std::string>> vision_failed;
  Status decoder = OkStatus();  // of the decoder pass, when it ran
  bool decoder_ran = false;
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
  // One scheduling iteration: plan, execute, commit; false when nothing ran.
  bool Iterate();
  void TakeSubmissions();
  // Execute: the plan's vision pass, then its decoder pass (logits to logits_).
  PassResult Execute(const BatchPlan& plan);
  void RunVision(const BatchPlan& plan, PassResult& result);
  void RunDecoder(const BatchPlan& plan, PassResult& result);
  // Commit: failures, then sampling, streaming and finishing, in the plan's step order.
  void Commit(const BatchPlan& plan, PassResult& result);
  void Finish(Sequence* seq, FinishReason reason, std::string error = {});
  void RemoveFinished();
  Sequence* Live(uint64_t id) const { return live_.at(id).get(); }
  // queued_ = inbox + waiting again, after the engine thread changed the waiting list.
  void SyncQueued();
  void PublishStats();

  // Shared with submitting threads.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Sequence>> inbox_;
  bool stopping_ = false;
  int64_t queued_ = 0;  // inbox + waiting, bounded by max_waiting (engine thread: SyncQueued)
  uint64_t next_arrival_ = 0;
  EngineStats stats_;

  // Engine thread only.
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<model::KvCache> cache_;  // storage; planner_ owns who holds which block
  std::unique_ptr<Planner> planner_;
  std::unordered_map<uint64_t, std::unique_ptr<Sequence>> live_;  // by id, waiting or running
  std::vector<Sequence*> finished_;  // this iteration, removed from live_ at its end
  EngineStats local_;                // counters kept by the engine thread
  std::vector<float> logits_;        // [rows with logits, vocab] of a pass
  std::thread thread_;
};

}  // namespace mineru::engine
