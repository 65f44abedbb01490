// SPDX-License-Identifier: Apache-2.0
// A document task: one or more uploaded files parsed together through the pipeline, with the
// states MinerU's task API reports (pending -> processing -> completed | failed) plus cancelled.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/document_key.h"

namespace mineru::jobs {

enum class TaskStatus { kPending, kProcessing, kCompleted, kFailed, kCancelled };

// A random UUID, version 4 (RFC 4122), lower-case hex: MinerU's and Celery's task ids.
// Thread-safe.
std::string NewUuid4();
// Whether `text` has NewUuid4's form (36 characters, hex digits of either case, dashes at 8, 13,
// 18 and 23): what a task id must look like before it names a directory or a key.
bool LooksLikeTaskId(std::string_view text);

// "pending", "processing", "completed", "failed", "cancelled" (MinerU's names).
std::string_view TaskStatusName(TaskStatus status);
inline bool IsFinal(TaskStatus s) {
  return s != TaskStatus::kPending && s != TaskStatus::kProcessing;
}

struct TaskInput {
  std::string name;   // file name as uploaded, already sanitised (no directories, no leading '.')
  std::string bytes;  // the document: a PDF or an image
};

struct TaskProgress {
  int documents_done = 0;
  int documents_total = 0;
  int pages_done = 0;   // over every document so far
  int pages_total = 0;  // of the documents started so far
  int64_t blocks_done = 0;
  int64_t generated_tokens = 0;
};

using WallClock = std::chrono::system_clock;

// A snapshot of a task, safe to hand to any thread.
struct TaskInfo {
  std::string id;
  TaskStatus status = TaskStatus::kPending;
  std::vector<std::string> file_names;  // as uploaded (sanitised)
  std::vector<std::string> documents;   // output names (file stems, made unique), same order
  ParseOptions options;
  WallClock::time_point created_at;
  std::optional<WallClock::time_point> started_at;
  std::optional<WallClock::time_point> completed_at;
  std::optional<std::string> error;  // failed: why
  int queued_ahead = 0;              // pending: tasks that start before this one
  TaskProgress progress;
  int cache_hits = 0;  // documents answered from the result cache
  // Near-duplicate hints: "<task id>/<document>" of recently parsed documents whose first page
  // looks like this one's (perceptual hashes within image::kNearDuplicateDistance bits). A hint
  // for people, never used to answer: the outputs always come from this document.
  std::vector<std::string> near_duplicates;
  // Opaque to the manager: what the submitting API wants to remember about the task (MinerU's
  // API keeps the backend name and the requested outputs here).
  std::string annotation;
};

}  // namespace mineru::jobs
