// SPDX-License-Identifier: Apache-2.0
// Command-line flags of `mineru-cpp serve` for document uploads (service::MultipartLimits), the
// task queue (jobs::TaskManager), the pipeline settings its documents run with (all of these
// also on `worker`, Register), and serve's page previews (service::PreviewOptions,
// RegisterPreviews); docs/LIMITS.md lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cache/block_cache.h"
#include "cache/redis_cache.h"
#include "pipeline/document.h"
#include "service/multipart.h"
#include "service/page_preview.h"
#include "tasks/task_manager.h"

namespace mineru::apps {

struct TaskFlags {
  using Defaults = jobs::TaskManagerOptions;
  static constexpr int64_t kMaxSeconds = int64_t{30} * 24 * 3600;

  std::string work_dir;  // empty: a fresh directory under $TMPDIR, removed at exit
  size_t max_queued_tasks = Defaults::kDefaultMaxQueuedTasks;
  int concurrent_tasks = Defaults::kDefaultConcurrentTasks;
  size_t max_task_files = Defaults::kDefaultMaxTaskFiles;
  int64_t task_timeout_s = 0;
  int64_t retention_s = Defaults::kDefaultRetention.count();
  size_t max_retained_tasks = Defaults::kDefaultMaxRetainedTasks;
  uint64_t max_retained_bytes = Defaults::kDefaultMaxRetainedBytes;
  uint64_t cache_bytes = jobs::kDefaultCacheBytes;
  std::string cache_url;  // empty: no shared cache
  int64_t cache_ttl_s = jobs::kDefaultRedisTtl.count();
  uint64_t cache_max_value_bytes = jobs::kDefaultMaxRedisValueBytes;
  uint64_t block_cache_bytes = jobs::kDefaultBlockCacheBytes;
  int pages_in_flight = pipeline::kDefaultPagesInFlight;
  std::optional<int64_t> max_tokens;
  size_t max_form_parts = service::kDefaultMaxFormParts;
  size_t max_part_header_bytes = service::kDefaultMaxPartHeaderBytes;
  uint64_t preview_cache_bytes = service::kDefaultPreviewCacheBytes;
  int max_preview_renders = service::kDefaultMaxPreviewRenders;
  int max_preview_waiting = service::kDefaultMaxPreviewWaiting;

  void Register(CLI::App& cmd) {
    cmd.add_option("--work-dir", work_dir,
                   "Directory for task inputs and outputs (one server per directory; default: a "
                   "new directory under $TMPDIR, removed at exit)");
    cmd.add_option("--max-queued-tasks", max_queued_tasks,
                   "Document tasks waiting at most; more are answered 429 (MinerU's API: 503)")
        ->check(CLI::Range(size_t{1}, size_t{1} << 20))
        ->capture_default_str();
    cmd.add_option("--concurrent-tasks", concurrent_tasks, "Document tasks parsed at once")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    cmd.add_option("--max-task-files", max_task_files, "Files in one upload at most")
        ->check(CLI::Range(size_t{1}, size_t{4096}))
        ->capture_default_str();
    cmd.add_option("--task-timeout", task_timeout_s,
                   "Seconds a task may run before it fails as timed out (0: no limit)")
        ->check(CLI::Range(int64_t{0}, kMaxSeconds))
        ->capture_default_str();
    cmd.add_option("--task-retention", retention_s,
                   "Seconds a finished task and its files are kept")
        ->check(CLI::Range(int64_t{0}, kMaxSeconds))
        ->capture_default_str();
    cmd.add_option("--max-retained-tasks", max_retained_tasks,
                   "Finished tasks kept at most (the oldest go first)")
        ->check(CLI::Range(size_t{1}, size_t{1} << 24))
        ->capture_default_str();
    cmd.add_option("--max-retained-bytes", max_retained_bytes,
                   "Bytes of finished tasks' files (inputs and outputs) kept at most (the oldest "
                   "go first; failed and cancelled tasks keep none)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50))
        ->capture_default_str();
    cmd.add_option("--cache-bytes", cache_bytes,
                   "In-process cache of parsed documents, in bytes (0: off)")
        ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40))
        ->capture_default_str();
    cmd.add_option("--block-cache-bytes", block_cache_bytes,
                   "In-process cache of single answers (page layouts, blocks), in bytes (0: off)")
        ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40))
        ->capture_default_str();
    cmd.add_option("--cache", cache_url,
                   "Shared cache of parsed documents in Redis, behind the in-process one: "
                   "redis://[[user]:password@]host[:port][/db] (unreachable: served without it); "
                   "serve also shares its tasks there, so every node answers every task")
        ->check([](const std::string& url) {
          auto parsed = jobs::ParseRedisUrl(url);
          return parsed ? std::string() : parsed.error().message;
        });
    cmd.add_option("--cache-ttl", cache_ttl_s, "Seconds a document stays in the Redis cache")
        ->check(CLI::Range(int64_t{1}, kMaxSeconds))
        ->capture_default_str();
    cmd.add_option("--cache-max-value-bytes", cache_max_value_bytes,
                   "Largest encoded document stored in or read from the Redis cache")
        ->check(CLI::Range(uint64_t{1}, uint64_t{512} << 20))
        ->capture_default_str();
    cmd.add_option("--pages-in-flight", pages_in_flight, "Pages of one document extracted at once")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    cmd.add_option("--max-tokens", max_tokens,
                   "New tokens per recognition request at most (default: the remaining context)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
    cmd.add_option("--max-form-parts", max_form_parts,
                   "Parts of one multipart upload at most (files and fields); more: 400")
        ->check(CLI::Range(size_t{1}, size_t{1} << 16))
        ->capture_default_str();
    cmd.add_option("--max-part-header-bytes", max_part_header_bytes,
                   "Header bytes of one multipart part at most; more: 400")
        ->check(CLI::Range(size_t{64}, size_t{1} << 20))
        ->capture_default_str();
  }

  // serve only: the page previews of the document API.
  void RegisterPreviews(CLI::App& cmd) {
    cmd.add_option("--preview-cache-bytes", preview_cache_bytes,
                   "JPEG bytes of page previews kept in memory (LRU; 0: none)")
        ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40))
        ->capture_default_str();
    cmd.add_option("--max-preview-renders", max_preview_renders,
                   "Page previews rendered at once; more wait (--max-preview-waiting)")
        ->check(CLI::Range(1, service::kMaxPreviewRendersCeiling))
        ->capture_default_str();
    cmd.add_option("--max-preview-waiting", max_preview_waiting,
                   "Page previews waiting for a render at most; one more is answered 503 with "
                   "Retry-After")
        ->check(CLI::Range(0, service::kMaxPreviewWaitingCeiling))
        ->capture_default_str();
  }

  void Apply(service::PreviewOptions& previews) const {
    previews.cache_bytes = preview_cache_bytes;
    previews.max_renders = max_preview_renders;
    previews.max_waiting = max_preview_waiting;
  }

  void Apply(service::MultipartLimits& limits) const {
    limits.max_parts = max_form_parts;
    limits.max_part_header_bytes = max_part_header_bytes;
  }

  void Apply(jobs::TaskManagerOptions& o) const {
    o.max_queued_tasks = max_queued_tasks;
    o.concurrent_tasks = concurrent_tasks;
    o.max_task_files = max_task_files;
    o.task_timeout = std::chrono::seconds(task_timeout_s);
    o.retention = std::chrono::seconds(retention_s);
    o.max_retained_tasks = max_retained_tasks;
    o.max_retained_bytes = max_retained_bytes;
    o.cache_bytes = cache_bytes;
    o.cache_url = cache_url;
    o.cache_ttl = std::chrono::seconds(cache_ttl_s);
    o.cache_max_value_bytes = cache_max_value_bytes;
    o.block_cache_bytes = block_cache_bytes;
    o.document.pages_in_flight = pages_in_flight;
    o.document.extract.max_new_tokens = max_tokens;
  }

  // The block cache (cache/block_cache.h) of --block-cache-bytes with --cache's Redis behind it,
  // built once per process: serve hands it to the task manager and the chat API, so a chat
  // about a page and the page's own blocks are answered once; worker to its task manager.
  Result<std::unique_ptr<jobs::BlockCache>> MakeBlockCache(
      const std::string& model_fingerprint) const {
    return jobs::MakeBlockCache(block_cache_bytes, model_fingerprint, cache_url,
                                std::chrono::seconds(cache_ttl_s));
  }

  // What names the model in cache keys: outputs depend on the weights (`weights`, the model's
  // fingerprint) and on the token cap, never on batching (the engine is batch invariant).
  // serve and worker must agree, since they share the caches.
  std::string ModelFingerprint(const std::string& weights) const {
    return max_tokens ? weights + ";max_tokens=" + std::to_string(*max_tokens) : weights;
  }
};

}  // namespace mineru::apps
