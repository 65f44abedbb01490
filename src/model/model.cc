// SPDX-License-Identifier: Apache-2.0
#include "model/model.h"

namespace mineru::model {

Model::Model(Checkpoint checkpoint, ModelWeights weights)
    : checkpoint_(std::move(checkpoint)),
      weights_(std::move(weights)),
      vision_(checkpoint_.config(), weights_.vision),
      decoder_(checkpoint_.config(), weights_.decoder) {}

Result<std::unique_ptr<Model>> Model::Load(const std::string& dir, const CheckpointLimits& limits) {
  MINERU_ASSIGN_OR_RETURN(Checkpoint checkpoint, Checkpoint::Open(dir, limits));
  MINERU_ASSIGN_OR_RETURN(ModelWeights weights, BindWeights(checkpoint));
  return std::unique_ptr<Model>(new Model(std::move(checkpoint), std::move(weights)));
}

}  // namespace mineru::model
