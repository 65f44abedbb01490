// SPDX-License-Identifier: Apache-2.0
// Which finished tasks a task manager keeps: finished tasks in the order they finished, with
// the bytes their files hold on disk, and the rule for which must leave:
//   - a task finished `retention` ago or more;
//   - the oldest while more than `max_tasks` are kept;
//   - the oldest while their files hold more than `max_bytes` (exactly max_bytes is kept; a
//     task alone larger than that leaves by itself as soon as it is measured, taking no other).
// A task whose thread still holds its files is never taken: the next oldest goes in its place.
//
//   RetainedTasks kept({.retention = 24h, .max_tasks = 1000, .max_bytes = 8 << 30});
//   kept.Add(id, now);                 // final
//   kept.SetBytes(id, bytes);          // its thread let go; files measured
//   for (id : kept.TakeLeaving(now, held)) ... delete the task and its files ...
//
// Not thread-safe: the task manager's mutex guards it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace mineru::jobs {

class RetainedTasks {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    std::chrono::seconds retention{0};
    size_t max_tasks = 0;
    uint64_t max_bytes = 0;
  };

  explicit RetainedTasks(Limits limits) : limits_(limits) {}

  // A task reached its final state at `finished` (later than every task added before); its
  // files count 0 bytes until SetBytes.
  void Add(const std::string& id, Clock::time_point finished);
  // The task's files hold `bytes` now (0 once they are removed). Unknown ids are ignored.
  void SetBytes(const std::string& id, uint64_t bytes);
  // Forgets a task (deleted by its client).
  void Remove(const std::string& id);

  // Forgets and returns the tasks that must leave at `now`, oldest first; `held(id)` is true for
  // a task whose thread still holds its files (kept, whatever the rules say).
  std::vector<std::string> TakeLeaving(Clock::time_point now,
                                       const std::function<bool(const std::string&)>& held);

  size_t size() const { return order_.size(); }
  uint64_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::string id;
    Clock::time_point finished;
    uint64_t bytes = 0;
  };
  const Limits limits_;
  std::list<Entry> order_;  // oldest first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  uint64_t bytes_ = 0;                 // sum of order_'s bytes
  std::vector<std::string> oversize_;  // ids measured at more than max_bytes, still to leave
};

}  // namespace mineru::jobs
