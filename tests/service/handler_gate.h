// SPDX-License-Identifier: Apache-2.0
// Waiting helpers of the HTTP server's tests: the bounded poll of tests/support/wait.h (a hang
// fails the test instead of stalling it) and a gate that holds handlers until the test opens it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "../support/wait.h"

namespace mineru::service::testing {

// The hang guard of the gate's own waits, the same as WaitUntil's.
inline constexpr std::chrono::seconds kWaitLimit = testing_support::kWaitGuard;

using testing_support::WaitUntil;

// Blocks handlers until opened; counts who waits and who got through.
class Gate {
 public:
  void Wait() {
    std::unique_lock lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    --waiting_;
    ++passed_;
    cv_.notify_all();
  }
  bool WaitWaiting(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kWaitLimit, [&] { return waiting_ >= n; });
  }
  bool WaitPassed(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kWaitLimit, [&] { return passed_ >= n; });
  }
  int waiting() {
    std::lock_guard lock(mu_);
    return waiting_;
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  int passed_ = 0;
  bool open_ = false;
};

}  // namespace mineru::service::testing
