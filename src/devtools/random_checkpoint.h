// SPDX-License-Identifier: Apache-2.0
// Writes a checkpoint directory with random weights in the Hugging Face layout (config.json,
// preprocessor_config.json, generation_config.json, bf16 safetensors, and tokenizer.json with
// tokenizer_config.json when given the Qwen2 vocabulary): MinerU2.5's real shape for benchmarks,
// the tiny golden shape for tests, or any Qwen2-VL config; each either as MinerU2.5-2509 lays its
// files out or as MinerU2.5-Pro-2605 does (CheckpointLayout).
//
// Developer tooling, not runtime: `mineru-cpp make-model`, the tests and the benchmarks write
// checkpoints with it; nothing under engine/, pipeline/, jobs/ or service/ may include it
// (tools/check_layers.cmake puts devtools just below apps).
#pragma once

#include <cstdint>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "text/tokenizer.h"

namespace mineru::devtools {

// config.json of MinerU2.5-2509-1.2B's shape (1,156,026,624 parameters; text fields at the root,
// "in_chans" in the vision config, tied embeddings).
Json RealModelConfig();
// config.json of the tiny random model of the golden test data.
Json TinyModelConfig();
// The same two shapes in MinerU2.5-Pro-2605's config.json layout (transformers 4.57): the text
// fields still at the root and again in a "text_config" object that alone says
// tie_word_embeddings (true), rope_scaling at both places, "dtype" instead of "torch_dtype".
Json ProModelConfig();
Json ProTinyModelConfig();
// 2509 layout -> Pro layout, for any config (what ProModelConfig does to RealModelConfig).
Json ToProLayout(Json config);

// The files beside config.json and the weights.
enum class CheckpointLayout {
  // MinerU2.5-2509 as make-model has always written it: preprocessor min_pixels 3136,
  // generation_config with the stop ids only, tokenizer.json (29 added tokens) and a
  // tokenizer_config.json that holds the chat template.
  k2509,
  // MinerU2.5-Pro-2605: preprocessor min_pixels 50176 / max_pixels 1605632, generation_config
  // with the sampling defaults (temperature 0.01, top_k 1, top_p 0.001), tokenizer.json with
  // Pro's 31 added tokens (text/model_files.h), tokenizer_config.json, chat_template.jinja,
  // special_tokens_map.json and added_tokens.json.
  kPro,
};

enum class TensorNaming {
  kClassic,   // "visual.*", "model.*" (what MinerU2.5-2509 ships)
  kPrefixed,  // "model.visual.*", "model.language_model.*" (transformers >= 4.52)
};

struct RandomCheckpointOptions {
  uint64_t seed = 0;
  TensorNaming naming = TensorNaming::kClassic;
  CheckpointLayout layout = CheckpointLayout::k2509;
  // Split the weights into shards of at most this many bytes plus an index (0: one file).
  uint64_t max_shard_bytes = 0;
  // A Qwen2 byte-level BPE tokenizer.json (tools/tokenizer-reference writes one) from which
  // tokenizer.json and tokenizer_config.json are built (text/model_files.h); their special-token
  // ids must agree with the config. Empty: no tokenizer files.
  std::string tokenizer_source = {};
  // The largest tokenizer source accepted (docs/LIMITS.md).
  uint64_t max_tokenizer_bytes = text::kDefaultMaxTokenizerFileBytes;
};

// Creates `dir` if needed and writes the files (the weights possibly as shards and an index).
// Weights are drawn from a seeded approximate normal: Linear and Conv weights with std 1 /
// sqrt(fan_in), biases std 0.02, norm weights 1 + N(0, 0.05^2), norm biases N(0, 0.02^2),
// embeddings std 0.02. The same seed gives byte-identical files whatever the thread count.
Status WriteRandomCheckpoint(ThreadPool& pool, const Json& config, const std::string& dir,
                             const RandomCheckpointOptions& options);

}  // namespace mineru::devtools
