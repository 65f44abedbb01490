// SPDX-License-Identifier: Apache-2.0
// Runs document tasks in the background: a bounded queue of pending tasks, a fixed number of
// tasks parsed at once (their pages all share the one engine, which batches them), progress
// that subscribers hear after every page, cancellation, per-task deadlines, the result cache,
// and retention of finished tasks' files. With share_tasks, every node on one Redis answers
// every task (the one that accepted it runs it; tasks/shared_tasks.h).
//
//   auto manager = TaskManager::Create(generator, {.work_dir = "/var/lib/mineru/tasks"});
//   Result<TaskInfo> task = (*manager)->Submit({{"paper.pdf", bytes}}, {});
//   ... (*manager)->Get(task->id) ... (*manager)->Outputs(task->id) ...
//
// Files: <work_dir>/<task id>/input/<file name> (kept for page previews) and
// <work_dir>/<task id>/output/<name>/vlm/ (pipeline::ParseDocument's layout). A task's
// directory is removed when the task is deleted, when it ends failed or cancelled (it has no
// outputs to serve: only its state is kept), or when it leaves retention (tasks/task_retention.h:
// after `retention`, beyond `max_retained_tasks`, or beyond `max_retained_bytes` of files).
//
// Thread-safe. Subscriber callbacks run on task threads (and on the threads calling Subscribe,
// Cancel or Delete, or the sharing's thread for another node's task), one at a time per task
// and in order; they must be quick and must not call
// back into the manager. A subscriber returns false to stop hearing (e.g. its client left).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/block_cache.h"
#include "cache/document_outputs.h"
#include "cache/result_cache.h"
#include "cache/tiered_cache.h"
#include "pipeline/document.h"
#include "pipeline/generator.h"
#include "tasks/document_runner.h"
#include "tasks/task.h"

namespace mineru::jobs {

class SharedTasks;

struct TaskManagerOptions {
  static constexpr size_t kDefaultMaxQueuedTasks = 64;
  static constexpr int kDefaultConcurrentTasks = 2;
  static constexpr size_t kDefaultMaxTaskFiles = 16;
  static constexpr std::chrono::seconds kDefaultRetention{24 * 3600};  // MinerU's default
  static constexpr size_t kDefaultMaxRetainedTasks = 1000;
  static constexpr uint64_t kDefaultMaxRetainedBytes = uint64_t{8} << 30;

  // Where tasks keep their inputs and outputs; created when missing.
  std::string work_dir;
  // Pending tasks beyond which Submit is refused with kResourceExhausted (HTTP 429).
  size_t max_queued_tasks = kDefaultMaxQueuedTasks;
  // Tasks being parsed at once.
  int concurrent_tasks = kDefaultConcurrentTasks;
  // Files in one task.
  size_t max_task_files = kDefaultMaxTaskFiles;
  // A task still running this long after it started is cancelled and fails ("timed out");
  // zero: no limit.
  std::chrono::seconds task_timeout{0};
  // Finished tasks (and their files) are kept this long, then deleted.
  std::chrono::seconds retention = kDefaultRetention;
  // Finished tasks kept at most; beyond it the oldest finished ones are deleted first.
  size_t max_retained_tasks = kDefaultMaxRetainedTasks;
  // Bytes of the files (inputs and outputs) of finished tasks kept at most, measured when a
  // task's thread lets go of them; beyond it the oldest finished tasks are deleted first (never
  // one whose thread still holds its files). Exactly the bound is kept; a task alone larger
  // than it is deleted when it finishes. Failed and cancelled tasks keep no files.
  uint64_t max_retained_bytes = kDefaultMaxRetainedBytes;
  // Pipeline settings for every document (page range, formula and table come per task).
  pipeline::DocumentOptions document;
  // Identifies the model's weights and settings in cache keys.
  std::string model_fingerprint;
  // In-process result cache bound (0: off; with no cache_url either, identical
  // documents in flight are no longer run once).
  uint64_t cache_bytes = kDefaultCacheBytes;
  // The shared document cache behind it (cache/redis_cache.h):
  // redis://[[user]:password@]host[:port][/db]; empty: none. Create refuses a malformed URL; an
  // unreachable Redis only costs cache hits.
  std::string cache_url;
  std::chrono::seconds cache_ttl = kDefaultRedisTtl;
  uint64_t cache_max_value_bytes = kDefaultMaxRedisValueBytes;
  // The cache of single answers (layouts, blocks; cache/block_cache.h), built by the caller
  // and shared with the model's other users (the chat API); must outlive the manager. Null: the
  // manager keeps one of its own, of block_cache_bytes (0: off) with cache_url's Redis behind it.
  BlockCache* block_cache = nullptr;
  uint64_t block_cache_bytes = kDefaultBlockCacheBytes;

  // Shares every task with the other nodes using the same Redis (cache_url; required): each
  // task's state and, once completed, its outputs are kept there for `retention`, so any node
  // answers any task (tasks/shared_tasks.h). Outputs larger than cache_max_value_bytes are not
  // shared (their owner still answers them).
  bool share_tasks = false;

  // Parses documents elsewhere (tasks/document_runner.h); null: the pipeline, here, on the
  // generator. Must outlive the manager.
  DocumentRunner* runner = nullptr;

  // Observers for metrics (called on task threads; quick, no calls into the manager).
  std::function<void(double page_seconds)> on_page;
  std::function<void(TaskStatus status, double seconds)> on_task_finished;
  // Per lookup of a document cache tier ("memory", "redis"; cache/tiered_cache.h).
  std::function<void(std::string_view tier, bool hit)> on_cache_lookup;
  // Per failed lookup or store of a tier (Redis unreachable or refusing, a corrupt value).
  std::function<void(std::string_view tier, const Error& error)> on_cache_error;
  // Per failed read or write of shared task state (share_tasks).
  std::function<void(const Error& error)> on_share_error;
};

struct TaskCounts {
  int64_t pending = 0, processing = 0, completed = 0, failed = 0, cancelled = 0;
};

class TaskManager {
 public:
  using Subscriber = std::function<bool(const TaskInfo& info)>;

  static Result<std::unique_ptr<TaskManager>> Create(pipeline::Generator& generator,
                                                     TaskManagerOptions options);
  // Cancels running tasks, drops pending ones and joins the threads.
  ~TaskManager();
  TaskManager(const TaskManager&) = delete;
  TaskManager& operator=(const TaskManager&) = delete;

  // Queues a task. Errors: kInvalidArgument (no files, too many, a bad name, a file that is
  // neither a PDF nor a supported image), kResourceExhausted (max_queued_tasks pending),
  // kUnavailable (shutting down), kIo (the work directory).
  // `annotation` is kept in TaskInfo::annotation.
  Result<TaskInfo> Submit(std::vector<TaskInput> files, const ParseOptions& options,
                          std::string annotation = "");

  std::optional<TaskInfo> Get(const std::string& id) const;
  // The outputs of a completed task, one per document in order. kNotFound for an unknown id,
  // kUnavailable while pending or processing, kCancelled/kInternal for cancelled/failed ones.
  Result<std::vector<DocumentOutputs>> Outputs(const std::string& id) const;
  // Path of a task's input file `document` (index into TaskInfo::documents); kNotFound for
  // another node's task (only its owner keeps the inputs) and for a failed or cancelled one
  // (whose files are removed when it ends).
  Result<std::string> InputPath(const std::string& id, size_t document) const;
  // The bytes of image `name` of a completed task's `document` (images/<name>); errors as
  // Outputs, and kNotFound for an image that is not there (or a name that is not a plain file
  // name).
  Result<std::string> OutputImage(const std::string& id, size_t document,
                                  const std::string& name) const;

  // Cancels a pending or processing task (it ends kCancelled); a finished one is unchanged.
  // Returns the task's state afterwards; nullopt for an unknown id.
  std::optional<TaskInfo> Cancel(const std::string& id);
  // Cancel, then forget the task and delete its files (once its thread has let go of them).
  // Returns the last state; nullopt for an unknown id.
  std::optional<TaskInfo> Delete(const std::string& id);

  // Calls `subscriber` with the task's current state now and after every change until it is
  // final (the final state is the last call) or it returns false. Returns a token for
  // Unsubscribe; 0 for an unknown id. Not from within a subscriber.
  uint64_t Subscribe(const std::string& id, Subscriber subscriber);
  void Unsubscribe(const std::string& id, uint64_t token);

  TaskCounts Counts() const;
  CacheStats CacheStatistics() const;
  // The in-process tier of the block cache the pages use (options.block_cache or its own).
  CacheStats BlockCacheStatistics() const;
  const TaskManagerOptions& options() const;

  class Impl;

 private:
  explicit TaskManager(std::unique_ptr<Impl> impl);
  // The sharing, when `id` may be another node's task (shared tasks, an id of the right form
  // that this node does not know); null otherwise.
  SharedTasks* SharedFor(const std::string& id) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::jobs
