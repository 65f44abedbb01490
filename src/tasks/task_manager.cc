// SPDX-License-Identifier: Apache-2.0
#include "tasks/task_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <span>
#include <thread>
#include <unordered_map>

#include "base/json.h"
#include "base/mapped_file.h"
#include "cache/block_cache.h"
#include "tasks/near_duplicates.h"
#include "tasks/shared_tasks.h"
#include "tasks/single_flight.h"
#include "tasks/task_inputs.h"
#include "tasks/task_retention.h"

namespace mineru::jobs {
namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

namespace {

// How often the janitor looks for expired tasks and tasks past their deadline.
constexpr std::chrono::milliseconds kJanitorInterval{500};

int CountPages(const std::string& middle_json) {
  auto json = ParseJson(middle_json, "middle.json", JsonFileLimits());
  if (!json || !json->is_object()) return 0;
  auto it = json->find("pdf_info");
  return it != json->end() && it->is_array() ? static_cast<int>(it->size()) : 0;
}

double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

struct Task {
  TaskInfo info;  // queued_ahead is filled in snapshots
  std::string dir;
  std::vector<std::string> input_paths;
  std::vector<std::string> cache_keys;
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  bool timed_out = false;
  bool running = false;           // a task thread holds it
  bool delete_when_done = false;  // Delete while running: remove once the thread lets go
  bool files_removed = false;     // failed or cancelled: its directory is gone, its state kept
  SteadyClock::time_point started;
  SteadyClock::time_point finished;
  uint64_t version = 0;  // bumped on every change (orders notifications)

  // Notification delivery, serialised per task; lock order: notify_mutex, then the manager's.
  struct Sub {
    TaskManager::Subscriber fn;
    uint64_t seen = 0;  // highest version delivered to it
  };
  std::mutex notify_mutex;
  std::map<uint64_t, Sub> subscribers;
};

class TaskManager::Impl {
 public:
  Impl(pipeline::Generator& generator, TaskManagerOptions options,
       std::unique_ptr<RedisCache> redis, std::unique_ptr<BlockCache> own_block_cache)
      : generator_(generator),
        options_(std::move(options)),
        cache_(options_.cache_bytes, std::move(redis),
               {options_.on_cache_lookup, options_.on_cache_error}),
        own_block_cache_(std::move(own_block_cache)),
        block_cache_(options_.block_cache ? *options_.block_cache : *own_block_cache_),
        retained_({.retention = options_.retention,
                   .max_tasks = options_.max_retained_tasks,
                   .max_bytes = options_.max_retained_bytes}) {}

  ~Impl() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      for (auto& [id, task] : tasks_) task->cancel->store(true);
    }
    changed_.notify_all();
    janitor_wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    if (janitor_.joinable()) janitor_.join();
    // Last: the tasks' final states go out, then no hook calls into this object any more.
    if (shared_) shared_->Stop();
  }

  // Shares this manager's tasks through Redis (TaskManagerOptions::share_tasks); before Start.
  void Share(TaskStoreOptions store) {
    shared_ = std::make_unique<SharedTasks>(
        std::move(store), SharedTasksHooks{
                              .snapshot = [this](const std::string& id) { return Get(id); },
                              .cancel = [this](const std::string& id) { Cancel(id); },
                              .remove = [this](const std::string& id) { Delete(id); },
                              .on_error =
                                  [this](const Error& e) {
                                    if (options_.on_share_error) options_.on_share_error(e);
                                  },
                          });
  }
  SharedTasks* shared() const { return shared_.get(); }

  void Start() {
    for (int i = 0; i < options_.concurrent_tasks; ++i) workers_.emplace_back([this] { Work(); });
    janitor_ = std::thread([this] { Janitor(); });
  }

  Result<TaskInfo> Submit(std::vector<TaskInput> files, const ParseOptions& options,
                          std::string annotation) {
    MINERU_RETURN_IF_ERROR(CheckTaskInputs(files, options_.max_task_files,
                                           options_.document.image_decode.limits,
                                           options_.document.image_budget));
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return Fail(ErrorCode::kUnavailable, "the task manager is shutting down");
      if (pending_.size() >= options_.max_queued_tasks) return QueueFull();
    }

    auto task = std::make_shared<Task>();
    task->info.id = NewUuid4();
    task->info.options = options;
    task->info.annotation = std::move(annotation);
    task->info.created_at = WallClock::now();
    task->dir = (fs::path(options_.work_dir) / task->info.id).string();
    const fs::path input_dir = fs::path(task->dir) / "input";
    std::error_code ec;
    fs::create_directories(input_dir, ec);
    if (ec) return Fail(ErrorCode::kIo, "{}: cannot create: {}", input_dir.string(), ec.message());
    std::map<std::string, int> stems;
    for (TaskInput& f : files) {
      // Output names are file stems (MinerU's); two uploads with one stem get "_2", "_3", ...
      const fs::path path(f.name);
      std::string stem = path.stem().string();
      if (stem.empty()) stem = "document";
      if (const int n = ++stems[stem]; n > 1) stem += fmt::format("_{}", n);
      const std::string input = (input_dir / (stem + path.extension().string())).string();
      const auto* data = reinterpret_cast<const uint8_t*>(f.bytes.data());
      if (Status written = WriteFileAtomically(input, std::span(data, f.bytes.size())); !written) {
        fs::remove_all(task->dir, ec);
        return tl::unexpected(written.error());
      }
      task->info.file_names.push_back(f.name);
      task->info.documents.push_back(stem);
      task->input_paths.push_back(input);
      task->cache_keys.push_back(
          DocumentCacheKey(f.bytes, options_.model_fingerprint, task->info.options));
      std::string().swap(f.bytes);  // the upload's memory goes as soon as it is on disk
    }
    task->info.progress.documents_total = static_cast<int>(files.size());

    // Shared before its id is handed out: any node can answer it from then on.
    if (shared_) shared_->PublishNow(task->info);
    std::lock_guard lock(mutex_);
    if (stopping_ || pending_.size() >= options_.max_queued_tasks) {
      fs::remove_all(task->dir, ec);
      if (shared_) shared_->Forget(task->info.id);
      if (stopping_) return Fail(ErrorCode::kUnavailable, "the task manager is shutting down");
      return QueueFull();
    }
    tasks_[task->info.id] = task;
    pending_.push_back(task->info.id);
    changed_.notify_one();
    return SnapshotLocked(*task);
  }

  std::optional<TaskInfo> Get(const std::string& id) const {
    std::lock_guard lock(mutex_);
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return std::nullopt;
    return SnapshotLocked(*it->second);
  }

  Result<std::vector<DocumentOutputs>> Outputs(const std::string& id) const {
    std::vector<std::pair<std::string, std::string>> dirs;  // (dir, name)
    {
      std::lock_guard lock(mutex_);
      MINERU_ASSIGN_OR_RETURN(const Task* task, CompletedLocked(id));
      for (const std::string& name : task->info.documents) {
        dirs.emplace_back(OutputDir(*task, name), name);
      }
    }
    return ReadOutputs(dirs);
  }

  static Result<std::vector<DocumentOutputs>> ReadOutputs(
      const std::vector<std::pair<std::string, std::string>>& dirs) {
    std::vector<DocumentOutputs> out;
    for (const auto& [dir, name] : dirs) {
      MINERU_ASSIGN_OR_RETURN(DocumentOutputs outputs, ReadDocumentOutputs(dir, name));
      out.push_back(std::move(outputs));
    }
    return out;
  }

  Result<std::string> OutputDirectory(const std::string& id, size_t document) const {
    std::lock_guard lock(mutex_);
    MINERU_ASSIGN_OR_RETURN(const Task* task, CompletedLocked(id));
    if (document >= task->info.documents.size()) {
      return Fail(ErrorCode::kNotFound, "task {} has no document {}", id, document);
    }
    return OutputDir(*task, task->info.documents[document]);
  }

  Result<std::string> InputPath(const std::string& id, size_t document) const {
    std::lock_guard lock(mutex_);
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return Fail(ErrorCode::kNotFound, "task {} not found", id);
    if (document >= it->second->input_paths.size()) {
      return Fail(ErrorCode::kNotFound, "task {} has no document {}", id, document);
    }
    if (it->second->files_removed) {
      return Fail(ErrorCode::kNotFound, "task {} is {}: its files are not kept", id,
                  TaskStatusName(it->second->info.status));
    }
    return it->second->input_paths[document];
  }

  std::optional<TaskInfo> Cancel(const std::string& id) {
    std::shared_ptr<Task> task;
    {
      std::lock_guard lock(mutex_);
      auto it = tasks_.find(id);
      if (it == tasks_.end()) return std::nullopt;
      task = it->second;
      if (!CancelLocked(*task)) return SnapshotLocked(*task);
    }
    Notify(*task);
    return Get(id);
  }

  std::optional<TaskInfo> Delete(const std::string& id) {
    std::shared_ptr<Task> task;
    {
      std::lock_guard lock(mutex_);
      auto it = tasks_.find(id);
      if (it == tasks_.end()) return std::nullopt;
      task = it->second;
      CancelLocked(*task);
    }
    Notify(*task);
    std::lock_guard lock(mutex_);
    TaskInfo last = SnapshotLocked(*task);
    tasks_.erase(id);
    retained_.Remove(id);
    if (shared_) shared_->Forget(id);
    if (task->running) {
      task->delete_when_done = true;
    } else {
      RemoveFiles(*task);
    }
    return last;
  }

  uint64_t Subscribe(const std::string& id, Subscriber subscriber) {
    std::shared_ptr<Task> task;
    {
      std::lock_guard lock(mutex_);
      auto it = tasks_.find(id);
      if (it == tasks_.end()) return 0;
      task = it->second;
    }
    std::lock_guard notify(task->notify_mutex);
    uint64_t version;
    TaskInfo info;
    uint64_t token;
    {
      std::lock_guard lock(mutex_);
      info = SnapshotLocked(*task);
      version = task->version;
      token = ++next_token_;
    }
    if (subscriber(info) && !IsFinal(info.status)) {
      task->subscribers[token] = {std::move(subscriber), version};
    }
    return token;
  }

  void Unsubscribe(const std::string& id, uint64_t token) {
    std::shared_ptr<Task> task;
    {
      std::lock_guard lock(mutex_);
      auto it = tasks_.find(id);
      if (it == tasks_.end()) return;
      task = it->second;
    }
    std::lock_guard notify(task->notify_mutex);
    task->subscribers.erase(token);
  }

  TaskCounts Counts() const {
    std::lock_guard lock(mutex_);
    TaskCounts c;
    for (const auto& [id, task] : tasks_) {
      switch (task->info.status) {
        case TaskStatus::kPending:
          ++c.pending;
          break;
        case TaskStatus::kProcessing:
          ++c.processing;
          break;
        case TaskStatus::kCompleted:
          ++c.completed;
          break;
        case TaskStatus::kFailed:
          ++c.failed;
          break;
        case TaskStatus::kCancelled:
          ++c.cancelled;
          break;
      }
    }
    return c;
  }

  CacheStats CacheStatistics() const { return cache_.MemoryStats(); }
  CacheStats BlockCacheStatistics() const { return block_cache_.Stats(); }
  const TaskManagerOptions& options() const { return options_; }

 private:
  tl::unexpected<Error> QueueFull() const {
    return Fail(ErrorCode::kResourceExhausted,
                "the task queue is full ({} tasks waiting); retry later", pending_.size());
  }

  // The task when it completed; the reason it has no outputs otherwise.
  Result<const Task*> CompletedLocked(const std::string& id) const {
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return Fail(ErrorCode::kNotFound, "task {} not found", id);
    const Task& task = *it->second;
    switch (task.info.status) {
      case TaskStatus::kPending:
      case TaskStatus::kProcessing:
        return Fail(ErrorCode::kUnavailable, "task {} is {}", id, TaskStatusName(task.info.status));
      case TaskStatus::kCancelled:
        return Fail(ErrorCode::kCancelled, "task {} was cancelled", id);
      case TaskStatus::kFailed:
        return Fail(ErrorCode::kInternal, "task {} failed: {}", id,
                    task.info.error.value_or("unknown error"));
      case TaskStatus::kCompleted:
        break;
    }
    return &task;
  }

  std::string OutputDir(const Task& task, const std::string& name) const {
    return (fs::path(task.dir) / "output" / name / "vlm").string();
  }

  TaskInfo SnapshotLocked(const Task& task) const {
    TaskInfo info = task.info;
    if (info.status == TaskStatus::kPending) {
      auto it = std::find(pending_.begin(), pending_.end(), info.id);
      info.queued_ahead = static_cast<int>(it - pending_.begin());
    }
    return info;
  }

  void FinishLocked(Task& task, TaskStatus status, std::optional<std::string> error) {
    task.info.status = status;
    task.info.error = std::move(error);
    task.info.completed_at = WallClock::now();
    task.finished = SteadyClock::now();
    ++task.version;
    retained_.Add(task.info.id, task.finished);
  }

  // Returns whether the task changed (it was pending or processing).
  bool CancelLocked(Task& task) {
    if (IsFinal(task.info.status)) return false;
    task.cancel->store(true);
    if (task.info.status == TaskStatus::kPending) {
      pending_.erase(std::find(pending_.begin(), pending_.end(), task.info.id));
    }
    const bool was_running = task.info.status == TaskStatus::kProcessing;
    FinishLocked(task, TaskStatus::kCancelled, std::nullopt);
    if (!task.running) RemoveFilesOfUnfinished(task);  // else when its thread lets go
    if (options_.on_task_finished) {
      options_.on_task_finished(TaskStatus::kCancelled,
                                was_running ? SecondsBetween(task.started, task.finished) : 0);
    }
    return true;
  }

  // Delivers the task's current state to its subscribers (in version order; drops those that
  // return false and, once the state is final, all of them).
  void Notify(Task& task) {
    if (shared_) shared_->Changed(task.info.id);
    std::lock_guard notify(task.notify_mutex);
    TaskInfo info;
    uint64_t version;
    {
      std::lock_guard lock(mutex_);
      info = SnapshotLocked(task);
      version = task.version;
    }
    for (auto it = task.subscribers.begin(); it != task.subscribers.end();) {
      Task::Sub& sub = it->second;
      if (sub.seen >= version) {
        ++it;
        continue;
      }
      sub.seen = version;
      if (!sub.fn(info)) {
        it = task.subscribers.erase(it);
      } else {
        ++it;
      }
    }
    if (IsFinal(info.status)) task.subscribers.clear();
  }

  void RemoveFiles(const Task& task) {
    std::error_code ec;
    fs::remove_all(task.dir, ec);
  }

  // A failed or cancelled task has no outputs to serve: its files go as soon as no thread holds
  // them (an upload that fails at once must not stay on disk for the whole retention).
  void RemoveFilesOfUnfinished(Task& task) {
    RemoveFiles(task);
    task.files_removed = true;
  }

  // Deletes the finished tasks that leave retention now (tasks/task_retention.h).
  void EvictLocked(SteadyClock::time_point now) {
    const auto held = [this](const std::string& id) {
      auto it = tasks_.find(id);
      return it != tasks_.end() && it->second->running;
    };
    for (const std::string& id : retained_.TakeLeaving(now, held)) {
      auto it = tasks_.find(id);
      if (it == tasks_.end()) continue;
      RemoveFiles(*it->second);
      if (shared_) shared_->Forget(id);
      tasks_.erase(it);
    }
  }

  void Work() {
    while (true) {
      std::shared_ptr<Task> task;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
        if (stopping_) return;
        task = tasks_.at(pending_.front());
        pending_.pop_front();
        if (shared_) {
          for (const std::string& id : pending_) shared_->Changed(id);  // queued_ahead moved
        }
        task->info.status = TaskStatus::kProcessing;
        task->info.started_at = WallClock::now();
        task->started = SteadyClock::now();
        task->running = true;
        ++task->version;
      }
      Notify(*task);
      Run(*task);
      bool completed;
      {
        std::lock_guard lock(mutex_);
        completed = task->info.status == TaskStatus::kCompleted && !task->delete_when_done;
      }
      // Measured while this thread still holds the files (nobody removes them meanwhile), and
      // outside the lock: a long document has many files.
      const uint64_t bytes = completed ? DirectoryBytes(task->dir) : 0;
      {
        std::lock_guard lock(mutex_);
        task->running = false;
        if (task->delete_when_done) {
          RemoveFiles(*task);
        } else if (task->info.status != TaskStatus::kCompleted) {
          RemoveFilesOfUnfinished(*task);
        } else {
          retained_.SetBytes(task->info.id, bytes);
        }
        EvictLocked(SteadyClock::now());  // over the byte quota now, not at the janitor's turn
      }
      Notify(*task);
    }
  }

  // Parses the task's documents one after another (each document's pages overlap in the
  // engine); a document that fails as a whole fails the task.
  void Run(Task& task) {
    std::optional<std::string> error;
    for (size_t d = 0; d < task.input_paths.size() && !error; ++d) {
      if (task.cancel->load()) break;
      error = RunDocument(task, d);
      std::lock_guard lock(mutex_);
      ++task.info.progress.documents_done;
      ++task.version;
    }
    // Other nodes that read "completed" must find the outputs: they go first.
    if (shared_ && !error && !task.cancel->load()) {
      std::vector<std::pair<std::string, std::string>> dirs;
      for (const std::string& name : task.info.documents) {
        dirs.emplace_back(OutputDir(task, name), name);
      }
      if (auto outputs = ReadOutputs(dirs)) shared_->PublishOutputs(task.info.id, *outputs);
    }
    std::lock_guard lock(mutex_);
    if (IsFinal(task.info.status)) return;  // cancelled meanwhile (already counted)
    TaskStatus status = TaskStatus::kCompleted;
    if (task.timed_out) {
      status = TaskStatus::kFailed;
      error = fmt::format("timed out after {} s", options_.task_timeout.count());
    } else if (task.cancel->load()) {
      status = TaskStatus::kCancelled;
      error.reset();
    } else if (error) {
      status = TaskStatus::kFailed;
    }
    FinishLocked(task, status, std::move(error));
    if (options_.on_task_finished) {
      options_.on_task_finished(status, SecondsBetween(task.started, task.finished));
    }
  }

  // nullopt on success, else why the document failed.
  std::optional<std::string> RunDocument(Task& task, size_t d) {
    const std::string& name = task.info.documents[d];
    const std::string out_dir = OutputDir(task, name);
    const std::string& key = task.cache_keys[d];
    std::optional<SingleFlights::Claim> flight;
    if (cache_.enabled()) flight.emplace(flights_, key, *task.cancel);
    if (cache_.enabled()) {
      std::shared_ptr<const DocumentOutputs> hit = cache_.Get(key);
      if (hit) {
        DocumentOutputs renamed = *hit;
        renamed.name = name;
        if (Status written = WriteDocumentOutputs(renamed, out_dir); !written) {
          return fmt::format("Failed to process file: {}: {}", task.info.file_names[d],
                             written.error().ToString());
        }
        const int pages = CountPages(hit->middle_json);
        std::lock_guard lock(mutex_);
        task.info.progress.pages_total += pages;
        task.info.progress.pages_done += pages;
        ++task.info.cache_hits;
        ++task.version;
        return std::nullopt;
      }
    }

    pipeline::DocumentOptions options = options_.document;
    options.extract.formula = task.info.options.formula;
    options.extract.table = task.info.options.table;
    if (task.info.options.image_analysis) {
      options.extract.image_analysis = *task.info.options.image_analysis;
    }
    options.start_page = task.info.options.start_page;
    options.end_page = task.info.options.end_page;
    options.cancel = task.cancel;
    if (block_cache_.enabled()) options.extract.cache = &block_cache_;
    TaskProgress base;
    {
      std::lock_guard lock(mutex_);
      base = task.info.progress;
    }
    auto progress = [&](const pipeline::DocumentProgress& p) {
      if (options_.on_page) options_.on_page(p.last_page_seconds);
      {
        std::lock_guard lock(mutex_);
        TaskProgress& now = task.info.progress;
        now.pages_total = base.pages_total + p.pages_total;
        now.pages_done = base.pages_done + p.pages_done;
        now.blocks_done = base.blocks_done + p.blocks_done;
        now.generated_tokens = base.generated_tokens + p.generated_tokens;
        ++task.version;
      }
      Notify(task);
    };
    const std::string output_root = (fs::path(task.dir) / "output").string();
    auto result = options_.runner
                      ? options_.runner->Run(task.input_paths[d], output_root, options, progress)
                      : pipeline::ParseDocument(generator_, task.input_paths[d], output_root,
                                                options, progress);
    if (!result) {
      if (result.error().code == ErrorCode::kCancelled) return std::nullopt;
      return fmt::format("Failed to process file: {}: {}", task.info.file_names[d],
                         result.error().message);
    }
    if (!result->page_hashes.empty() && result->page_hashes[0] != 0) {
      NoteFirstPage(task, name, result->page_hashes[0]);
    }
    // Only complete parses are cached: a failed page may be a passing fault.
    if (cache_.enabled() && result->failed_pages.empty()) {
      auto outputs = ReadDocumentOutputs(out_dir, name);
      if (outputs) {
        outputs->name.clear();  // cached under the content, not the upload's name
        cache_.Put(key, std::make_shared<const DocumentOutputs>(std::move(*outputs)));
      }
    }
    return std::nullopt;
  }

  // Records a document's first-page hash and names the recent documents that look alike.
  void NoteFirstPage(Task& task, const std::string& name, uint64_t hash) {
    std::lock_guard lock(mutex_);
    for (std::string& alike : recent_first_pages_.Note(hash, task.info.id, name)) {
      task.info.near_duplicates.push_back(std::move(alike));
    }
    ++task.version;
  }

  void Janitor() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      janitor_wake_.wait_for(lock, kJanitorInterval);
      if (stopping_) return;
      const SteadyClock::time_point now = SteadyClock::now();
      if (options_.task_timeout.count() > 0) {
        for (auto& [id, task] : tasks_) {
          if (task->info.status == TaskStatus::kProcessing && !task->timed_out &&
              now - task->started > options_.task_timeout) {
            task->timed_out = true;
            task->cancel->store(true);
          }
        }
      }
      EvictLocked(now);
    }
  }

  pipeline::Generator& generator_;
  const TaskManagerOptions options_;
  TieredCache cache_;
  const std::unique_ptr<BlockCache> own_block_cache_;  // when options_.block_cache is null
  BlockCache& block_cache_;                            // the one the pages use
  mutable std::mutex mutex_;
  std::condition_variable changed_;       // task threads: a task is pending, or stopping
  std::condition_variable janitor_wake_;  // the janitor: stopping
  SingleFlights flights_;                 // documents being parsed, by cache key
  RecentFirstPages recent_first_pages_;   // near-duplicate hints
  std::unordered_map<std::string, std::shared_ptr<Task>> tasks_;
  std::deque<std::string> pending_;
  RetainedTasks retained_;  // finished tasks, in the order they finished
  bool stopping_ = false;
  uint64_t next_token_ = 0;
  std::vector<std::thread> workers_;
  std::thread janitor_;
  std::unique_ptr<SharedTasks> shared_;  // null unless share_tasks
};

Result<std::unique_ptr<TaskManager>> TaskManager::Create(pipeline::Generator& generator,
                                                         TaskManagerOptions options) {
  if (options.work_dir.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "the task work directory is not set");
  }
  if (options.concurrent_tasks < 1) {
    return Fail(ErrorCode::kInvalidArgument, "concurrent_tasks must be at least 1, not {}",
                options.concurrent_tasks);
  }
  if (options.max_task_files < 1) {
    return Fail(ErrorCode::kInvalidArgument, "max_task_files must be at least 1");
  }
  std::error_code ec;
  fs::create_directories(options.work_dir, ec);
  if (ec) {
    return Fail(ErrorCode::kIo, "{}: cannot create: {}", options.work_dir, ec.message());
  }
  RemoveStaleTaskDirectories(options.work_dir);
  std::unique_ptr<RedisCache> redis;
  if (!options.cache_url.empty()) {
    MINERU_ASSIGN_OR_RETURN(RedisOptions server, ParseRedisUrl(options.cache_url));
    MINERU_ASSIGN_OR_RETURN(redis,
                            RedisCache::Create({.redis = std::move(server),
                                                .ttl = options.cache_ttl,
                                                .max_value_bytes = options.cache_max_value_bytes}));
  }
  std::optional<TaskStoreOptions> store;
  if (options.share_tasks) {
    if (options.cache_url.empty()) {
      return Fail(ErrorCode::kInvalidArgument, "sharing tasks needs a Redis cache URL");
    }
    MINERU_ASSIGN_OR_RETURN(RedisOptions server, ParseRedisUrl(options.cache_url));
    store = TaskStoreOptions{.redis = std::move(server),
                             .ttl = std::max(options.retention, std::chrono::seconds(1)),
                             .max_outputs_bytes = options.cache_max_value_bytes};
  }
  std::unique_ptr<BlockCache> own_block_cache;
  if (options.block_cache == nullptr) {
    MINERU_ASSIGN_OR_RETURN(own_block_cache,
                            MakeBlockCache(options.block_cache_bytes, options.model_fingerprint,
                                           options.cache_url, options.cache_ttl));
  }
  auto impl = std::make_unique<Impl>(generator, std::move(options), std::move(redis),
                                     std::move(own_block_cache));
  if (store) impl->Share(std::move(*store));
  impl->Start();
  return std::unique_ptr<TaskManager>(new TaskManager(std::move(impl)));
}

TaskManager::TaskManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TaskManager::~TaskManager() = default;

Result<TaskInfo> TaskManager::Submit(std::vector<TaskInput> files, const ParseOptions& options,
                                     std::string annotation) {
  return impl_->Submit(std::move(files), options, std::move(annotation));
}

// Every lookup asks this node first; a task it does not know may be another node's (when tasks
// are shared), and only an id of the right form is worth a round trip to Redis.
SharedTasks* TaskManager::SharedFor(const std::string& id) const {
  SharedTasks* shared = impl_->shared();
  return shared && LooksLikeTaskId(id) && !impl_->Get(id) ? shared : nullptr;
}

std::optional<TaskInfo> TaskManager::Get(const std::string& id) const {
  if (auto local = impl_->Get(id)) return local;
  SharedTasks* shared = SharedFor(id);
  return shared ? shared->Get(id) : std::nullopt;
}

Result<std::vector<DocumentOutputs>> TaskManager::Outputs(const std::string& id) const {
  if (SharedTasks* shared = SharedFor(id)) return shared->Outputs(id);
  return impl_->Outputs(id);
}

Result<std::string> TaskManager::InputPath(const std::string& id, size_t document) const {
  if (SharedTasks* shared = SharedFor(id)) {
    if (shared->Get(id)) {
      return Fail(ErrorCode::kNotFound,
                  "task {} was accepted by another node, which alone keeps its input files", id);
    }
  }
  return impl_->InputPath(id, document);
}

Result<std::string> TaskManager::OutputImage(const std::string& id, size_t document,
                                             const std::string& name) const {
  if (!IsPlainFileName(name)) return Fail(ErrorCode::kNotFound, "no image '{}'", name);
  if (SharedTasks* shared = SharedFor(id)) {
    MINERU_ASSIGN_OR_RETURN(std::vector<DocumentOutputs> outputs, shared->Outputs(id));
    if (document >= outputs.size()) {
      return Fail(ErrorCode::kNotFound, "task {} has no document {}", id, document);
    }
    for (auto& [file, bytes] : outputs[document].images) {
      if (file == name) return std::move(bytes);
    }
    return Fail(ErrorCode::kNotFound, "no image '{}'", name);
  }
  MINERU_ASSIGN_OR_RETURN(std::string dir, impl_->OutputDirectory(id, document));
  auto bytes = ReadFileToString(dir + "/images/" + name, kDefaultMaxOutputBytes);
  if (!bytes) return Fail(ErrorCode::kNotFound, "no image '{}'", name);
  return std::move(*bytes);
}

std::optional<TaskInfo> TaskManager::Cancel(const std::string& id) {
  if (SharedTasks* shared = SharedFor(id)) return shared->Request(id, TaskRequest::kCancel);
  return impl_->Cancel(id);
}

std::optional<TaskInfo> TaskManager::Delete(const std::string& id) {
  if (SharedTasks* shared = SharedFor(id)) return shared->Request(id, TaskRequest::kDelete);
  return impl_->Delete(id);
}

uint64_t TaskManager::Subscribe(const std::string& id, Subscriber subscriber) {
  if (SharedTasks* shared = SharedFor(id)) return shared->Subscribe(id, std::move(subscriber));
  return impl_->Subscribe(id, std::move(subscriber));
}

void TaskManager::Unsubscribe(const std::string& id, uint64_t token) {
  if (token & SharedTasks::kForeignTokenBit) {
    if (SharedTasks* shared = impl_->shared()) shared->Unsubscribe(id, token);
    return;
  }
  impl_->Unsubscribe(id, token);
}
TaskCounts TaskManager::Counts() const { return impl_->Counts(); }
CacheStats TaskManager::CacheStatistics() const { return impl_->CacheStatistics(); }
CacheStats TaskManager::BlockCacheStatistics() const { return impl_->BlockCacheStatistics(); }
const TaskManagerOptions& TaskManager::options() const { return impl_->options(); }

}  // namespace mineru::jobs
