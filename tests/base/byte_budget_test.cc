// SPDX-License-Identifier: Apache-2.0
// ByteBudget (base/byte_budget.h): exactly the capacity fits and one byte more does not, every
// way out of a reservation gives its bytes back, blocked reservations wake when bytes are freed
// or their cancel flag is set, and eight threads reserving, growing and shrinking at once never
// take more than the capacity (run it under ThreadSanitizer: docs/TESTING.md).
#include "base/byte_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

namespace mineru {
namespace {

TEST(ByteBudgetTest, ExactlyTheCapacityFitsOneMoreByteDoesNot) {
  ByteBudget budget(100);
  auto all = budget.TryReserve(100);
  ASSERT_TRUE(all);
  EXPECT_EQ(budget.in_use(), 100u);
  EXPECT_FALSE(budget.TryReserve(1));
  EXPECT_TRUE(budget.TryReserve(0));  // nothing always fits
  all->Release();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_FALSE(budget.TryReserve(101));
  EXPECT_EQ(budget.peak(), 100u);
}

TEST(ByteBudgetTest, GrowShrinkMoveAndDestroyKeepTheSum) {
  ByteBudget budget(100);
  std::optional<ByteReservation> a = budget.TryReserve(30);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->TryGrow(70));
  EXPECT_EQ(a->bytes(), 100u);
  EXPECT_FALSE(a->TryGrow(1));  // refused: the reservation is unchanged
  EXPECT_EQ(a->bytes(), 100u);
  a->ShrinkTo(40);
  EXPECT_EQ(budget.in_use(), 40u);
  a->ShrinkTo(50);  // never grows
  EXPECT_EQ(a->bytes(), 40u);
  {
    ByteReservation moved = std::move(*a);
    EXPECT_EQ(a->bytes(), 0u);
    EXPECT_EQ(moved.bytes(), 40u);
    EXPECT_EQ(budget.in_use(), 40u);
    ByteReservation assigned;
    assigned = std::move(moved);
    EXPECT_EQ(budget.in_use(), 40u);
  }
  EXPECT_EQ(budget.in_use(), 0u);  // destroyed: given back
  ByteReservation empty;
  EXPECT_FALSE(empty.TryGrow(1));  // no budget behind it
  EXPECT_TRUE(empty.TryGrow(0));
}

TEST(ByteBudgetTest, ReserveWaitsForFreedBytesAndRefusesWhatNeverFits) {
  ByteBudget budget(10);
  auto refused = budget.Reserve(11);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);

  std::optional<ByteReservation> held = budget.TryReserve(8);
  ASSERT_TRUE(held);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto r = budget.Reserve(5);
    ASSERT_TRUE(r) << r.error().ToString();
    got = true;
  });
  // The waiter cannot have its 5 bytes while 8 of 10 are held; it is woken by the release (the
  // test timeout is the guard if it never is).
  while (budget.waiters() == 0) std::this_thread::yield();
  EXPECT_FALSE(got.load());
  held.reset();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(budget.in_use(), 0u);
}

TEST(ByteBudgetTest, CancelEndsAWait) {
  ByteBudget budget(10);
  std::optional<ByteReservation> held = budget.TryReserve(10);
  std::atomic<bool> cancel{false};
  std::thread waiter([&] {
    auto r = budget.Reserve(1, &cancel);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  });
  while (budget.waiters() == 0) std::this_thread::yield();
  cancel = true;
  waiter.join();
  EXPECT_EQ(budget.in_use(), 10u);
  EXPECT_EQ(budget.waiters(), 0);
}

TEST(ByteBudgetTest, ConcurrentReservationsNeverExceedTheCapacity) {
  constexpr uint64_t kCapacity = 1000;
  ByteBudget budget(kCapacity);
  // What the threads hold, counted after each take and before each give-back: never more than
  // the budget holds, so it stays within the capacity exactly when the budget is right.
  std::atomic<uint64_t> held{0};
  std::atomic<bool> over{false};
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const uint64_t want = 1 + static_cast<uint64_t>((t * 131 + i * 17) % 300);
        std::optional<ByteReservation> r;
        if (i % 3 == 0) {
          auto waited = budget.Reserve(want);
          ASSERT_TRUE(waited) << waited.error().ToString();
          r = std::move(*waited);
        } else {
          r = budget.TryReserve(want);
          if (!r) continue;
        }
        ++granted;
        if ((held += want) > kCapacity) over = true;
        if (r->TryGrow(50) && (held += 50) > kCapacity) over = true;
        const uint64_t half = r->bytes() / 2;
        held -= r->bytes() - half;
        r->ShrinkTo(half);
        held -= half;
        r->Release();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(over.load());
  EXPECT_GT(granted.load(), 0);
  EXPECT_EQ(held.load(), 0u);
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_LE(budget.peak(), kCapacity);
}

}  // namespace
}  // namespace mineru
