// SPDX-License-Identifier: Apache-2.0
#include "base/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mineru {
namespace {

// About 20-50 microseconds of polling before sleeping: long enough to bridge consecutive
// kernels of one forward pass, short enough not to burn a core between requests.
constexpr int kSpinIterations = 20000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::thread::hardware_concurrency());
  if (num_threads <= 0) num_threads = 1;
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int t = 1; t < num_threads; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::Run(size_t num_tasks, void* fn_object, TaskFn fn) {
  if (num_tasks == 0) return;
  if (workers_.empty() || num_tasks == 1) {
    for (size_t task = 0; task < num_tasks; ++task) fn(fn_object, task, 0);
    return;
  }
  fn_object_ = fn_object;
  fn_ = fn;
  num_tasks_ = num_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  busy_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  DrainTasks(0);
  // Wait for the workers to finish their last task (they may still be inside one).
  int spins = 0;
  while (busy_workers_.load(std::memory_order_acquire) != 0) {
    if (++spins < kSpinIterations) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::DrainTasks(int thread) {
  for (;;) {
    const size_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= num_tasks_) return;
    fn_(fn_object_, task, thread);
  }
}

void ThreadPool::WorkerLoop(int thread) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t current = generation_.load(std::memory_order_acquire);
    for (int spins = 0; current == seen && spins < kSpinIterations; ++spins) {
      CpuRelax();
      current = generation_.load(std::memory_order_acquire);
    }
    while (current == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      current = generation_.load(std::memory_order_acquire);
    }
    seen = current;
    if (stop_.load(std::memory_order_relaxed)) return;
    DrainTasks(thread);
    busy_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace mineru
