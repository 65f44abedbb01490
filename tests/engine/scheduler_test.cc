// SPDX-License-Identifier: Apache-2.0
// The planner (engine/planner.h) and the KV block accounting (engine/kv_blocks.h) on synthetic
// sequences: token and image counts, priorities, arrival order, deadlines and cancel flags, no
// checkpoint and no model. Every test asserts whole plans (which ids, which token ranges, which
// blocks) as BatchPlan prints them: "ended | admitted | preempted | vision | steps", a step as
// id:d (decode) or id:p (prefill chunk) [start+tokens], * when its logits are sampled.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>

#include "engine/batch_plan.h"
#include "engine/kv_blocks.h"
#include "engine/planner.h"

namespace mineru::engine {
namespace {

using std::chrono::milliseconds;
using Phase = ScheduledSequence::Phase;

const Clock::time_point kT0 = Clock::time_point{} + std::chrono::hours(1);

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest() { options_.kv_block_tokens = 16; }

  // A new request of `prompt` tokens (images, their patches), in arrival order.
  ScheduledSequence* Add(int64_t prompt, int32_t priority = 0, int64_t images = 0,
                         int64_t patches = 0) {
    ScheduledSequence& seq = seqs_.emplace_back();
    seq.id = seqs_.size() - 1;
    seq.priority = priority;
    seq.prompt_tokens = prompt;
    seq.images = images;
    seq.patches = patches;
    seq.vision_pending = images > 0;
    planner_->Add(&seq);
    return &seq;
  }
  void Make(int64_t blocks) { planner_ = std::make_unique<Planner>(options_, blocks); }
  std::string Plan(Clock::time_point now = kT0) {
    last_ = planner_->Plan(now);
    return ToString(last_);
  }
  // What the engine's commit does with the counts once the decoder pass ran: every step
  // advances, and a sequence that takes a token emits it (never a stop token here).
  void Commit() {
    for (const BatchPlan::Step& step : last_.steps) {
      ScheduledSequence& seq = seqs_[step.id];
      if (planner_->Advance(&seq, step)) ++seq.output_tokens;
    }
  }
  std::vector<uint64_t> Ids(const std::vector<ScheduledSequence*>& list) const {
    std::vector<uint64_t> ids;
    for (const ScheduledSequence* seq : list) ids.push_back(seq->id);
    return ids;
  }

  EngineOptions options_;
  std::unique_ptr<Planner> planner_;
  std::deque<ScheduledSequence> seqs_;  // stable addresses, index = id
  BatchPlan last_;
};

TEST(SchedulerKvBlocksTest, FullPoolRefusesWithoutChangingTables) {
  KvBlockAllocator blocks(16, 3);  // 48 tokens in all
  KvBlockTable a, b;
  ASSERT_TRUE(blocks.Reserve(a, 20));
  EXPECT_EQ(a.blocks, (std::vector<int32_t>{0, 1}));  // low ids first
  EXPECT_EQ(blocks.free_blocks(), 1);
  // a needs no new block for 24 tokens; b needs 2 blocks for 20, only 1 is free.
  ASSERT_TRUE(blocks.Reserve(a, 24));
  auto status = blocks.Reserve(b, 20);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(a.blocks.size(), 2u);
  EXPECT_TRUE(b.blocks.empty());
  EXPECT_EQ(blocks.free_blocks(), 1);
  a.length = 24;
  blocks.Release(a);
  EXPECT_TRUE(a.blocks.empty());
  EXPECT_EQ(a.length, 0);
  EXPECT_EQ(blocks.free_blocks(), 3);
  EXPECT_EQ(blocks.used_blocks(), 0);
  ASSERT_TRUE(blocks.Reserve(b, 48));
  EXPECT_EQ(b.blocks.size(), 3u);
  EXPECT_EQ(blocks.BlocksFor(0), 0);
  EXPECT_EQ(blocks.BlocksFor(16), 1);
  EXPECT_EQ(blocks.BlocksFor(17), 2);
}

TEST_F(SchedulerTest, AdmitsByPriorityThenArrivalUpToMaxRunning) {
  options_.max_running = 2;
  Make(64);
  Add(10, /*priority=*/1);
  Add(20);
  Add(30);
  Add(40, /*priority=*/-1);
  EXPECT_EQ(Plan(), "admitted 3 1 | steps 3:p[0+40]* 1:p[0+20]*");
  EXPECT_EQ(Ids(planner_->waiting()), (std::vector<uint64_t>{2, 0}));
  EXPECT_EQ(Ids(planner_->running()), (std::vector<uint64_t>{3, 1}));
  // Blocks for the whole prompt at admission: 3 + 2 of 64.
  EXPECT_EQ(planner_->blocks().used_blocks(), 5);
  EXPECT_EQ(ToString(last_, /*with_blocks=*/true),
            "admitted 3 1 | steps 3:p[0+40]*{0,1,2} 1:p[0+20]*{3,4}");
  EXPECT_EQ(seqs_[3].admitted, kT0);
  EXPECT_EQ(seqs_[3].phase, Phase::kPrefill);
}

TEST_F(SchedulerTest, TheHeadWaitsForBlocksAndIsNotOvertaken) {
  Make(4);
  Add(40);  // 3 blocks
  Add(40);  // 3 blocks: does not fit beside the first
  Add(10);  // 1 block: would fit, but waits behind the head
  EXPECT_EQ(Plan(), "admitted 0 | steps 0:p[0+40]*");
  EXPECT_EQ(Ids(planner_->waiting()), (std::vector<uint64_t>{1, 2}));
  Commit();
  EXPECT_EQ(Plan(), "steps 0:d[40+1]*");
  Commit();
  planner_->Remove(&seqs_[0]);  // finished: its blocks back
  EXPECT_EQ(planner_->blocks().used_blocks(), 0);
  EXPECT_EQ(Plan(), "admitted 1 2 | steps 1:p[0+40]* 2:p[0+10]*");
}

TEST_F(SchedulerTest, AWatermarkOfBlocksStaysFreeWhileSequencesRun) {
  Make(200);  // watermark: 200 / 100 = 2 blocks
  Add(100 * 16);
  EXPECT_EQ(Plan(), "admitted 0 | steps 0:p[0+512]");
  Commit();
  Add(99 * 16);  // 99 blocks: 100 free less the watermark is 98
  EXPECT_EQ(Plan(), "steps 0:p[512+512]");
  EXPECT_EQ(Ids(planner_->waiting()), (std::vector<uint64_t>{1}));
  // The watermark is set when an admission round starts: one that starts with nothing running
  // may take every block.
  Make(200);
  seqs_.clear();
  Add(100 * 16);
  Add(100 * 16);
  EXPECT_EQ(Plan(), "admitted 0 1 | steps 0:p[0+512]");
  EXPECT_EQ(planner_->blocks().free_blocks(), 0);
}

TEST_F(SchedulerTest, PrefillIsChunkedWithinTheTokenBudgetAfterDecodes) {
  options_.max_batch_tokens = 32;
  Make(16);
  Add(50);
  Add(20);
  EXPECT_EQ(Plan(), "admitted 0 1 | steps 0:p[0+32]");
  Commit();
  EXPECT_EQ(Plan(), "steps 0:p[32+18]* 1:p[0+14]");
  Commit();
  EXPECT_EQ(seqs_[0].phase, Phase::kDecode);
  EXPECT_EQ(seqs_[0].output_tokens, 1);
  // The decode takes one token of the budget first.
  EXPECT_EQ(Plan(), "steps 0:d[50+1]* 1:p[14+6]*");
  Commit();
  EXPECT_EQ(Plan(), "steps 0:d[51+1]* 1:d[20+1]*");
  EXPECT_EQ(last_.tokens(), 2);
  Commit();
  EXPECT_EQ(seqs_[0].kv.length, 52);
  EXPECT_EQ(seqs_[1].kv.length, 21);
}

TEST_F(SchedulerTest, DecodesBeyondTheBudgetLeaveNoRoomForPrefill) {
  options_.max_batch_tokens = 2;
  Make(16);
  Add(2);
  Add(2);
  Add(2);
  EXPECT_EQ(Plan(), "admitted 0 1 2 | steps 0:p[0+2]*");
  Commit();
  EXPECT_EQ(Plan(), "steps 0:d[2+1]* 1:p[0+1]");
  Commit();
  EXPECT_EQ(Plan(), "steps 0:d[3+1]* 1:p[1+1]*");
  Commit();
  EXPECT_EQ(Plan(), "steps 0:d[4+1]* 1:d[2+1]*");
  Commit();
  EXPECT_EQ(seqs_[2].prefilled, 0) << "two decodes fill a budget of two";
}

TEST_F(SchedulerTest, PreemptionTakesTheLeastImportantSequencesBlocks) {
  Make(4);
  Add(32, /*priority=*/1);  // arrived first but less important
  Add(32);
  EXPECT_EQ(Plan(), "admitted 1 0 | steps 1:p[0+32]* 0:p[0+32]*");
  Commit();
  // 1 needs a third block for its next token and none is free: 0 loses its blocks {2,3}.
  EXPECT_EQ(ToString(planner_->Plan(kT0), true), "preempted 0 | steps 1:d[32+1]*{0,1,3}");
  const ScheduledSequence& victim = seqs_[0];
  EXPECT_EQ(victim.phase, Phase::kWaiting);
  EXPECT_TRUE(victim.kv.blocks.empty());
  EXPECT_EQ(victim.kv.length, 0);
  // Recompute: prompt + every output token but the last (the pending next input); its logits
  // are known.
  EXPECT_EQ(victim.prefill_target, 32);
  EXPECT_FALSE(victim.prefill_needs_logits);
  EXPECT_EQ(victim.recomputed, 32);
  EXPECT_EQ(Ids(planner_->waiting()), (std::vector<uint64_t>{0}));
  EXPECT_EQ(planner_->blocks().used_blocks(), 3);
}

TEST_F(SchedulerTest, TheSequenceAskingIsPreemptedWhenItIsTheLeastImportant) {
  Make(4);
  Add(20);                  // 2 blocks, room for 12 more tokens
  Add(32, /*priority=*/1);  // 2 blocks, full
  EXPECT_EQ(Plan(), "admitted 0 1 | steps 0:p[0+20]* 1:p[0+32]*");
  Commit();
  EXPECT_EQ(Plan(), "preempted 1 | steps 0:d[20+1]*");
  Commit();
  // Two blocks free again: 1 comes back and prefills its prompt without sampling.
  EXPECT_EQ(Plan(), "admitted 1 | steps 0:d[21+1]* 1:p[0+32]");
  Commit();
  EXPECT_EQ(seqs_[1].phase, Phase::kDecode);
  EXPECT_EQ(seqs_[1].output_tokens, 1) << "recompute emits nothing";
  // Its pending token needs a third block: the pool is dry again and it is still the least
  // important.
  EXPECT_EQ(Plan(), "preempted 1 | steps 0:d[22+1]*");
}

TEST_F(SchedulerTest, PreemptionAfterSeveralTokensRecomputesTheOutputButTheLast) {
  Make(3);
  Add(16);
  Add(15, /*priority=*/1);
  EXPECT_EQ(Plan(), "admitted 0 1 | steps 0:p[0+16]* 1:p[0+15]*");
  Commit();
  // 0 takes the third block for token 17; 1 has room for its 16th.
  EXPECT_EQ(Plan(), "steps 0:d[16+1]* 1:d[15+1]*");
  Commit();
  // 1's third token needs a second block and none is free: it preempts itself.
  EXPECT_EQ(Plan(), "preempted 1 | steps 0:d[17+1]*");
  EXPECT_EQ(seqs_[1].output_tokens, 2);
  EXPECT_EQ(seqs_[1].prefill_target, 15 + 1);
  EXPECT_EQ(seqs_[1].recomputed, 16);
}

TEST_F(SchedulerTest, VisionBatchesImagesWithinTheLimits) {
  options_.vision_max_images = 3;
  options_.vision_max_patches = 1000;
  options_.vision_max_wait = milliseconds(50);
  Make(64);
  Add(20, 0, /*images=*/2, /*patches=*/400);
  Add(20, 0, 1, 300);
  Add(20, 0, 1, 200);
  Add(20, 0, 1, 2000);
  Add(20);  // text only
  // Five images wait (>= 3): the first pass takes 0 and 1 (3 images, 700 patches); 2 would make
  // 4 images. Sequences encoded now prefill in the same iteration.
  EXPECT_EQ(Plan(kT0), "admitted 0 1 2 3 4 | vision 0 1 | steps 0:p[0+20]* 1:p[0+20]* 4:p[0+20]*");
  EXPECT_EQ(seqs_[2].phase, Phase::kVision);
  Commit();
  // Two images wait, none for 50 ms yet: no pass.
  EXPECT_EQ(Plan(kT0 + milliseconds(49)), "steps 0:d[20+1]* 1:d[20+1]* 4:d[20+1]*");
  Commit();
  // Overdue: 2 goes; 3 would pass the patch limit.
  EXPECT_EQ(Plan(kT0 + milliseconds(50)),
            "vision 2 | steps 0:d[21+1]* 1:d[21+1]* 4:d[21+1]* 2:p[0+20]*");
  Commit();
  // Alone, an image larger than the patch limit still goes.
  EXPECT_EQ(Plan(kT0 + milliseconds(51)),
            "vision 3 | steps 0:d[22+1]* 1:d[22+1]* 2:d[20+1]* 4:d[22+1]* 3:p[0+20]*");
  EXPECT_FALSE(seqs_[3].vision_pending);
}

TEST_F(SchedulerTest, CancelledAndExpiredSequencesEndBeforeAdmission) {
  options_.max_running = 1;
  Make(16);
  Add(40);
  ScheduledSequence* waiting = Add(10);
  ScheduledSequence* expiring = Add(10);
  expiring->deadline = kT0 + milliseconds(10);
  ScheduledSequence* next = Add(10);
  next->deadline = kT0 + milliseconds(30);
  EXPECT_EQ(Plan(kT0), "admitted 0 | steps 0:p[0+40]*");
  Commit();
  EXPECT_EQ(Plan(kT0 + milliseconds(9)), "steps 0:d[40+1]*");
  Commit();
  // Waiting ones first, then running ones, each in rank order; a deadline ends at its instant.
  waiting->cancelled = true;
  seqs_[0].cancelled = true;
  EXPECT_EQ(Plan(kT0 + milliseconds(10)),
            "ended 1:cancelled 2:deadline 0:cancelled | admitted 3 | steps 3:p[0+10]*");
  EXPECT_EQ(planner_->blocks().used_blocks(), 1) << "the ended sequences' blocks are back";
  EXPECT_TRUE(seqs_[0].kv.blocks.empty());
  EXPECT_EQ(Ids(planner_->running()), (std::vector<uint64_t>{3}));
  EXPECT_TRUE(planner_->waiting().empty());
  Commit();
  EXPECT_EQ(Plan(kT0 + milliseconds(30)), "ended 3:deadline");
  EXPECT_EQ(planner_->blocks().used_blocks(), 0);
  EXPECT_TRUE(planner_->running().empty());
  planner_->Remove(&seqs_[3]);  // the engine's Finish after the plan ended it: a no-op
  EXPECT_EQ(planner_->blocks().free_blocks(), 16);
  EXPECT_EQ(Plan(kT0 + milliseconds(31)), "");
  EXPECT_FALSE(last_.runs());
}

TEST_F(SchedulerTest, PlansAreValuesThatCompareAndCopy) {
  Make(8);
  Add(20);
  const BatchPlan plan = planner_->Plan(kT0);
  BatchPlan copy = plan;
  EXPECT_EQ(copy, plan);
  EXPECT_TRUE(copy.runs());
  copy.steps[0].blocks.push_back(7);
  EXPECT_NE(copy, plan);
  EXPECT_EQ(ToString(plan, true), "admitted 0 | steps 0:p[0+20]*{0,1}");
}

}  // namespace
}  // namespace mineru::engine
