// SPDX-License-Identifier: Apache-2.0
// base::BlockingQueue: order, the capacity bound (Push waits, TryPush refuses), and the two ways
// to end (Close drains, CloseAndTake hands the queued items back).
#include "base/blocking_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace mineru {
namespace {

TEST(BlockingQueueTest, PopsInPushOrder) {
  BlockingQueue<int> queue;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(queue.Push(i));
  EXPECT_EQ(queue.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(queue.Pop(), i);
  EXPECT_EQ(queue.size(), 0u);
}

TEST(BlockingQueueTest, TryPushRefusesAtTheCapacityAndAcceptsBelowIt) {
  BlockingQueue<int> queue(2);
  EXPECT_TRUE(queue.TryPush(1));
  EXPECT_TRUE(queue.TryPush(2));
  EXPECT_FALSE(queue.TryPush(3));  // full: exactly `capacity` items
  EXPECT_EQ(queue.Pop(), 1);
  EXPECT_TRUE(queue.TryPush(3));
  EXPECT_EQ(queue.Pop(), 2);
  EXPECT_EQ(queue.Pop(), 3);
}

TEST(BlockingQueueTest, PushWaitsWhileFullUntilAPop) {
  BlockingQueue<int> queue(1);
  ASSERT_TRUE(queue.Push(1));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(queue.Push(2));
    pushed = true;
  });
  // The producer cannot get past a full queue; the queue never holds more than one item.
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.Pop(), 1);
  EXPECT_EQ(queue.Pop(), 2);  // waits for the producer's item if it is not there yet
  producer.join();
  EXPECT_TRUE(pushed);
}

TEST(BlockingQueueTest, CloseLetsTheQueuedItemsBePoppedThenEnds) {
  BlockingQueue<int> queue;
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(queue.Push(2));
  queue.Close();
  EXPECT_FALSE(queue.Push(3));
  EXPECT_FALSE(queue.TryPush(3));
  EXPECT_EQ(queue.Pop(), 1);
  EXPECT_EQ(queue.Pop(), 2);
  EXPECT_EQ(queue.Pop(), std::nullopt);
}

TEST(BlockingQueueTest, CloseAndTakeHandsBackTheQueuedItemsAndEndsAtOnce) {
  BlockingQueue<std::unique_ptr<int>> queue;
  ASSERT_TRUE(queue.Push(std::make_unique<int>(1)));
  ASSERT_TRUE(queue.Push(std::make_unique<int>(2)));
  std::deque<std::unique_ptr<int>> taken = queue.CloseAndTake();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(*taken[0], 1);
  EXPECT_EQ(*taken[1], 2);
  EXPECT_EQ(queue.Pop(), std::nullopt);
  EXPECT_FALSE(queue.TryPush(std::make_unique<int>(3)));
}

TEST(BlockingQueueTest, CloseWakesEveryWaitingWorker) {
  BlockingQueue<int> queue;
  std::vector<std::thread> workers;
  std::atomic<int> ended{0};
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      EXPECT_EQ(queue.Pop(), std::nullopt);
      ++ended;
    });
  }
  queue.Close();
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(ended, 4);
}

TEST(BlockingQueueTest, EveryItemIsPoppedExactlyOnceAcrossWorkers) {
  constexpr int kItems = 10000;
  BlockingQueue<int> queue(8);
  std::vector<std::atomic<int>> seen(kItems);
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (std::optional<int> item = queue.Pop()) ++seen[static_cast<size_t>(*item)];
    });
  }
  for (int i = 0; i < kItems; ++i) ASSERT_TRUE(queue.Push(i));
  queue.Close();
  for (std::thread& t : workers) t.join();
  for (int i = 0; i < kItems; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 1) << i;
}

}  // namespace
}  // namespace mineru
