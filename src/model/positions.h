// SPDX-License-Identifier: Apache-2.0
// Rotary positions of Qwen2-VL: the 3-D (t, h, w) positions of a prompt exactly as Hugging Face
// transformers' get_rope_index computes them, and the cos/sin tables of both rotary embeddings.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "model/config.h"

namespace mineru::model {

// An image's patch grid: t temporal groups of h x w patches (h, w in patches, before merging).
struct ImageGrid {
  int64_t t = 1, h = 0, w = 0;

  int64_t patches() const { return t * h * w; }
};

struct RopePositions {
  // positions[i] = (t, h, w) of token i.
  std::vector<std::array<int32_t, 3>> positions;
  // 1 + the largest position component: the position of the first generated token (the k-th
  // generated token sits at next_position + k on all three axes).
  int64_t next_position = 0;
};

// Positions for one unpadded token sequence. `grids` are the images of this sequence in prompt
// order; each must appear as exactly t * (h / m) * (w / m) consecutive image tokens (m the merge
// size). Text tokens, including the vision start/end markers, advance all three axes by one;
// after an image, text resumes at 1 + the largest position used so far.
Result<RopePositions> ComputeRopePositions(std::span<const int32_t> ids,
                                           std::span<const ImageGrid> grids,
                                           const ModelConfig& config);

// Inverse frequencies 1 / theta^(2j / dim), j < dim / 2, evaluated in float32 as torch does.
std::vector<float> RotaryInverseFrequencies(float theta, int dim);

// Vision rotary angles, one row of head_dim / 2 floats per patch in pixel_values order
// (2 x 2 merge windows, row-major over windows): [row * f_0.., col * f_0..].
std::vector<float> VisionRotaryAngles(std::span<const ImageGrid> grids, const VisionConfig& config);

// M-RoPE angles, head_dim / 2 floats per token: frequency j follows the t, h or w position by
// the mrope_section split.
std::vector<float> MropeAngles(std::span<const std::array<int32_t, 3>> positions,
                               const TextConfig& config);

// cos and sin (float32) of each angle.
void CosSin(std::span<const float> angles, std::vector<float>& cos, std::vector<float>& sin);

}  // namespace mineru::model
