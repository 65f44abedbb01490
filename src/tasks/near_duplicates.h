// SPDX-License-Identifier: Apache-2.0
// The first-page perceptual hashes (image/phash.h) of the documents a task manager parsed
// recently, to hint at near duplicates: a look-alike is named, never served in its place.
// Not thread-safe (the task manager's mutex guards it).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "image/phash.h"

namespace mineru::jobs {

class RecentFirstPages {
 public:
  // Documents remembered, oldest forgotten first.
  static constexpr size_t kCapacity = 1024;

  // Records document `name` of task `task_id` with its first-page `hash`; returns the recent
  // documents of other tasks that look alike, as "<task>/<document>", oldest first.
  std::vector<std::string> Note(uint64_t hash, const std::string& task_id,
                                const std::string& name) {
    std::vector<std::string> alike;
    const std::string prefix = task_id + "/";
    for (const auto& [other, label] : recent_) {
      if (image::HammingDistance(hash, other) <= image::kNearDuplicateDistance &&
          label.rfind(prefix, 0) != 0) {
        alike.push_back(label);
      }
    }
    recent_.emplace_back(hash, prefix + name);
    if (recent_.size() > kCapacity) recent_.pop_front();
    return alike;
  }

 private:
  std::deque<std::pair<uint64_t, std::string>> recent_;  // oldest first
};

}  // namespace mineru::jobs
