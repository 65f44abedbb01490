// SPDX-License-Identifier: Apache-2.0
#include "model/model.h"

namespace mineru::model {

Model::Model(Checkpoint checkpoint, ModelWeights weights,
             std::unique_ptr<PackedDecoderWeights> packed)
    : checkpoint_(std::move(checkpoint)),
      weights_(std::move(weights)),
      packed_(std::move(packed)),
      vision_(checkpoint_.config(), weights_.vision),
      decoder_(checkpoint_.config(), weights_.decoder, packed_.get()) {}

Result<std::unique_ptr<Model>> Model::Load(const std::string& dir, const CheckpointLimits& limits,
                                           bool pack, ThreadPool* pool) {
  MINERU_ASSIGN_OR_RETURN(Checkpoint checkpoint, Checkpoint::Open(dir, limits));
  MINERU_ASSIGN_OR_RETURN(ModelWeights weights, BindWeights(checkpoint));
  std::unique_ptr<PackedDecoderWeights> packed;
  if (pack) {
    std::unique_ptr<ThreadPool> own;
    if (pool == nullptr) {
      own = std::make_unique<ThreadPool>(0);
      pool = own.get();
    }
    packed = std::make_unique<PackedDecoderWeights>(PackDecoderWeights(*pool, weights.decoder));
  }
  return std::unique_ptr<Model>(
      new Model(std::move(checkpoint), std::move(weights), std::move(packed)));
}

}  // namespace mineru::model
