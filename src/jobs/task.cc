// SPDX-License-Identifier: Apache-2.0
#include "jobs/task.h"

#include <fmt/format.h>

namespace mineru::jobs {

std::string_view TaskStatusName(TaskStatus status) {
  switch (status) {
    case TaskStatus::kPending:
      return "pending";
    case TaskStatus::kProcessing:
      return "processing";
    case TaskStatus::kCompleted:
      return "completed";
    case TaskStatus::kFailed:
      return "failed";
    case TaskStatus::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string ParseOptions::Key() const {
  return fmt::format("formula={};table={};start={};end={}", formula ? 1 : 0, table ? 1 : 0,
                     start_page ? std::to_string(*start_page) : "-",
                     end_page ? std::to_string(*end_page) : "-");
}

}  // namespace mineru::jobs
