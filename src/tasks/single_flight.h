// SPDX-License-Identifier: Apache-2.0
// Identical documents (one cache key) parsed at once run once: a later task waits until the
// first has finished (and filled the cache), then reads the cache.
//
//   SingleFlights flights;
//   {
//     SingleFlights::Claim claim(flights, key, *cancel);  // waits while `key` is in flight
//     ... look up the cache, parse on a miss ...
//   }                                                     // released: the next one goes
//
// Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <unordered_set>

#include "pipeline/page_extractor.h"

namespace mineru::jobs {

class SingleFlights {
 public:
  // Waits while another claim holds `key` (re-checking `cancel` every kCancelPollInterval),
  // then holds it until destroyed; a cancelled wait holds nothing.
  class Claim {
   public:
    Claim(SingleFlights& flights, std::string key, const std::atomic<bool>& cancel)
        : flights_(flights), key_(std::move(key)) {
      std::unique_lock lock(flights_.mutex_);
      while (flights_.keys_.count(key_) > 0 && !cancel.load()) {
        flights_.done_.wait_for(lock, pipeline::kCancelPollInterval);
      }
      owner_ = flights_.keys_.insert(key_).second;
    }
    ~Claim() {
      if (!owner_) return;
      {
        std::lock_guard lock(flights_.mutex_);
        flights_.keys_.erase(key_);
      }
      flights_.done_.notify_all();
    }
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;

   private:
    SingleFlights& flights_;
    const std::string key_;
    bool owner_ = false;
  };

 private:
  std::mutex mutex_;
  std::condition_variable done_;          // a key left keys_
  std::unordered_set<std::string> keys_;  // cache keys of documents being parsed
};

}  // namespace mineru::jobs
