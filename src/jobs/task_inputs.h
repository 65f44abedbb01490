// SPDX-License-Identifier: Apache-2.0
// What a task manager checks and cleans on disk around its tasks' files: uploads are checked
// before anything is written, and task directories that a previous run left behind are removed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/task.h"

namespace mineru::jobs {

// kInvalidArgument for no file, a name that is not a plain file name, or bytes that are neither a
// PDF (header in the first 1024 bytes, as PDF readers accept it) nor an image format we decode
// (MinerU's "Unsupported file type" message); kResourceExhausted for more than `max_files`.
Status CheckTaskInputs(const std::vector<TaskInput>& files, size_t max_files);

// Removes the directories in `work_dir` named like task ids, and only those (the work directory
// may be shared): a previous run's tasks cannot be reached any more, their ids lived in memory.
void RemoveStaleTaskDirectories(const std::string& work_dir);

}  // namespace mineru::jobs
