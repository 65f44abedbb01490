// SPDX-License-Identifier: Apache-2.0
// What a checkpoint's generation_config.json says the engine needs: the ids that end a
// generation. transformers and vLLM stop on every id of its eos_token_id (an integer or a
// list); Qwen2-VL checkpoints list 151645 (<|im_end|>) and 151643 (<|endoftext|>).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/config.h"

namespace mineru::engine {

// Largest generation_config.json read (it holds a handful of fields).
inline constexpr size_t kMaxGenerationConfigBytes = size_t{1} << 20;

// model_dir/generation_config.json's eos_token_id when the file exists, else config.json's
// eos_token_id (config.eos_token_ids). Ids outside the vocabulary are kCorrupt.
Result<std::vector<int32_t>> ReadStopIds(const std::string& model_dir,
                                         const model::ModelConfig& config);

}  // namespace mineru::engine
