// SPDX-License-Identifier: Apache-2.0
// Document tasks in Redis, so that every API node sharing one Redis answers every task: the
// node that accepted a task (its owner, which runs it) writes the task's state after every
// change and, once it completed, its outputs; any other node reads them, and asks the owner to
// cancel or delete it through the owner's request list.
//
// Keys (all written with SETEX or EXPIRE, so nothing outlives its TTL):
//   mineru:task:<id>            JSON: the TaskInfo, the owner node and a version that grows
//                               with every change (EncodeSharedTask)
//   mineru:task-outputs:<id>    the outputs of a completed task (SerializeTaskOutputs)
//   mineru:node:<node>          the owner's lease, refreshed while it runs: a task whose owner
//                               has no lease any more will never finish
//   mineru:node:<node>:requests a list of "cancel <id>" / "delete <id>" for the owner
//
// Everything read back is untrusted (another version of us, or anything else that can write to
// that Redis, wrote it): ids must look like task ids, document names must be plain file names
// (they become paths), sizes are bounded, and a value that breaks a rule is kCorrupt.
//
// Thread-safe (one RedisClient connection, one round trip at a time).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/document_outputs.h"
#include "cache/redis_client.h"
#include "tasks/task.h"

namespace mineru::jobs {

// How long an owner's lease lasts without being refreshed; owners refresh it every
// kSharedTaskPollInterval, so only a node that stopped (or lost Redis) lets it lapse.
inline constexpr std::chrono::seconds kNodeLease{10};
// Documents in one shared task at most (more is a corrupt value; TaskManager allows 16 by
// default).
inline constexpr size_t kMaxSharedTaskDocuments = 1024;
// Requests an owner takes from its list per poll; the rest wait for the next poll.
inline constexpr int kMaxRequestsPerPoll = 256;

// A task as other nodes see it.
struct SharedTask {
  TaskInfo info;
  std::string node;      // the owner's node id (a UUID)
  uint64_t version = 0;  // the owner's change counter: larger is newer
};

std::string EncodeSharedTask(const SharedTask& task);
// kCorrupt with the reason.
Result<SharedTask> DecodeSharedTask(std::string_view json);

// "MTSK" | u32 version 1 | u64 count | per document: u64 length + document_codec.h's encoding.
std::string SerializeTaskOutputs(const std::vector<DocumentOutputs>& outputs);
Result<std::vector<DocumentOutputs>> ParseTaskOutputs(std::string_view bytes);

enum class TaskRequest { kCancel, kDelete };

struct TaskStoreOptions {
  RedisOptions redis;
  // Lifetime of task states and outputs (the owner's retention).
  std::chrono::seconds ttl{24 * 3600};
  // The largest outputs value written or read (TaskManagerOptions::cache_max_value_bytes).
  uint64_t max_outputs_bytes = 64ull << 20;
};

class TaskStore {
 public:
  explicit TaskStore(TaskStoreOptions options);

  // Writes the states of `tasks` in one round trip.
  Status Put(const std::vector<SharedTask>& tasks);
  // kResourceExhausted when the encoding exceeds max_outputs_bytes (nothing is written).
  Status PutOutputs(const std::string& id, const std::vector<DocumentOutputs>& outputs);
  // Removes a task's state, outputs and nothing else.
  Status Forget(const std::string& id);

  // The states of `ids` in one round trip (nullopt: not stored). A stored value that does not
  // decode, or names another id, is kCorrupt for the whole call.
  Result<std::vector<std::optional<SharedTask>>> Get(const std::vector<std::string>& ids);
  // kNotFound when no outputs are stored (expired, or too large to share).
  Result<std::vector<DocumentOutputs>> GetOutputs(const std::string& id);

  // Refreshes `node`'s lease; EndLease gives it up (the node is stopping).
  Status RenewLease(const std::string& node);
  Status EndLease(const std::string& node);
  // Whether each of `nodes` holds a lease, in one round trip.
  Result<std::vector<bool>> Alive(const std::vector<std::string>& nodes);

  // Appends a request to the owner's list (which lives as long as a lease).
  Status Request(const std::string& node, TaskRequest request, const std::string& id);
  // Takes up to kMaxRequestsPerPoll requests off `node`'s list, oldest first; entries that are
  // not requests are dropped.
  Result<std::vector<std::pair<TaskRequest, std::string>>> TakeRequests(const std::string& node);

 private:
  const TaskStoreOptions options_;
  RedisClient client_;
};

}  // namespace mineru::jobs
