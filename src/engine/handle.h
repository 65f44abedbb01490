// SPDX-License-Identifier: Apache-2.0
// The caller's side of one submitted request: pull its tokens as they come, wait for its
// result, or cancel it.
//
// Thread safety: every method may be called from any thread, concurrently with the engine.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/request.h"

namespace mineru::engine {

// State shared by a handle and the engine's copy of the request.
class RequestState {
 public:
  explicit RequestState(std::function<void(const TokenEvent&)> on_token)
      : on_token_(std::move(on_token)) {}

  // Engine side.
  void Emit(int32_t token);
  void Finish(GenerationResult result);
  bool cancel_requested() const { return cancelled_.load(std::memory_order_relaxed); }

  // Caller side.
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  // Waits for tokens past those already taken; returns them (empty when the request finished
  // with nothing new). nullopt once every token was taken and the request has finished, or
  // when `timeout` passes first (then `timed_out` is set).
  std::optional<std::vector<int32_t>> Next(std::optional<std::chrono::milliseconds> timeout,
                                           bool* timed_out);
  const GenerationResult& Wait();
  std::optional<GenerationResult> WaitFor(std::chrono::milliseconds timeout);
  bool done() const;

 private:
  std::function<void(const TokenEvent&)> on_token_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int32_t> tokens_;
  size_t taken_ = 0;
  std::optional<GenerationResult> result_;
};

class RequestHandle {
 public:
  RequestHandle() = default;
  explicit RequestHandle(std::shared_ptr<RequestState> state) : state_(std::move(state)) {}

  // Blocks until new tokens exist (returning them) or the request finished with every token
  // taken (nullopt).
  std::optional<std::vector<int32_t>> Next() { return state_->Next(std::nullopt, nullptr); }
  // As Next, giving up after `timeout` (then *timed_out is true and the result nullopt).
  std::optional<std::vector<int32_t>> NextFor(std::chrono::milliseconds timeout, bool* timed_out) {
    return state_->Next(timeout, timed_out);
  }
  // Blocks until the request finished.
  const GenerationResult& Wait() { return state_->Wait(); }
  std::optional<GenerationResult> WaitFor(std::chrono::milliseconds timeout) {
    return state_->WaitFor(timeout);
  }
  bool done() const { return state_->done(); }
  // Ends the request at the engine's next step with FinishReason::kCancelled (tokens so far
  // kept); its KV blocks are freed then. No effect once finished.
  void Cancel() { state_->Cancel(); }
  bool valid() const { return state_ != nullptr; }

 private:
  std::shared_ptr<RequestState> state_;
};

}  // namespace mineru::engine
