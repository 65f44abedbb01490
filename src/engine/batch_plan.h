// SPDX-License-Identifier: Apache-2.0
// The value one engine iteration passes from its plan step to its execute and commit steps
// (engine/planner.h decides it; engine/scheduler.cc runs and commits it). Plain data: sequence
// ids, token ranges and block tables, no pointer into model or request state, so a plan can be
// copied, compared and printed (tests/engine/scheduler_test.cc asserts on whole plans).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/request.h"

namespace mineru::engine {

struct BatchPlan {
  // Requests the plan ended before any compute (cancelled or past their deadline), waiting
  // ones first, each list in rank order. Their KV blocks are already back in the pool.
  struct Ended {
    uint64_t id = 0;
    FinishReason reason = FinishReason::kCancelled;
    bool operator==(const Ended&) const = default;
  };
  // One sequence's share of the decoder pass: tokens [start, start + num_tokens) of the
  // sequence (prompt, then output), whose keys and values go to those slots of `blocks`.
  struct Step {
    uint64_t id = 0;
    bool decode = false;          // its pending output token (num_tokens 1); else a prefill chunk
    int64_t start = 0;            // tokens already in its KV blocks
    int64_t num_tokens = 0;       // rows of the pass, following the previous step's
    bool logits = false;          // its last row's logits are sampled
    std::vector<int32_t> blocks;  // its block table, holding start + num_tokens tokens
    bool operator==(const Step&) const = default;
  };

  std::vector<Ended> ended;
  std::vector<uint64_t> admitted;   // admitted this iteration, in order
  std::vector<uint64_t> preempted;  // lost their blocks this iteration, back to waiting
  // Sequences whose images this iteration's vision pass encodes (all of each one's images, in
  // order); their prefill may start in this same iteration's steps.
  std::vector<uint64_t> vision;
  // Decodes first, then prefill chunks, each in rank order; the decoder pass's rows follow.
  std::vector<Step> steps;

  // Whether the plan runs anything (a vision pass or a decoder pass).
  bool runs() const { return !vision.empty() || !steps.empty(); }
  // Rows of the decoder pass.
  int64_t tokens() const;
  bool operator==(const BatchPlan&) const = default;
};

// One line, empty parts left out, e.g.
//   "ended 4:cancelled | admitted 1 2 | preempted 3 | vision 1 | steps 0:d[40+1]* 1:p[0+32]"
// (d decode, p prefill, [start+num_tokens], * logits sampled); with_blocks adds each step's
// block table as {b0,b1,...}.
std::string ToString(const BatchPlan& plan, bool with_blocks = false);

}  // namespace mineru::engine
