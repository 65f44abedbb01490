// SPDX-License-Identifier: Apache-2.0
// A fixed pool of compute threads for data-parallel loops. The thread that calls ParallelFor
// takes part as thread 0, so a pool of N threads starts N - 1 workers.
//
// Thread safety: one owner thread calls ParallelFor; calls must not nest (a task must not call
// ParallelFor on the same pool). Workers spin briefly after each loop (the next kernel usually
// follows within microseconds), then sleep on a futex.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <vector>

namespace mineru {

class ThreadPool {
 public:
  // num_threads <= 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(task, thread) for every task in [0, num_tasks), tasks claimed dynamically;
  // thread is in [0, num_threads()). Returns when all tasks are done.
  template <class Fn>
  void ParallelFor(size_t num_tasks, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    Run(num_tasks, &fn,
        [](void* f, size_t task, int thread) { (*static_cast<F*>(f))(task, thread); });
  }

 private:
  using TaskFn = void (*)(void*, size_t, int);

  void Run(size_t num_tasks, void* fn_object, TaskFn fn);
  void WorkerLoop(int thread);
  void DrainTasks(int thread);

  std::vector<std::thread> workers_;
  // Job description, written by the owner before bumping generation_.
  void* fn_object_ = nullptr;
  TaskFn fn_ = nullptr;
  size_t num_tasks_ = 0;
  alignas(64) std::atomic<size_t> next_task_{0};
  alignas(64) std::atomic<int> busy_workers_{0};
  alignas(64) std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace mineru
