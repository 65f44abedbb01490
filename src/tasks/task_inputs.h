// SPDX-License-Identifier: Apache-2.0
// What a task manager checks, measures and cleans on disk around its tasks' files: uploads are
// checked before anything is written, a finished task's files are measured for the retention
// quota, and task directories that a previous run left behind are removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "image/decode.h"
#include "image/image_budget.h"
#include "tasks/task.h"

namespace mineru::jobs {

// kInvalidArgument for no file, a name that is not a plain file name, or bytes that are neither a
// PDF (header in the first 1024 bytes, as PDF readers accept it) nor an image format we decode
// (MinerU's "Unsupported file type" message); kResourceExhausted for more than `max_files`.
// An image's header is probed (image/probe.h) against `limits` and `budget`: a declared size
// past a decoding limit, or decoded bytes over budget.max_request_decoded_bytes, is
// kInvalidArgument naming the file and the limit, before anything is written (an image whose
// header is fine but whose data is not still fails in its task, as before).
Status CheckTaskInputs(const std::vector<TaskInput>& files, size_t max_files,
                       const image::DecodeLimits& limits = {},
                       const image::ImageBudget& budget = {});

// Sum of the sizes of the regular files under `dir`, recursively (symbolic links are neither
// followed nor counted); 0 when it does not exist. What the task's files cost on disk, to within
// the file system's block rounding.
uint64_t DirectoryBytes(const std::string& dir);

// Removes the directories in `work_dir` named like task ids, and only those (the work directory
// may be shared): a previous run's tasks cannot be reached any more, their ids lived in memory.
void RemoveStaleTaskDirectories(const std::string& work_dir);

}  // namespace mineru::jobs
