// SPDX-License-Identifier: Apache-2.0
// A first-in first-out queue between producers and a fixed set of worker threads: the one
// implementation of "hand items to N threads" where the queue needs no state beyond its items
// (the pipeline's page jobs, the Celery worker's deliveries). Thread-safe.
//
// Invariants: at most `capacity` items are queued (0 means no bound); every pushed item is
// popped exactly once or handed back by CloseAndTake; once closed, nothing more is accepted.
// Two ways to end: Close lets the workers finish what is queued (Pop returns nullopt once it is
// empty), CloseAndTake hands the queued items back to the caller and Pop returns nullopt at once.
//
// The HTTP server's handler queue (service/http_internal.h WorkQueue) is not one of these: it
// counts the tasks being run under the same lock as its queue, so that a shutdown with a deadline
// can tell "every task ended" from "one still runs" without a window between the two.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace mineru {

template <typename T>
class BlockingQueue {
 public:
  explicit BlockingQueue(size_t capacity = 0) : capacity_(capacity) {}
  BlockingQueue(const BlockingQueue&) = delete;
  BlockingQueue& operator=(const BlockingQueue&) = delete;

  // Waits while the queue is full. False (and `item` dropped) once the queue is closed.
  bool Push(T item) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || !Full(); });
    if (closed_) return false;
    items_.push_back(std::move(item));
    changed_.notify_all();
    return true;
  }

  // Never waits: false (and `item` dropped) when the queue is full or closed.
  bool TryPush(T item) {
    std::lock_guard lock(mutex_);
    if (closed_ || Full()) return false;
    items_.push_back(std::move(item));
    changed_.notify_all();
    return true;
  }

  // Waits for an item; nullopt once the queue is closed and holds none.
  std::optional<T> Pop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    changed_.notify_all();
    return item;
  }

  // Accepts nothing more; what is queued is still popped.
  void Close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }

  // Accepts nothing more and hands back what is queued, oldest first; Pop returns nullopt from
  // now on. The items are destroyed by the caller, outside the queue's lock.
  std::deque<T> CloseAndTake() {
    std::deque<T> taken;
    std::lock_guard lock(mutex_);
    closed_ = true;
    taken.swap(items_);
    changed_.notify_all();
    return taken;
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }

 private:
  bool Full() const { return capacity_ != 0 && items_.size() >= capacity_; }

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // items_ or closed_ changed
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace mineru
