// SPDX-License-Identifier: Apache-2.0
// The model's tensors bound by role, with every shape checked against the config. Matrices are
// views into the checkpoint mapping (bf16 stays bf16); 1-D norm weights and biases are widened
// to float32 (under 0.3% of the parameters).
#pragma once

#include <vector>

#include "model/checkpoint.h"
#include "model/config.h"
#include "ops/matrix.h"

namespace mineru::model {

struct VisionBlockWeights {
  std::vector<float> norm1_weight, norm1_bias, norm2_weight, norm2_bias;
  ops::MatrixView qkv;  // [3E, E]: q, k, v heads in that order
  std::vector<float> qkv_bias;
  ops::MatrixView proj;  // [E, E]
  std::vector<float> proj_bias;
  ops::MatrixView fc1;  // [mlp, E]
  std::vector<float> fc1_bias;
  ops::MatrixView fc2;  // [E, mlp]
  std::vector<float> fc2_bias;
};

struct VisionWeights {
  ops::MatrixView patch_embed;  // Conv3d [E, C, T, P, P] viewed as [E, C*T*P*P]
  std::vector<VisionBlockWeights> blocks;
  std::vector<float> merger_norm_weight, merger_norm_bias;
  ops::MatrixView merger_fc1;  // [4E, 4E]
  std::vector<float> merger_fc1_bias;
  ops::MatrixView merger_fc2;  // [D, 4E]
  std::vector<float> merger_fc2_bias;
};

struct DecoderLayerWeights {
  std::vector<float> input_norm, post_attention_norm;
  ops::MatrixView q, k, v, o;
  std::vector<float> q_bias, k_bias, v_bias;
  ops::MatrixView gate, up, down;
};

struct DecoderWeights {
  ops::MatrixView embed_tokens;  // [vocab, D]
  std::vector<DecoderLayerWeights> layers;
  std::vector<float> final_norm;
  ops::MatrixView lm_head;  // [vocab, D]; the embedding matrix when tied
};

struct ModelWeights {
  VisionWeights vision;
  DecoderWeights decoder;
};

Result<ModelWeights> BindWeights(const Checkpoint& checkpoint);

}  // namespace mineru::model
