// SPDX-License-Identifier: Apache-2.0
// Waiting for a TaskManager's task in the task tests.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tasks/task_manager.h"

namespace mineru::jobs::testing {

// Polls until the task reaches a final state (or 30 s pass: the test then fails); an empty
// TaskInfo when the task is unknown.
inline TaskInfo WaitFinal(TaskManager& manager, const std::string& id) {
  for (int i = 0; i < 3000; ++i) {
    std::optional<TaskInfo> info = manager.Get(id);
    if (!info) return {};
    if (IsFinal(info->status)) return *info;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "task " << id << " did not finish";
  return {};
}

}  // namespace mineru::jobs::testing
