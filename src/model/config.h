// SPDX-License-Identifier: Apache-2.0
// The Qwen2-VL configuration read from a checkpoint's config.json. Every value the file states
// is taken from it; absent optional fields take Hugging Face transformers' defaults (named
// below); absent fields that define tensor shapes are errors.
//
// Both layouts MinerU2.5 ships go through one path (docs/MODEL.md, "config.json"):
//   - MinerU2.5-2509: the text model's fields at the JSON root;
//   - MinerU2.5-Pro (written by transformers >= 4.52): the same fields still at the root and
//     again in a nested "text_config" object, tie_word_embeddings only in text_config, and
//     "dtype" (transformers >= 4.56) in place of "torch_dtype".
// A text field is read from text_config when it is there (null counts as absent), else from the
// root, else the Qwen2VLTextConfig default: transformers builds the text model from text_config
// whenever the object exists, so where the two places disagree text_config is what runs.
// The M-RoPE parameters come from "rope_scaling" or "rope_parameters" (transformers 5.x), at
// either place; when both are given their mrope_section must agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace mineru::model {

struct VisionConfig {
  int depth = 0;
  int embed_dim = 0;    // E
  int num_heads = 0;    // Hv
  int mlp_hidden = 0;   // embed_dim * mlp_ratio
  int in_channels = 3;  // "in_channels" or "in_chans"
  int patch_size = 14;  // P
  int temporal_patch_size = 2;
  int spatial_merge_size = 2;
  int out_hidden = 0;            // merger output width ("hidden_size"); must equal the text width
  float layer_norm_eps = 1e-6f;  // fixed in the HF module (not a config field)
  float rope_theta = 10000.0f;   // fixed in the HF module
  std::string hidden_act = "quick_gelu";

  int head_dim() const { return embed_dim / num_heads; }
  // Values per patch row of pixel_values: C * T * P * P.
  int patch_dim() const { return in_channels * temporal_patch_size * patch_size * patch_size; }
  int merge_unit() const { return spatial_merge_size * spatial_merge_size; }
};

struct TextConfig {
  int hidden_size = 0;  // D
  int num_layers = 0;
  int num_heads = 0;     // H
  int num_kv_heads = 0;  // K (default: num_heads)
  int intermediate_size = 0;
  int64_t vocab_size = 0;
  float rms_norm_eps = 1e-6f;
  float rope_theta = 1e6f;
  std::vector<int> mrope_section;  // t, h, w frequency counts; sum = head_dim / 2
  int64_t max_position_embeddings = 32768;
  std::string hidden_act = "silu";
  bool use_sliding_window = false;

  int head_dim() const { return hidden_size / num_heads; }
};

struct ModelConfig {
  std::string model_type;
  TextConfig text;
  VisionConfig vision;
  // True when config.json says so (root or text_config); the checkpoint may also force it by
  // having no lm_head.weight (see Checkpoint).
  bool tie_word_embeddings = false;
  int64_t image_token_id = 0;
  int64_t video_token_id = -1;
  int64_t vision_start_token_id = 0;
  int64_t vision_end_token_id = -1;
  int64_t bos_token_id = -1;
  int64_t pad_token_id = -1;  // -1: the file names none
  std::vector<int64_t> eos_token_ids;
  // The weights' dtype as the file names it: "dtype" (transformers >= 4.56), else "torch_dtype";
  // root first, then text_config. Informational (the tensors carry their own dtype).
  std::string torch_dtype;
  // config.json has a "text_config" object (what the profile rule looks at: the Pro checkpoints
  // have one, MinerU2.5-2509 has not).
  bool nested_text_config = false;
};

// where names the source in error messages ("model/config.json").
Result<ModelConfig> ParseModelConfig(const Json& json, std::string_view where);

}  // namespace mineru::model
