// SPDX-License-Identifier: Apache-2.0
// One node's side of the task store (tasks/task_store.h): what lets a TaskManager answer tasks
// that another node accepted, and lets other nodes answer its own.
//
// As an owner, the node publishes its tasks: a new task at once (before its id is handed out,
// so any node can answer it as soon as the client knows it), every later change from a
// background thread (coalesced: a burst of progress is one write), the outputs of a completed
// task before its final state (a node that reads "completed" finds them), and it forgets a task
// in the store when it forgets it locally (deleted, or past retention). The same thread renews
// the node's lease and carries out the cancel and delete requests other nodes leave for it.
//
// For a task it does not own, the node reads the store: the state (a non-final task whose owner
// lost its lease reads as failed: no one will finish it), the outputs (kept in memory for
// repeated requests, e.g. a page's images), subscriptions (polled every
// kSharedTaskPollInterval), and cancel/delete (sent to the owner).
//
// Redis failing costs only the sharing: the node still runs and answers its own tasks, other
// nodes stop seeing its changes until Redis is back (then the next change is published), and
// every failure is reported to on_error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cache/byte_lru.h"
#include "cache/document_outputs.h"
#include "tasks/task.h"
#include "tasks/task_store.h"

namespace mineru::jobs {

// How often subscriptions to other nodes' tasks and this node's request list are polled (and
// its lease renewed).
inline constexpr std::chrono::milliseconds kSharedTaskPollInterval{250};

// What the sharing needs from its TaskManager. Called on the sharing's thread without any of
// its locks held.
struct SharedTasksHooks {
  // This node's current state of one of its tasks; nullopt when it has none by that id.
  std::function<std::optional<TaskInfo>(const std::string& id)> snapshot;
  // Carry out another node's request for one of this node's tasks.
  std::function<void(const std::string& id)> cancel;
  std::function<void(const std::string& id)> remove;
  // A failed Redis operation (metrics).
  std::function<void(const Error& error)> on_error;
};

class SharedTasks {
 public:
  using Subscriber = std::function<bool(const TaskInfo& info)>;
  // Tokens of subscriptions to other nodes' tasks have this bit set (the manager's own don't).
  static constexpr uint64_t kForeignTokenBit = uint64_t{1} << 62;

  // Starts the background thread. `store.max_outputs_bytes` also bounds the memory kept of
  // other nodes' outputs.
  SharedTasks(TaskStoreOptions store, SharedTasksHooks hooks);
  ~SharedTasks();  // Stop()
  SharedTasks(const SharedTasks&) = delete;
  SharedTasks& operator=(const SharedTasks&) = delete;

  // Joins the thread, publishes the last changes and gives up the lease (other nodes then see
  // this node's unfinished tasks as failed); no hook runs afterwards. Idempotent.
  void Stop();
  const std::string& node() const { return node_; }

  // --- This node's tasks.
  // Publishes a new task now (the caller's thread).
  void PublishNow(const TaskInfo& info);
  // The task changed: publish its state soon.
  void Changed(const std::string& id);
  // Stores a completed task's outputs (the caller's thread). An error (too large, Redis down)
  // is reported and returned; the task completes anyway, other nodes answer that its outputs
  // are not shared.
  Status PublishOutputs(const std::string& id, const std::vector<DocumentOutputs>& outputs);
  // The task is gone here: remove it from the store soon.
  void Forget(const std::string& id);

  // --- Other nodes' tasks (ids this node does not own).
  std::optional<TaskInfo> Get(const std::string& id);
  // As TaskManager::Outputs; kUnavailable (with the reason) when the owner could not share them.
  Result<std::vector<DocumentOutputs>> Outputs(const std::string& id);
  // Asks the owner to cancel or delete; returns the state before the request (nullopt: no such
  // task). A task whose owner is gone is removed from the store by the asking node.
  std::optional<TaskInfo> Request(const std::string& id, TaskRequest request);
  // As TaskManager::Subscribe; changes arrive up to kSharedTaskPollInterval late.
  uint64_t Subscribe(const std::string& id, Subscriber subscriber);
  void Unsubscribe(const std::string& id, uint64_t token);

 private:
  struct Sub {
    Subscriber fn;
    uint64_t seen = 0;  // version last delivered
    TaskInfo last;      // state last delivered
  };
  // Stored states of `ids`, with tasks whose owner lost its lease turned failed; nullopt on a
  // Redis error (reported).
  std::optional<std::vector<std::optional<SharedTask>>> Read(const std::vector<std::string>& ids);
  void Run();
  void PublishChanged();
  void Poll();

  const std::string node_;
  const TaskStoreOptions store_options_;
  const SharedTasksHooks hooks_;
  TaskStore store_;
  ByteLru<std::shared_ptr<const std::vector<DocumentOutputs>>> outputs_cache_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::set<std::string> changed_;
  std::vector<std::string> forgotten_;
  uint64_t next_version_ = 0;
  bool stopping_ = false;

  // Subscriptions to other nodes' tasks; held while subscribers are called, so that they are
  // called one at a time and never after Unsubscribe returned.
  std::mutex subs_mutex_;
  std::map<std::string, std::map<uint64_t, Sub>> subs_;
  uint64_t next_token_ = 0;

  std::thread thread_;
};

}  // namespace mineru::jobs
