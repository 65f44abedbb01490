// SPDX-License-Identifier: Apache-2.0
// Command-line flags for every engine limit (engine/options.h; docs/LIMITS.md).
#pragma once

#include <CLI/CLI.hpp>

#include "engine/options.h"

namespace mineru::apps {

struct EngineFlags {
  engine::EngineOptions options;
  int64_t vision_max_wait_ms = engine::kDefaultVisionMaxWait.count();

  void Register(CLI::App& cmd) {
    cmd.add_option("--kv-cache-bytes", options.kv_cache_bytes,
                   "KV cache memory in bytes (float32 keys and values of every layer)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 46))
        ->capture_default_str();
    cmd.add_option("--kv-block-tokens", options.kv_block_tokens,
                   "Tokens per KV cache block (a multiple of 16)")
        ->check(CLI::Range(16, 4096))
        ->capture_default_str();
    cmd.add_option("--max-running", options.max_running, "Sequences decoding together at most")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    cmd.add_option("--max-waiting", options.max_waiting,
                   "Requests waiting for admission at most; more are refused")
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    cmd.add_option("--max-batch-tokens", options.max_batch_tokens,
                   "Tokens per engine iteration (decode rows plus prefill chunks)")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    cmd.add_option("--vision-max-images", options.vision_max_images,
                   "Images encoded together at most")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd.add_option("--vision-max-wait-ms", vision_max_wait_ms,
                   "Longest wait for a fuller vision batch, in milliseconds")
        ->check(CLI::Range(0, 60000))
        ->capture_default_str();
    cmd.add_option("--vision-max-patches", options.vision_max_patches,
                   "Patches per vision pass at most (a larger image runs alone)")
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    cmd.add_option("--max-images-per-request", options.max_images_per_request,
                   "Images in one request at most")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd.add_option("--max-context", options.max_context,
                   "Prompt plus output tokens at most (0: the model's max_position_embeddings)")
        ->check(CLI::Range(0, 1 << 24))
        ->capture_default_str();
  }

  engine::EngineOptions Options(int threads) const {
    engine::EngineOptions out = options;
    out.threads = threads;
    out.vision_max_wait = std::chrono::milliseconds(vision_max_wait_ms);
    return out;
  }
};

}  // namespace mineru::apps
