// SPDX-License-Identifier: Apache-2.0
// The decoder's matrices packed once at load for ops::MatMul over PackedMatrix: bf16 stays
// bf16 (same bytes as the checkpoint, re-laid-out), products are batch invariant, and the
// projections that read the same input are fused so one pass over x serves them all:
//   qkv     = [q; k; v] rows (one product, one bias vector) per layer
//   gate_up = [gate; up] rows per layer (SwiGLU reads the two halves of its output)
// The checkpoint pages of the packed matrices are released once packed (they stay in the
// page cache, not in this process's resident set); the embedding table stays mapped for
// lookups, and the head is packed from it when tied.
// How each matrix is held — packed panels, the checkpoint's bf16 rows in place, or int8 — is the
// MatrixFactory's choice (model/matrix_factory.h); the fusions hold in every format.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "model/matrix_factory.h"
#include "model/weights.h"
#include "ops/packed_matrix.h"

namespace mineru::model {

struct PackedDecoderLayer {
  ops::PackedMatrix qkv;        // [q_width + 2 kv_width, hidden]
  std::vector<float> qkv_bias;  // q_bias, k_bias, v_bias
  ops::PackedMatrix o;          // [hidden, q_width]
  ops::PackedMatrix gate_up;    // [2 intermediate, hidden]
  ops::PackedMatrix down;       // [hidden, intermediate]
};

struct PackedDecoderWeights {
  std::vector<PackedDecoderLayer> layers;
  ops::PackedMatrix lm_head;  // [vocab, hidden]

  // Bytes one decode step reads: every packed matrix.
  int64_t bytes() const;
  // Every matrix with its name (DecoderMatrixName), in load order.
  std::vector<std::pair<std::string, const ops::PackedMatrix*>> Matrices() const;
};

Result<PackedDecoderWeights> PackDecoderWeights(const MatrixFactory& factory,
                                                const DecoderWeights& weights);

}  // namespace mineru::model
