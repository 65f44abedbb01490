// SPDX-License-Identifier: Apache-2.0
// Command-line flags for opening a checkpoint: the limits applied while reading it, and the
// arithmetic its matrix products run in (model/precision.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "model/checkpoint.h"
#include "model/precision.h"

namespace mineru::apps {

struct ModelLoadOptions {
  model::CheckpointLimits limits;
  std::string precision = "auto";
  std::string weights = "bf16";
  std::string quantized;
  std::string packed;

  void Register(CLI::App& cmd) {
    cmd.add_option("--precision", precision,
                   "Matrix products: fp32 (float32 FMA over packed weights), bf16 (bf16 "
                   "products, float32 sums, weights read in place) or auto (bf16 where the CPU "
                   "has AVX-512 BF16)")
        ->check(CLI::IsMember({"auto", "fp32", "bf16"}))
        ->capture_default_str();
    cmd.add_option("--weights", weights,
                   "Weight format: bf16 (the checkpoint's values) or int8 (per-group int8 with "
                   "float32 scales, from `mineru-cpp quantize`'s file or quantized at load)")
        ->check(CLI::IsMember({"bf16", "int8"}))
        ->capture_default_str();
    cmd.add_option("--quantized", quantized,
                   "int8 weights file (default: <model>/mineru-q8.bin when present, else "
                   "quantize at load)");
    cmd.add_option("--packed", packed,
                   "fp32 packed-panels file (default: <model>/mineru-packed.bin when present, "
                   "else pack at load; `mineru-cpp pack` writes it)");
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
  model::ComputeOptions Compute() const {
    model::ComputeOptions compute;
    compute.precision = model::ParsePrecision(precision).value_or(model::AutoPrecision());
    compute.weights = model::ParseWeightFormat(weights).value_or(model::WeightFormat::kBf16);
    compute.quantized_path = quantized;
    compute.packed_path = packed;
    return compute;
  }
  // Says on stderr, once per load, when the choice runs a portable loop on this CPU.
  void WarnIfSlow() const {
    const model::ComputeOptions compute = Compute();
    const std::string warning = model::SlowPathWarning(compute.precision, compute.weights);
    if (!warning.empty()) std::fprintf(stderr, "mineru-cpp: warning: %s\n", warning.c_str());
  }
};

}  // namespace mineru::apps
