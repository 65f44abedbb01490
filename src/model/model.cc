// SPDX-License-Identifier: Apache-2.0
#include "model/model.h"

#include <filesystem>

namespace mineru::model {

Model::Model(Checkpoint checkpoint, ModelWeights weights, std::unique_ptr<QuantizedFile> quantized,
             std::unique_ptr<PackedDecoderWeights> packed,
             std::unique_ptr<PackedVisionWeights> packed_vision, const ComputeOptions& compute)
    : checkpoint_(std::move(checkpoint)),
      compute_(compute),
      quantized_(std::move(quantized)),
      weights_(std::move(weights)),
      packed_(std::move(packed)),
      packed_vision_(std::move(packed_vision)),
      vision_(checkpoint_.config(), weights_.vision, packed_vision_.get()),
      decoder_(checkpoint_.config(), weights_.decoder, packed_.get(), compute_.precision) {}

Result<std::unique_ptr<Model>> Model::Load(const std::string& dir, const CheckpointLimits& limits,
                                           bool pack, ThreadPool* pool,
                                           const ComputeOptions& compute) {
  MINERU_ASSIGN_OR_RETURN(Checkpoint checkpoint, Checkpoint::Open(dir, limits));
  MINERU_ASSIGN_OR_RETURN(ModelWeights weights, BindWeights(checkpoint));
  std::unique_ptr<QuantizedFile> quantized;
  std::unique_ptr<PackedDecoderWeights> packed;
  std::unique_ptr<PackedVisionWeights> packed_vision;
  if (pack) {
    if (compute.weights == WeightFormat::kInt8) {
      std::string path = compute.quantized_path;
      std::error_code ec;
      if (path.empty() && std::filesystem::exists(dir + "/" + kQuantizedFileName, ec)) {
        path = dir + "/" + kQuantizedFileName;
      }
      if (!path.empty()) {
        MINERU_ASSIGN_OR_RETURN(QuantizedFile file,
                                QuantizedFile::Open(path, checkpoint.fingerprint(), limits));
        quantized = std::make_unique<QuantizedFile>(std::move(file));
      }
    }
    std::unique_ptr<ThreadPool> own;
    if (pool == nullptr) {
      own = std::make_unique<ThreadPool>(0);
      pool = own.get();
    }
    const MatrixFactory factory(*pool, compute, quantized.get());
    MINERU_ASSIGN_OR_RETURN(PackedDecoderWeights decoder,
                            PackDecoderWeights(factory, weights.decoder));
    MINERU_ASSIGN_OR_RETURN(PackedVisionWeights vision, PackVisionWeights(factory, weights.vision));
    packed = std::make_unique<PackedDecoderWeights>(std::move(decoder));
    packed_vision = std::make_unique<PackedVisionWeights>(std::move(vision));
  }
  return std::unique_ptr<Model>(new Model(std::move(checkpoint), std::move(weights),
                                          std::move(quantized), std::move(packed),
                                          std::move(packed_vision), compute));
}

}  // namespace mineru::model
