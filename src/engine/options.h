// SPDX-License-Identifier: Apache-2.0
// The engine's limits and scheduling knobs. Every field has a default, a command-line flag
// (apps/engine_flags.h) and a row in docs/LIMITS.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "base/status.h"

namespace mineru::engine {

struct GenerationResult;  // engine/request.h

inline constexpr int64_t kDefaultKvCacheBytes = int64_t{2} << 30;  // 2 GiB
inline constexpr int64_t kDefaultKvBlockTokens = 32;
inline constexpr int64_t kDefaultMaxRunning = 256;
inline constexpr int64_t kDefaultMaxWaiting = 4096;
inline constexpr int64_t kDefaultMaxBatchTokens = 512;
inline constexpr int64_t kDefaultVisionMaxImages = 8;
inline constexpr std::chrono::milliseconds kDefaultVisionMaxWait{50};
inline constexpr int64_t kDefaultVisionMaxPatches = 16384;
inline constexpr int64_t kDefaultMaxImagesPerRequest = 16;

struct EngineOptions {
  int threads = 0;  // compute threads; <= 0: every hardware thread
  // KV cache memory: blocks of kv_block_tokens tokens (all layers, keys and values, float32)
  // as many as fit in this many bytes. Admission waits for free blocks; a running sequence
  // that cannot grow preempts the lowest-priority one (which is recomputed later).
  int64_t kv_cache_bytes = kDefaultKvCacheBytes;
  int64_t kv_block_tokens = kDefaultKvBlockTokens;  // a multiple of 16
  // Sequences decoding together at most (one decode step advances all of them).
  int64_t max_running = kDefaultMaxRunning;
  // Requests submitted but not yet admitted at most; Submit beyond it is refused with
  // kResourceExhausted (HTTP 429).
  int64_t max_waiting = kDefaultMaxWaiting;
  // Tokens per iteration: every running decode takes one, prefill chunks share the rest, so a
  // long prompt never stalls running decodes for more than one such step.
  int64_t max_batch_tokens = kDefaultMaxBatchTokens;
  // Vision batching: images of admitted requests are encoded together once this many wait or
  // the oldest has waited vision_max_wait; one pass holds at most vision_max_patches patches
  // (an image larger than that runs alone).
  int64_t vision_max_images = kDefaultVisionMaxImages;
  std::chrono::milliseconds vision_max_wait = kDefaultVisionMaxWait;
  int64_t vision_max_patches = kDefaultVisionMaxPatches;
  int64_t max_images_per_request = kDefaultMaxImagesPerRequest;
  // Context length (prompt + output) at most; 0 = the model's max_position_embeddings.
  int64_t max_context = 0;

  // Observer, not a limit (no flag): called on the engine thread once per request, whatever
  // its finish reason (also for requests that never ran: cancelled or expired while waiting,
  // or ended by shutdown), right before its result is delivered to the handle. It must return
  // quickly (it delays every running sequence) and must not call into the engine; exceptions
  // it throws are dropped. For metrics.
  std::function<void(const GenerationResult&)> on_request_finished;
  // For tests and tracing, not a limit (no flag): called on the engine thread at the top of
  // every scheduling iteration, before submissions are taken and cancels are seen. It must not
  // call into the engine. It may block: the engine then stands still between two iterations
  // (how tests hold a request in a chosen state).
  std::function<void()> before_iteration;

  // kInvalidArgument naming the field when a value is out of range.
  Status Validate() const;
};

}  // namespace mineru::engine
