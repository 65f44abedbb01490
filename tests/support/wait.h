// SPDX-License-Identifier: Apache-2.0
// Waiting in tests for something another thread or process makes true: poll the condition until
// it holds, with a generous hang guard. The guard only keeps a broken build from hanging the
// suite; it is not a deadline (tests never assert on time), so it is far above what any
// condition needs even on a loaded machine.
//
//   ASSERT_TRUE(WaitUntil([&] { return server.open_connections() == 0; }));
#pragma once

#include <chrono>
#include <thread>

namespace mineru::testing_support {

inline constexpr std::chrono::seconds kWaitGuard{60};
// Between two looks at the condition: short against the waits, long enough not to busy the
// threads (or the server) being waited on.
inline constexpr std::chrono::milliseconds kWaitPoll{10};

// True once `condition()` holds; false when it still does not after `guard`. The condition is
// looked at once more after the guard has passed, so a slow last step still counts.
template <class Condition>
bool WaitUntil(Condition&& condition, std::chrono::milliseconds guard = kWaitGuard,
               std::chrono::milliseconds poll = kWaitPoll) {
  const auto give_up = std::chrono::steady_clock::now() + guard;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return condition();
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace mineru::testing_support
