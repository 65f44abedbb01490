// SPDX-License-Identifier: Apache-2.0
#include "tasks/task_retention.h"

namespace mineru::jobs {

void RetainedTasks::Add(const std::string& id, Clock::time_point finished) {
  if (index_.count(id) > 0) return;
  order_.push_back({id, finished, 0});
  index_[id] = std::prev(order_.end());
}

void RetainedTasks::SetBytes(const std::string& id, uint64_t bytes) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  bytes_ = bytes_ - it->second->bytes + bytes;
  it->second->bytes = bytes;
  if (bytes > limits_.max_bytes) oversize_.push_back(id);
}

void RetainedTasks::Remove(const std::string& id) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  bytes_ -= it->second->bytes;
  order_.erase(it->second);
  index_.erase(it);
}

std::vector<std::string> RetainedTasks::TakeLeaving(
    Clock::time_point now, const std::function<bool(const std::string&)>& held) {
  std::vector<std::string> leaving;
  const auto take = [&](std::list<Entry>::iterator it) {
    leaving.push_back(it->id);
    bytes_ -= it->bytes;
    index_.erase(it->id);
    return order_.erase(it);
  };
  // A task alone over the quota leaves by itself: evicting older tasks could not make room.
  std::vector<std::string> still_held;
  for (const std::string& id : oversize_) {
    auto it = index_.find(id);
    if (it == index_.end() || it->second->bytes <= limits_.max_bytes) continue;
    if (held(id)) {
      still_held.push_back(id);
    } else {
      take(it->second);
    }
  }
  oversize_ = std::move(still_held);
  for (auto it = order_.begin(); it != order_.end();) {
    // Finish times only grow along order_: once the oldest candidate is within retention and
    // the totals are within their bounds, nothing later has to leave either.
    const bool expired = now - it->finished >= limits_.retention;
    if (!expired && order_.size() <= limits_.max_tasks && bytes_ <= limits_.max_bytes) break;
    if (held(it->id)) {
      ++it;
      continue;
    }
    it = take(it);
  }
  return leaving;
}

}  // namespace mineru::jobs
