// SPDX-License-Identifier: Apache-2.0
#include "engine/planner.h"

#include <algorithm>

namespace mineru::engine {

namespace {

using Phase = ScheduledSequence::Phase;

void InsertByRank(std::vector<ScheduledSequence*>& list, ScheduledSequence* seq) {
  auto at = std::upper_bound(list.begin(), list.end(), seq,
                             [](const auto* a, const auto* b) { return a->rank() < b->rank(); });
  list.insert(at, seq);
}

bool Unlink(std::vector<ScheduledSequence*>& list, const ScheduledSequence* seq) {
  auto it = std::find(list.begin(), list.end(), seq);
  if (it == list.end()) return false;
  list.erase(it);
  return true;
}

}  // namespace

Planner::Planner(const EngineOptions& options, int64_t num_blocks)
    : max_running_(options.max_running),
      max_batch_tokens_(options.max_batch_tokens),
      vision_max_images_(options.vision_max_images),
      vision_max_patches_(options.vision_max_patches),
      vision_max_wait_(options.vision_max_wait),
      blocks_(options.kv_block_tokens, num_blocks) {}

void Planner::Add(ScheduledSequence* seq) {
  seq->phase = Phase::kWaiting;
  seq->prefill_target = seq->prompt_tokens;
  InsertByRank(waiting_, seq);
}

void Planner::Remove(ScheduledSequence* seq) {
  if (!Unlink(running_, seq)) Unlink(waiting_, seq);
  blocks_.Release(seq->kv);
}

BatchPlan Planner::Plan(Clock::time_point now) {
  BatchPlan plan;
  EndCancelledAndExpired(now, plan);
  Admit(now, plan);
  if (VisionDue(now)) PlanVision(plan);
  PlanSteps(plan);
  return plan;
}

void Planner::EndCancelledAndExpired(Clock::time_point now, BatchPlan& plan) {
  for (auto* list : {&waiting_, &running_}) {
    std::erase_if(*list, [&](ScheduledSequence* seq) {
      std::optional<FinishReason> reason;
      if (seq->cancelled) {
        reason = FinishReason::kCancelled;
      } else if (seq->deadline && now >= *seq->deadline) {
        reason = FinishReason::kDeadline;
      }
      if (!reason) return false;
      blocks_.Release(seq->kv);
      plan.ended.push_back({seq->id, *reason});
      return true;
    });
  }
}

void Planner::Admit(Clock::time_point now, BatchPlan& plan) {
  // Keep about 1% of the blocks free for running sequences to grow into (vLLM's watermark),
  // unless nothing runs.
  const int64_t watermark = running_.empty() ? 0 : blocks_.num_blocks() / 100;
  while (!waiting_.empty() && static_cast<int64_t>(running_.size()) < max_running_) {
    ScheduledSequence* seq = waiting_.front();
    // Strict priority: the head waits for memory rather than be overtaken.
    if (blocks_.BlocksFor(seq->prefill_target) > blocks_.free_blocks() - watermark) break;
    MINERU_CHECK(blocks_.Reserve(seq->kv, seq->prefill_target).has_value(), "reserve after check");
    seq->admitted = now;
    seq->phase = seq->vision_pending ? Phase::kVision : Phase::kPrefill;
    waiting_.erase(waiting_.begin());
    InsertByRank(running_, seq);
    plan.admitted.push_back(seq->id);
  }
}

bool Planner::VisionDue(Clock::time_point now) const {
  int64_t images = 0;
  bool overdue = false;
  for (const ScheduledSequence* seq : running_) {
    if (seq->phase != Phase::kVision) continue;
    images += seq->images;
    overdue = overdue || now - seq->admitted >= vision_max_wait_;
  }
  return images > 0 && (images >= vision_max_images_ || overdue);
}

void Planner::PlanVision(BatchPlan& plan) {
  int64_t images = 0, patches = 0;
  for (ScheduledSequence* seq : running_) {
    if (seq->phase != Phase::kVision) continue;
    if (!plan.vision.empty() && (images + seq->images > vision_max_images_ ||
                                 patches + seq->patches > vision_max_patches_)) {
      break;
    }
    plan.vision.push_back(seq->id);
    images += seq->images;
    patches += seq->patches;
    // Planned as encoded: the pass runs before this iteration's decoder pass, and a sequence
    // whose images fail to encode ends (its steps then do not run).
    seq->vision_pending = false;
    seq->phase = Phase::kPrefill;
  }
}

void Planner::Preempt(ScheduledSequence* victim, BatchPlan& plan) {
  // Recompute preemption: the KV blocks go back to the pool; the sequence later prefills its
  // prompt and every output token but the last again (the last is its pending next input).
  blocks_.Release(victim->kv);
  victim->prefilled = 0;
  const int64_t out = victim->output_tokens;
  victim->prefill_target = victim->prompt_tokens + std::max<int64_t>(out - 1, 0);
  victim->prefill_needs_logits = out == 0;
  victim->recomputed += victim->prefill_target;
  victim->phase = Phase::kWaiting;
  Unlink(running_, victim);
  InsertByRank(waiting_, victim);
  plan.preempted.push_back(victim->id);
}

void Planner::PlanSteps(BatchPlan& plan) {
  // Every decoding sequence advances one token; prefill chunks share the remaining budget.
  std::vector<std::pair<ScheduledSequence*, BatchPlan::Step>> items;
  int64_t budget = max_batch_tokens_;
  for (ScheduledSequence* seq : running_) {
    if (seq->phase == Phase::kDecode) {
      items.push_back({seq, {seq->id, true, seq->kv.length, 1, true, {}}});
      --budget;
    }
  }
  for (ScheduledSequence* seq : running_) {
    if (seq->phase != Phase::kPrefill || budget <= 0) continue;
    const int64_t n = std::min(budget, seq->prefill_target - seq->prefilled);
    const bool last = seq->prefilled + n == seq->prefill_target;
    items.push_back(
        {seq, {seq->id, false, seq->prefilled, n, last && seq->prefill_needs_logits, {}}});
    budget -= n;
  }
  // Reserve the blocks this step needs; when the pool runs dry, preempt the least important
  // running sequence (possibly the one asking) and try again.
  for (size_t i = 0; i < items.size();) {
    ScheduledSequence* seq = items[i].first;
    if (blocks_.Reserve(seq->kv, seq->kv.length + items[i].second.num_tokens)) {
      ++i;
      continue;
    }
    ScheduledSequence* victim = nullptr;
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
      if (!(*it)->kv.blocks.empty()) {
        victim = *it;
        break;
      }
    }
    MINERU_CHECK(victim != nullptr, "KV cache full with no sequence holding blocks");
    auto at = std::find_if(items.begin(), items.end(),
                           [&](const auto& item) { return item.first == victim; });
    if (at != items.end()) {
      if (at - items.begin() < static_cast<ptrdiff_t>(i)) --i;
      items.erase(at);
    }
    Preempt(victim, plan);
  }
  plan.steps.reserve(items.size());
  for (auto& [seq, step] : items) {
    step.blocks = seq->kv.blocks;  // final: every reservation of this plan is done
    plan.steps.push_back(std::move(step));
  }
}

bool Planner::Advance(ScheduledSequence* seq, const BatchPlan::Step& step) {
  seq->kv.length += step.num_tokens;
  if (step.decode) return true;
  seq->prefilled += step.num_tokens;
  if (seq->prefilled < seq->prefill_target) return false;
  seq->phase = Phase::kDecode;
  return step.logits;  // false when recomputed: the pending output token is the next input
}

}  // namespace mineru::engine
