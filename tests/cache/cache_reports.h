// SPDX-License-Identifier: Apache-2.0
// What a tiered document cache reports (cache/tiered_cache.h CacheObservers), collected for the
// cache tests and the task managers' Redis tests.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/tiered_cache.h"

namespace mineru::jobs::testing {

// Every report of a tiered cache, as "tier:hit", "tier:miss" or "tier:error".
struct Reports {
  std::mutex mutex;
  std::vector<std::string> seen;

  CacheObservers Observers() {
    return {[this](std::string_view tier, bool hit) {
              Add(std::string(tier) + (hit ? ":hit" : ":miss"));
            },
            [this](std::string_view tier, const Error&) { Add(std::string(tier) + ":error"); }};
  }
  void Add(std::string s) {
    std::lock_guard lock(mutex);
    seen.push_back(std::move(s));
  }
  std::vector<std::string> Take() {
    std::lock_guard lock(mutex);
    return std::exchange(seen, {});
  }
};

}  // namespace mineru::jobs::testing
