// SPDX-License-Identifier: Apache-2.0
// A loaded MinerU2.5 / Qwen2-VL model: the mapped checkpoint, its weights bound by role, the
// vision encoder and the decoder. Immutable after Load; share it between threads freely (the
// compute itself runs on whatever pool the caller passes).
//
//   MINERU_ASSIGN_OR_RETURN(auto model, model::Model::Load("MinerU2.5-2509-1.2B"));
//   auto vision = model->vision().Encode(pool, pixels, grids);
#pragma once

#include <memory>
#include <string>

#include "model/checkpoint.h"
#include "model/decoder.h"
#include "model/kv_cache.h"
#include "model/packed_decoder.h"
#include "model/packed_vision.h"
#include "model/precision.h"
#include "model/vision.h"
#include "model/weights.h"
#include "model/weights_file.h"

namespace mineru::model {

class Model {
 public:
  // pack: prepare the decoder's and the vision tower's matrices for compute as `compute` says
  // (model/precision.h, model/matrix_factory.h), on `pool` or, when null, on a temporary pool
  // of every hardware thread. Without it (inspection) the decoder and the vision tower refuse to
  // run. int8 weights are mapped from compute.quantized_path, else from
  // <dir>/kQuantizedFileName when that exists, else quantized now. fp32 precision with the
  // checkpoint's weights maps the panels of compute.packed_path, else of <dir>/kPackedFileName
  // when that exists, else packs now. A file that is given or found but unusable fails the load
  // (it is never silently replaced by work at load).
  static Result<std::unique_ptr<Model>> Load(const std::string& dir,
                                             const CheckpointLimits& limits = {}, bool pack = true,
                                             ThreadPool* pool = nullptr,
                                             const ComputeOptions& compute = {});

  Precision precision() const { return compute_.precision; }
  // A KV cache for this model's decoder (its precision is the model's: Decoder::Forward runs
  // attention as the cache stores keys), and the bytes one of its blocks takes.
  KvCache NewKvCache(int64_t block_tokens, int64_t num_blocks) const {
    return KvCache(config().text, block_tokens, num_blocks, precision());
  }
  int64_t KvBlockBytes(int64_t block_tokens) const {
    return KvCache::BlockBytes(config().text, block_tokens, precision());
  }
  WeightFormat weight_format() const { return compute_.weights; }
  // The file the matrices are viewed in (null when prepared at load or read in place).
  const WeightsFile* weights_file() const { return file_.get(); }
  // weights_file() when it is of that kind, else null.
  const WeightsFile* quantized_file() const { return FileOf(WeightsFileKind::kInt8); }
  const WeightsFile* packed_file() const { return FileOf(WeightsFileKind::kPanels); }

  const ModelConfig& config() const { return checkpoint_.config(); }
  const Checkpoint& checkpoint() const { return checkpoint_; }
  const ModelWeights& weights() const { return weights_; }
  const VisionEncoder& vision() const { return vision_; }
  const Decoder& decoder() const { return decoder_; }
  // Null when loaded without packing.
  const PackedDecoderWeights* packed_decoder() const { return packed_.get(); }
  const PackedVisionWeights* packed_vision() const { return packed_vision_.get(); }
  const std::string& fingerprint() const { return checkpoint_.fingerprint(); }

 private:
  Model(Checkpoint checkpoint, ModelWeights weights, std::unique_ptr<WeightsFile> file,
        std::unique_ptr<PackedDecoderWeights> packed,
        std::unique_ptr<PackedVisionWeights> packed_vision, const ComputeOptions& compute);

  const WeightsFile* FileOf(WeightsFileKind kind) const {
    return file_ != nullptr && file_->kind() == kind ? file_.get() : nullptr;
  }

  Checkpoint checkpoint_;
  ComputeOptions compute_;
  std::unique_ptr<WeightsFile> file_;  // before the matrices that view it
  ModelWeights weights_;
  std::unique_ptr<PackedDecoderWeights> packed_;
  std::unique_ptr<PackedVisionWeights> packed_vision_;  // before vision_, which points into it
  VisionEncoder vision_;
  Decoder decoder_;
};

}  // namespace mineru::model
