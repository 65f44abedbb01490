// SPDX-License-Identifier: Apache-2.0
// RetainedTasks (tasks/task_retention.h): which finished tasks leave, by time, count and bytes,
// at each bound exactly, oldest first, never one whose thread still holds its files.
#include "tasks/task_retention.h"

#include <gtest/gtest.h>

#include <set>

namespace mineru::jobs {
namespace {

using std::chrono::seconds;
using Clock = RetainedTasks::Clock;
using Ids = std::vector<std::string>;

const auto kNobodyHolds = [](const std::string&) { return false; };

TEST(RetainedTasksTest, BytesBeyondTheQuotaTakeTheOldestFirstExactlyTheQuotaStays) {
  RetainedTasks kept({.retention = seconds(3600), .max_tasks = 100, .max_bytes = 100});
  const Clock::time_point t0 = Clock::now();
  kept.Add("a", t0);
  kept.Add("b", t0 + seconds(1));
  kept.SetBytes("a", 60);
  kept.SetBytes("b", 40);
  EXPECT_EQ(kept.bytes(), 100u);
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(2), kNobodyHolds), Ids{});  // exactly the quota
  kept.Add("c", t0 + seconds(2));
  kept.SetBytes("c", 1);  // one byte over
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(3), kNobodyHolds), Ids{"a"});
  EXPECT_EQ(kept.bytes(), 41u);
  EXPECT_EQ(kept.size(), 2u);
  kept.Add("huge", t0 + seconds(4));
  kept.SetBytes("huge", 101);  // alone over the quota: it leaves by itself
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(5), kNobodyHolds), Ids{"huge"});
  EXPECT_EQ(kept.bytes(), 41u);
  kept.Add("held", t0 + seconds(6));
  kept.SetBytes("held", 200);  // ... once its thread has let go
  const auto holds = [](const std::string& id) { return id == "held"; };
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(6), holds), (Ids{"b", "c"}));  // still over: the oldest
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(6), kNobodyHolds), Ids{"held"});
  EXPECT_EQ(kept.bytes(), 0u);
}

TEST(RetainedTasksTest, AHeldTaskStaysAndTheNextOldestGoesInItsPlace) {
  RetainedTasks kept({.retention = seconds(10), .max_tasks = 2, .max_bytes = 1000});
  const Clock::time_point t0 = Clock::now();
  for (const char* id : {"a", "b", "c"}) kept.Add(id, t0);
  std::set<std::string> held = {"a"};
  const auto holds = [&](const std::string& id) { return held.count(id) > 0; };
  EXPECT_EQ(kept.TakeLeaving(t0, holds), Ids{"b"});                // three over a count of two
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(10), holds), Ids{"c"});  // expired; a is held
  held.clear();
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(10), holds), Ids{"a"});
  EXPECT_EQ(kept.size(), 0u);
}

TEST(RetainedTasksTest, RetentionAndCountAtTheirBoundaries) {
  RetainedTasks kept({.retention = seconds(10), .max_tasks = 2, .max_bytes = 1000});
  const Clock::time_point t0 = Clock::now();
  kept.Add("a", t0);
  kept.Add("b", t0 + seconds(5));
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(9), kNobodyHolds), Ids{});      // two kept, none expired
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(10), kNobodyHolds), Ids{"a"});  // 10 s: expired
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(14), kNobodyHolds), Ids{});
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(15), kNobodyHolds), Ids{"b"});
}

TEST(RetainedTasksTest, RemovedTasksAreForgottenWithTheirBytes) {
  RetainedTasks kept({.retention = seconds(10), .max_tasks = 10, .max_bytes = 10});
  const Clock::time_point t0 = Clock::now();
  kept.Add("a", t0);
  kept.SetBytes("a", 8);
  kept.Add("a", t0);  // a second Add of one id changes nothing
  EXPECT_EQ(kept.bytes(), 8u);
  kept.Remove("a");
  kept.SetBytes("a", 5);  // unknown now: ignored
  kept.Remove("never-added");
  EXPECT_EQ(kept.bytes(), 0u);
  EXPECT_EQ(kept.size(), 0u);
  EXPECT_EQ(kept.TakeLeaving(t0 + seconds(20), kNobodyHolds), Ids{});
}

}  // namespace
}  // namespace mineru::jobs
