// SPDX-License-Identifier: Apache-2.0
// The vision tower's matrices prepared at load for ops::MatMul over PackedMatrix (the same
// batch-invariant products as the decoder, model/packed_decoder.h), in the form the
// MatrixFactory chooses (model/matrix_factory.h: packed panels, bf16 rows in place, int8). The
// checkpoint's qkv is already one [3E, E] matrix, so nothing is fused here. Biases and norms
// stay in VisionWeights (float32).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "model/matrix_factory.h"
#include "model/weights.h"
#include "ops/packed_matrix.h"

namespace mineru::model {

struct PackedVisionBlock {
  ops::PackedMatrix qkv;   // [3E, E]: q, k, v heads in that order
  ops::PackedMatrix proj;  // [E, E]
  ops::PackedMatrix fc1;   // [mlp, E]
  ops::PackedMatrix fc2;   // [E, mlp]
};

struct PackedVisionWeights {
  ops::PackedMatrix patch_embed;  // Conv3d [E, C, T, P, P] as [E, C*T*P*P] (patch_dim)
  std::vector<PackedVisionBlock> blocks;
  ops::PackedMatrix merger_fc1;  // [4E, 4E]
  ops::PackedMatrix merger_fc2;  // [D, 4E]
  // kBf16: the matrices are bf16 rows, and attention runs with bf16 products too
  // (ops/bf16_attention.h).
  Precision precision = Precision::kFp32;

  // Bytes of every packed matrix.
  int64_t bytes() const;
  // Every matrix with its name (VisionMatrixName), in load order.
  std::vector<std::pair<std::string, const ops::PackedMatrix*>> Matrices() const;
};

Result<PackedVisionWeights> PackVisionWeights(const MatrixFactory& factory,
                                              const VisionWeights& weights);

}  // namespace mineru::model
