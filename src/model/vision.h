// SPDX-License-Identifier: Apache-2.0
// The Qwen2-VL vision tower: patch embedding, `depth` pre-norm blocks with 2-D rotary full
// attention inside each image (each temporal group), and the 2x2 patch merger.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/config.h"
#include "model/packed_vision.h"
#include "model/positions.h"
#include "model/trace.h"
#include "model/weights.h"

namespace mineru::model {

// The q/k/v product and the MLP (fc1, activation, fc2) of each block run over row chunks whose
// float32 outputs take at most this many bytes (and at least kVisionMinChunkRows rows): a
// 1036x1036 page's 5,476 x 5,120 MLP intermediate would otherwise be 112 MB held at the peak,
// and its 5,476 x 3,840 q/k/v 84 MB, each with its bf16 or int8 copy for the product on top.
// Rows are independent in every product and in rotary, so chunking changes no bit; each chunk
// still reuses every weight over hundreds of rows.
inline constexpr int64_t kVisionChunkBytes = int64_t{16} << 20;
inline constexpr int64_t kVisionMinChunkRows = 256;

// Knobs of Encode for tests; the defaults are what the engine runs, and every value gives the
// same bits.
struct VisionEncodeTuning {
  // > 0: rows per chunk of the q/k/v, attention and MLP passes; 0: sized by kVisionChunkBytes.
  int64_t chunk_rows = 0;
  // true: the q and the k/v passes each run the fused q/k/v product, as for a matrix whose q
  // rows cannot be viewed alone (ops::PackedMatrix::RowsView), instead of their own rows.
  bool whole_qkv = false;
};

class VisionEncoder {
 public:
  // `packed` holds the matrices Encode multiplies by (biases and norms come from `weights`);
  // null for a model loaded only for inspection, and then Encode fails.
  VisionEncoder(const ModelConfig& config, const VisionWeights& weights,
                const PackedVisionWeights* packed)
      : config_(config.vision), weights_(weights), packed_(packed) {}

  // pixel_values: the patches of all images, concatenated in image order, patch_dim floats each
  // (the layout of the image processor). Returns [patches / merge_unit, out_hidden]: one row per
  // image token, in the order of the images' image tokens. Several images of different sizes
  // share every matrix product; attention stays within each image. The products are
  // batch invariant (ops/packed_matrix.h), so an image's rows do not depend on the other images
  // of the call.
  // Traces "vision.patch_embed", "vision.block.<i>", "vision.merged".
  // Memory beyond the weights, for P patches of width E: the residual stream and its LayerNorm
  // (P E floats each), the keys and values (2 P E floats, or bf16 pairs in bf16 precision) and
  // one scratch buffer of kVisionChunkBytes; q and the attention output exist one row chunk at a
  // time.
  Result<std::vector<float>> Encode(ThreadPool& pool, std::span<const float> pixel_values,
                                    std::span<const ImageGrid> grids,
                                    const TraceFn* trace = nullptr,
                                    const VisionEncodeTuning& tuning = {}) const;
  // The same, taking the pixel values over: they are freed as soon as the patch embedding has
  // read them, before the blocks' activations exist (a 1036 x 1036 page's are 26 MB).
  Result<std::vector<float>> Encode(ThreadPool& pool, std::vector<float>&& pixel_values,
                                    std::span<const ImageGrid> grids,
                                    const TraceFn* trace = nullptr,
                                    const VisionEncodeTuning& tuning = {}) const;

 private:
  Result<std::vector<float>> EncodeImpl(ThreadPool& pool, std::span<const float> pixel_values,
                                        std::span<const ImageGrid> grids, const TraceFn* trace,
                                        const VisionEncodeTuning& tuning,
                                        std::vector<float>* release) const;

  const VisionConfig& config_;
  const VisionWeights& weights_;
  const PackedVisionWeights* packed_;
};

}  // namespace mineru::model
