// SPDX-License-Identifier: Apache-2.0
#include "engine/batch_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mineru::engine {

int64_t BatchPlan::tokens() const {
  int64_t n = 0;
  for (const Step& step : steps) n += step.num_tokens;
  return n;
}

std::string ToString(const BatchPlan& plan, bool with_blocks) {
  std::string out;
  auto part = [&](std::string_view name) {
    if (!out.empty()) out += " | ";
    out += name;
  };
  if (!plan.ended.empty()) {
    part("ended");
    for (const BatchPlan::Ended& e : plan.ended)
      out += fmt::format(" {}:{}", e.id, FinishReasonName(e.reason));
  }
  auto ids = [&](std::string_view name, const std::vector<uint64_t>& list) {
    if (list.empty()) return;
    part(name);
    for (uint64_t id : list) out += fmt::format(" {}", id);
  };
  ids("admitted", plan.admitted);
  ids("preempted", plan.preempted);
  ids("vision", plan.vision);
  if (!plan.steps.empty()) {
    part("steps");
    for (const BatchPlan::Step& s : plan.steps) {
      out += fmt::format(" {}:{}[{}+{}]{}", s.id, s.decode ? 'd' : 'p', s.start, s.num_tokens,
                         s.logits ? "*" : "");
      if (with_blocks) out += fmt::format("{{{}}}", fmt::join(s.blocks, ","));
    }
  }
  return out;
}

}  // namespace mineru::engine
