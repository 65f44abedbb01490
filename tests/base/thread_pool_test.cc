// SPDX-License-Identifier: Apache-2.0
#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace mineru {
namespace {

TEST(ThreadPoolTest, RunsEveryTaskOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (size_t n : {0u, 1u, 3u, 1000u}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> bad_thread{0};
      pool.ParallelFor(n, [&](size_t task, int thread) {
        hits[task].fetch_add(1);
        if (thread < 0 || thread >= threads) bad_thread.fetch_add(1);
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "task " << i;
      EXPECT_EQ(bad_thread.load(), 0);
    }
  }
}

TEST(ThreadPoolTest, ManyConsecutiveLoops) {
  ThreadPool pool(3);
  std::atomic<long> sum{0};
  for (int round = 0; round < 2000; ++round) {
    pool.ParallelFor(7, [&](size_t task, int) { sum.fetch_add(static_cast<long>(task)); });
  }
  EXPECT_EQ(sum.load(), 2000L * 21);
}

}  // namespace
}  // namespace mineru
