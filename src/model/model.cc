// SPDX-License-Identifier: Apache-2.0
#include "model/model.h"

namespace mineru::model {

Model::Model(Checkpoint checkpoint, ModelWeights weights,
             std::unique_ptr<PackedDecoderWeights> packed,
             std::unique_ptr<PackedVisionWeights> packed_vision, Precision precision)
    : checkpoint_(std::move(checkpoint)),
      precision_(precision),
      weights_(std::move(weights)),
      packed_(std::move(packed)),
      packed_vision_(std::move(packed_vision)),
      vision_(checkpoint_.config(), weights_.vision, packed_vision_.get()),
      decoder_(checkpoint_.config(), weights_.decoder, packed_.get()) {}

Result<std::unique_ptr<Model>> Model::Load(const std::string& dir, const CheckpointLimits& limits,
                                           bool pack, ThreadPool* pool, Precision precision) {
  MINERU_ASSIGN_OR_RETURN(Checkpoint checkpoint, Checkpoint::Open(dir, limits));
  MINERU_ASSIGN_OR_RETURN(ModelWeights weights, BindWeights(checkpoint));
  std::unique_ptr<PackedDecoderWeights> packed;
  std::unique_ptr<PackedVisionWeights> packed_vision;
  if (pack) {
    std::unique_ptr<ThreadPool> own;
    if (pool == nullptr) {
      own = std::make_unique<ThreadPool>(0);
      pool = own.get();
    }
    packed = std::make_unique<PackedDecoderWeights>(
        PackDecoderWeights(*pool, weights.decoder, precision));
    packed_vision =
        std::make_unique<PackedVisionWeights>(PackVisionWeights(*pool, weights.vision, precision));
  }
  return std::unique_ptr<Model>(new Model(std::move(checkpoint), std::move(weights),
                                          std::move(packed), std::move(packed_vision), precision));
}

}  // namespace mineru::model
