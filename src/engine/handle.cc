// SPDX-License-Identifier: Apache-2.0
#include "engine/handle.h"

namespace mineru::engine {

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kDeadline:
      return "deadline";
    case FinishReason::kError:
      return "error";
  }
  return "error";
}

// Callbacks run before the token or result becomes visible to pulling threads, so a caller
// whose Wait() returned has seen every callback.
void RequestState::Emit(int32_t token) {
  if (on_token_) on_token_(TokenEvent{token, false});
  {
    std::lock_guard lock(mutex_);
    tokens_.push_back(token);
  }
  changed_.notify_all();
}

void RequestState::Finish(GenerationResult result) {
  if (on_token_) on_token_(TokenEvent{std::nullopt, true});
  {
    std::lock_guard lock(mutex_);
    result_ = std::move(result);
  }
  changed_.notify_all();
}

std::optional<std::vector<int32_t>> RequestState::Next(
    std::optional<std::chrono::milliseconds> timeout, bool* timed_out) {
  if (timed_out != nullptr) *timed_out = false;
  std::unique_lock lock(mutex_);
  auto ready = [&] { return taken_ < tokens_.size() || result_.has_value(); };
  if (timeout) {
    if (!changed_.wait_for(lock, *timeout, ready)) {
      if (timed_out != nullptr) *timed_out = true;
      return std::nullopt;
    }
  } else {
    changed_.wait(lock, ready);
  }
  if (taken_ == tokens_.size()) return std::nullopt;  // finished, all taken
  std::vector<int32_t> fresh(tokens_.begin() + static_cast<ptrdiff_t>(taken_), tokens_.end());
  taken_ = tokens_.size();
  return fresh;
}

const GenerationResult& RequestState::Wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return result_.has_value(); });
  return *result_;
}

std::optional<GenerationResult> RequestState::WaitFor(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return result_.has_value(); })) return std::nullopt;
  return *result_;
}

bool RequestState::done() const {
  std::lock_guard lock(mutex_);
  return result_.has_value();
}

}  // namespace mineru::engine
