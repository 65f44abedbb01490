// SPDX-License-Identifier: Apache-2.0
// What a checkpoint's generation_config.json and config.json say the engine needs: the ids that
// end a generation. transformers and vLLM stop on every id of eos_token_id (an integer or a
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

// The default stop set, in this order without repeats:
//   config.json's eos_token_id (config.eos_token_ids), then
//   generation_config.json's eos_token_id (an integer or a list; the file is optional), then
//   config.json's pad_token_id, then generation_config.json's pad_token_id.
// (The loaders of GreatV/oar-ocr and raoqu/mlx-mineru stop on this union; for MinerU2.5-2509 and
// MinerU2.5-Pro-2605 it is {151645, 151643}.) Ids outside the vocabulary are kCorrupt.
Result<std::vector<int32_t>> ReadStopIds(const std::string& model_dir,
                                         const model::ModelConfig& config);

}  // namespace mineru::engine
