// SPDX-License-Identifier: Apache-2.0
#include "tasks/shared_tasks.h"

#include <fmt/format.h>

namespace mineru::jobs {
namespace {

constexpr std::string_view kOwnerGone =
    "the node that accepted the task stopped before the task finished";

uint64_t OutputsCost(const std::string& id, const std::vector<DocumentOutputs>& outputs) {
  uint64_t cost = id.size();
  for (const DocumentOutputs& o : outputs) cost += o.ByteSize();
  return cost;
}

}  // namespace

SharedTasks::SharedTasks(TaskStoreOptions store, SharedTasksHooks hooks)
    : node_(NewUuid4()),
      store_options_(store),
      hooks_(std::move(hooks)),
      store_(std::move(store)),
      outputs_cache_(store_options_.max_outputs_bytes) {
  thread_ = std::thread([this] { Run(); });
}

SharedTasks::~SharedTasks() { Stop(); }

void SharedTasks::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  PublishChanged();
  if (Status ended = store_.EndLease(node_); !ended) hooks_.on_error(ended.error());
}

void SharedTasks::PublishNow(const TaskInfo& info) {
  uint64_t version;
  {
    std::lock_guard lock(mutex_);
    version = ++next_version_;
  }
  if (Status put = store_.Put({{info, node_, version}}); !put) hooks_.on_error(put.error());
}

void SharedTasks::Changed(const std::string& id) {
  {
    std::lock_guard lock(mutex_);
    changed_.insert(id);
  }
  wake_.notify_one();
}

Status SharedTasks::PublishOutputs(const std::string& id,
                                   const std::vector<DocumentOutputs>& outputs) {
  Status put = store_.PutOutputs(id, outputs);
  if (!put) hooks_.on_error(put.error());
  return put;
}

void SharedTasks::Forget(const std::string& id) {
  {
    std::lock_guard lock(mutex_);
    forgotten_.push_back(id);
    changed_.erase(id);
  }
  wake_.notify_one();
}

std::optional<std::vector<std::optional<SharedTask>>> SharedTasks::Read(
    const std::vector<std::string>& ids) {
  auto tasks = store_.Get(ids);
  if (!tasks) {
    hooks_.on_error(tasks.error());
    return std::nullopt;
  }
  std::vector<std::string> owners;
  for (const auto& t : *tasks) {
    if (t && !IsFinal(t->info.status)) owners.push_back(t->node);
  }
  if (owners.empty()) return std::move(*tasks);
  auto alive = store_.Alive(owners);
  if (!alive) {
    hooks_.on_error(alive.error());
    return std::move(*tasks);  // state as stored: better than none
  }
  size_t next = 0;
  for (auto& t : *tasks) {
    if (!t || IsFinal(t->info.status)) continue;
    if (!(*alive)[next++]) {
      t->info.status = TaskStatus::kFailed;
      t->info.error = std::string(kOwnerGone);
      t->version = UINT64_MAX;  // final: newer than anything the owner wrote
    }
  }
  return std::move(*tasks);
}

std::optional<TaskInfo> SharedTasks::Get(const std::string& id) {
  auto tasks = Read({id});
  if (!tasks || !(*tasks)[0]) return std::nullopt;
  return std::move((*tasks)[0]->info);
}

Result<std::vector<DocumentOutputs>> SharedTasks::Outputs(const std::string& id) {
  std::optional<TaskInfo> info = Get(id);
  if (!info) return Fail(ErrorCode::kNotFound, "task {} not found", id);
  switch (info->status) {
    case TaskStatus::kPending:
    case TaskStatus::kProcessing:
      return Fail(ErrorCode::kUnavailable, "task {} is {}", id, TaskStatusName(info->status));
    case TaskStatus::kCancelled:
      return Fail(ErrorCode::kCancelled, "task {} was cancelled", id);
    case TaskStatus::kFailed:
      return Fail(ErrorCode::kInternal, "task {} failed: {}", id,
                  info->error.value_or("unknown error"));
    case TaskStatus::kCompleted:
      break;
  }
  if (auto cached = outputs_cache_.Get(id)) return **cached;
  auto outputs = store_.GetOutputs(id);
  if (!outputs) {
    if (outputs.error().code != ErrorCode::kNotFound) hooks_.on_error(outputs.error());
    return Fail(ErrorCode::kUnavailable,
                "task {} completed on another node, which could not share its outputs (over "
                "the shared value cap, or Redis refused them): {}",
                id, outputs.error().message);
  }
  if (outputs->size() != info->documents.size()) {
    return Fail(ErrorCode::kUnavailable,
                "task {}: the shared store holds {} outputs for {} documents", id, outputs->size(),
                info->documents.size());
  }
  // The names come from the state (checked plain file names), not from the outputs' bytes.
  for (size_t d = 0; d < outputs->size(); ++d) (*outputs)[d].name = info->documents[d];
  const uint64_t cost = OutputsCost(id, *outputs);
  auto shared = std::make_shared<const std::vector<DocumentOutputs>>(std::move(*outputs));
  outputs_cache_.Put(id, shared, cost);
  return *shared;
}

std::optional<TaskInfo> SharedTasks::Request(const std::string& id, TaskRequest request) {
  auto tasks = store_.Get({id});
  if (!tasks) {
    hooks_.on_error(tasks.error());
    return std::nullopt;
  }
  if (!(*tasks)[0]) return std::nullopt;
  const SharedTask& task = *(*tasks)[0];
  auto alive = store_.Alive({task.node});
  if (alive && !(*alive)[0]) {
    // No one will carry the request out; a delete still removes the task for every node.
    if (request == TaskRequest::kDelete) {
      if (Status gone = store_.Forget(id); !gone) hooks_.on_error(gone.error());
    }
  } else if (Status sent = store_.Request(task.node, request, id); !sent) {
    hooks_.on_error(sent.error());
  }
  return task.info;
}

uint64_t SharedTasks::Subscribe(const std::string& id, Subscriber subscriber) {
  auto tasks = Read({id});
  if (!tasks || !(*tasks)[0]) return 0;
  const SharedTask& task = *(*tasks)[0];
  std::lock_guard lock(subs_mutex_);
  const uint64_t token = kForeignTokenBit | ++next_token_;
  if (subscriber(task.info) && !IsFinal(task.info.status)) {
    subs_[id][token] = {std::move(subscriber), task.version, task.info};
  }
  return token;
}

void SharedTasks::Unsubscribe(const std::string& id, uint64_t token) {
  std::lock_guard lock(subs_mutex_);
  auto it = subs_.find(id);
  if (it == subs_.end()) return;
  it->second.erase(token);
  if (it->second.empty()) subs_.erase(it);
}

void SharedTasks::Run() {
  auto next_poll = std::chrono::steady_clock::now();
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_until(lock, next_poll,
                       [&] { return stopping_ || !changed_.empty() || !forgotten_.empty(); });
      if (stopping_) return;
    }
    PublishChanged();
    if (std::chrono::steady_clock::now() >= next_poll) {
      Poll();
      next_poll = std::chrono::steady_clock::now() + kSharedTaskPollInterval;
    }
  }
}

void SharedTasks::PublishChanged() {
  std::set<std::string> changed;
  std::vector<std::string> forgotten;
  {
    std::lock_guard lock(mutex_);
    changed.swap(changed_);
    forgotten.swap(forgotten_);
  }
  std::vector<SharedTask> states;
  for (const std::string& id : changed) {
    std::optional<TaskInfo> info = hooks_.snapshot(id);
    if (!info) continue;  // gone meanwhile (its Forget follows)
    std::lock_guard lock(mutex_);
    states.push_back({std::move(*info), node_, ++next_version_});
  }
  // States before removals: a snapshot taken just before a task was forgotten is written
  // first and then removed, never the other way round.
  if (Status put = store_.Put(states); !put) hooks_.on_error(put.error());
  for (const std::string& id : forgotten) {
    if (Status gone = store_.Forget(id); !gone) hooks_.on_error(gone.error());
  }
}

void SharedTasks::Poll() {
  if (Status renewed = store_.RenewLease(node_); !renewed) hooks_.on_error(renewed.error());
  auto requests = store_.TakeRequests(node_);
  if (!requests) {
    hooks_.on_error(requests.error());
  } else {
    for (const auto& [request, id] : *requests) {
      if (request == TaskRequest::kCancel) {
        hooks_.cancel(id);
      } else {
        hooks_.remove(id);
      }
    }
  }
  // Subscriptions to other nodes' tasks.
  std::vector<std::string> ids;
  {
    std::lock_guard lock(subs_mutex_);
    for (const auto& [id, subs] : subs_) ids.push_back(id);
  }
  if (ids.empty()) return;
  auto tasks = Read(ids);
  if (!tasks) return;
  std::lock_guard lock(subs_mutex_);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = subs_.find(ids[i]);
    if (it == subs_.end()) continue;
    const std::optional<SharedTask>& task = (*tasks)[i];
    if (!task) {  // deleted: the last word is "cancelled", as subscribers of a local delete hear
      for (auto& [token, sub] : it->second) {
        TaskInfo last = sub.last;
        if (!IsFinal(last.status)) {
          last.status = TaskStatus::kCancelled;
          last.completed_at = WallClock::now();
        }
        sub.fn(last);
      }
      subs_.erase(it);
      continue;
    }
    for (auto sub = it->second.begin(); sub != it->second.end();) {
      if (sub->second.seen == task->version) {
        ++sub;
        continue;
      }
      sub->second.seen = task->version;
      sub->second.last = task->info;
      sub = sub->second.fn(task->info) ? std::next(sub) : it->second.erase(sub);
    }
    if (IsFinal(task->info.status) || it->second.empty()) subs_.erase(it);
  }
}

}  // namespace mineru::jobs
