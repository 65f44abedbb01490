// SPDX-License-Identifier: Apache-2.0
// A test double at the engine interface whose requests never answer on their own: each ends
// with FinishReason::kCancelled (as the engine would end it) once the caller cancels it. For
// tests of cancellation, queues and deadlines.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "pipeline/generator.h"

namespace mineru::pipeline::testing {

// Counts what was submitted and what was cancelled.
class HangingGenerator final : public Generator {
 public:
  ~HangingGenerator() {
    stop_ = true;
    for (std::thread& t : watchers_) t.join();
  }
  Result<engine::RequestHandle> Submit(engine::Request) override {
    auto state = std::make_shared<engine::RequestState>(nullptr);
    ++submitted_;
    std::lock_guard lock(mutex_);
    watchers_.emplace_back([this, state] {
      while (!state->cancel_requested() && !stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      if (state->cancel_requested()) ++cancelled_;
      engine::GenerationResult result;
      result.finish_reason = engine::FinishReason::kCancelled;
      state->Finish(std::move(result));
    });
    return engine::RequestHandle(state);
  }
  int submitted() const { return submitted_; }
  int cancelled() const { return cancelled_; }

 private:
  std::mutex mutex_;
  std::vector<std::thread> watchers_;
  std::atomic<bool> stop_{false};
  std::atomic<int> submitted_{0}, cancelled_{0};
};

}  // namespace mineru::pipeline::testing
