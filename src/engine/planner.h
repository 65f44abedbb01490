// SPDX-License-Identifier: Apache-2.0
// The plan step of an engine iteration: the scheduler's every decision, made on counts alone
// (no tokens, no activations, no model), written into a BatchPlan.
//
// Each Plan(now), in order:
//   1. cancelled and expired sequences end, waiting or running; their blocks go back at once;
//   2. admission: the head of the waiting list (priority, then arrival) is admitted while fewer
//      than max_running run and its whole prefill fits in the free blocks less a 1 % watermark
//      (none when nothing runs); its blocks are reserved then. The head waits rather than be
//      overtaken (strict priority);
//   3. vision batching: when vision_max_images images of admitted sequences wait, or the oldest
//      of them was admitted vision_max_wait ago, the sequences in rank order go to one vision
//      pass while it holds at most vision_max_images images and vision_max_patches patches (the
//      first always goes, however large); they may prefill in this same iteration;
//   4. the decoder pass: one token of every decoding sequence, then prefill chunks in rank
//      order within max_batch_tokens; each step's blocks are reserved, and when the pool is dry
//      the least important running sequence holding blocks is preempted (possibly the one
//      asking): its blocks go back and it waits to prefill prompt + output again (recompute).
//
// Invariants between plans: waiting() and running() are sorted by rank; a running sequence
// holds blocks for its whole prefill target; the allocator's used blocks are exactly the
// running sequences' blocks.
//
// The planner owns the block accounting (engine/kv_blocks.h) but not the sequences: the caller
// owns each ScheduledSequence, adds it, and removes it when it ends.
//
// Thread safety: none; the engine thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/batch_plan.h"
#include "engine/kv_blocks.h"
#include "engine/options.h"
#include "engine/request.h"

namespace mineru::engine {

// What the planner knows of one request.
struct ScheduledSequence {
  enum class Phase { kWaiting, kVision, kPrefill, kDecode };

  uint64_t id = 0;  // arrival order: unique, the tie-break after priority
  int32_t priority = 0;
  std::optional<Clock::time_point> deadline;
  bool cancelled = false;       // the caller asked to cancel (seen at the next Plan)
  int64_t images = 0;           // of the request
  int64_t patches = 0;          // of all its images
  bool vision_pending = false;  // images not yet sent to a vision pass
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;  // emitted (a stop token is not counted)

  Phase phase = Phase::kWaiting;
  KvBlockTable kv;
  // Tokens to prefill: the prompt, plus after a preemption every output token but the last
  // (the last is the pending input of the next decode step).
  int64_t prefill_target = 0;
  int64_t prefilled = 0;
  bool prefill_needs_logits = true;  // false when recomputing (the next token is known)
  int64_t recomputed = 0;            // tokens prefilled again after preemptions
  Clock::time_point admitted{};      // the latest admission

  // Rank for admission and preemption: smaller is more important.
  std::pair<int32_t, uint64_t> rank() const { return {priority, id}; }
};

class Planner {
 public:
  // Limits from `options` (max_running, max_batch_tokens, vision_*); a pool of num_blocks
  // blocks of options.kv_block_tokens tokens.
  Planner(const EngineOptions& options, int64_t num_blocks);

  // Queues a new sequence (it must outlive its stay: until Remove or the Plan that ends it).
  // Sets phase kWaiting and prefill_target = prompt_tokens.
  void Add(ScheduledSequence* seq);
  // Takes a sequence out of the lists, its blocks back to the pool. No-op once removed.
  void Remove(ScheduledSequence* seq);

  BatchPlan Plan(Clock::time_point now);

  // Commit of one step of a decoder pass that ran: its tokens are in the KV cache. Returns
  // whether the sequence takes a token from the step's logits now (a decode, or the last
  // prefill chunk when its logits were asked for).
  bool Advance(ScheduledSequence* seq, const BatchPlan::Step& step);

  const std::vector<ScheduledSequence*>& waiting() const { return waiting_; }
  const std::vector<ScheduledSequence*>& running() const { return running_; }
  const KvBlockAllocator& blocks() const { return blocks_; }

 private:
  void EndCancelledAndExpired(Clock::time_point now, BatchPlan& plan);
  void Admit(Clock::time_point now, BatchPlan& plan);
  bool VisionDue(Clock::time_point now) const;
  void PlanVision(BatchPlan& plan);
  void PlanSteps(BatchPlan& plan);
  void Preempt(ScheduledSequence* victim, BatchPlan& plan);

  int64_t max_running_, max_batch_tokens_;
  int64_t vision_max_images_, vision_max_patches_;
  std::chrono::milliseconds vision_max_wait_;
  KvBlockAllocator blocks_;
  std::vector<ScheduledSequence*> waiting_;  // by rank
  std::vector<ScheduledSequence*> running_;  // admitted, by rank
};

}  // namespace mineru::engine
