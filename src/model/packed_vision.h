// SPDX-License-Identifier: Apache-2.0
// The vision tower's matrices packed once at load for ops::MatMul over PackedMatrix (the same
// panels and batch-invariant products as the decoder, model/packed_decoder.h): bf16 stays bf16,
// re-laid-out, so the packed copy is the size of the checkpoint's matrices. The checkpoint's
// qkv is already one [3E, E] matrix, so nothing is fused here. Biases and norms stay in
// VisionWeights (float32). The checkpoint pages of the packed matrices are released once packed
// (they stay in the page cache, not in this process's resident set).
#pragma once

#include <cstdint>
#include <vector>

#include "base/thread_pool.h"
#include "model/precision.h"
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
};

// Precision::kBf16: the checkpoint's bf16 rows viewed in place, as for the decoder.
PackedVisionWeights PackVisionWeights(ThreadPool& pool, const VisionWeights& weights,
                                      Precision precision = Precision::kFp32);

}  // namespace mineru::model
