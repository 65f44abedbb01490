// SPDX-License-Identifier: Apache-2.0
// Command-line flags for the limits applied while opening a checkpoint.
#pragma once

#include <CLI/CLI.hpp>

#include "model/checkpoint.h"

namespace mineru::apps {

struct ModelLoadOptions {
  model::CheckpointLimits limits;

  void Register(CLI::App& cmd) {
    cmd.add_option("--max-header-bytes", limits.max_header_bytes,
                   "Largest safetensors header accepted")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd.add_option("--max-json-bytes", limits.max_json_bytes,
                   "Largest config.json / index JSON accepted")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd.add_option("--max-json-depth", limits.max_json_depth,
                   "Deepest JSON nesting accepted in config.json / index")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    cmd.add_option("--max-shards", limits.max_shards, "Most shards an index may list")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
  }
  const model::CheckpointLimits& Limits() const { return limits; }
};

}  // namespace mineru::apps
