// SPDX-License-Identifier: Apache-2.0
#include "model/model.h"

#include <filesystem>

namespace mineru::model {

Model::Model(Checkpoint checkpoint, ModelWeights weights, std::unique_ptr<WeightsFile> file,
             std::unique_ptr<PackedDecoderWeights> packed,
             std::unique_ptr<PackedVisionWeights> packed_vision, const ComputeOptions& compute)
    : checkpoint_(std::move(checkpoint)),
      compute_(compute),
      file_(std::move(file)),
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
  std::unique_ptr<WeightsFile> file;
  std::unique_ptr<PackedDecoderWeights> packed;
  std::unique_ptr<PackedVisionWeights> packed_vision;
  if (pack) {
    // The file this mode reads, if any: bf16 precision reads the checkpoint in place.
    const bool int8 = compute.weights == WeightFormat::kInt8;
    if (int8 || compute.precision == Precision::kFp32) {
      const WeightsFileKind kind = int8 ? WeightsFileKind::kInt8 : WeightsFileKind::kPanels;
      std::string path = int8 ? compute.quantized_path : compute.packed_path;
      const std::string found = dir + "/" + WeightsFileName(kind);
      std::error_code ec;
      if (path.empty() && std::filesystem::exists(found, ec)) path = found;
      if (!path.empty()) {
        MINERU_ASSIGN_OR_RETURN(WeightsFile opened,
                                WeightsFile::Open(path, kind, checkpoint.fingerprint(), limits));
        file = std::make_unique<WeightsFile>(std::move(opened));
      }
    }
    std::unique_ptr<ThreadPool> own;
    if (pool == nullptr) {
      own = std::make_unique<ThreadPool>(0);
      pool = own.get();
    }
    const MatrixFactory factory(*pool, compute, file.get());
    MINERU_ASSIGN_OR_RETURN(PackedDecoderWeights decoder,
                            PackDecoderWeights(factory, weights.decoder));
    MINERU_ASSIGN_OR_RETURN(PackedVisionWeights vision, PackVisionWeights(factory, weights.vision));
    packed = std::make_unique<PackedDecoderWeights>(std::move(decoder));
    packed_vision = std::make_unique<PackedVisionWeights>(std::move(vision));
  }
  return std::unique_ptr<Model>(new Model(std::move(checkpoint), std::move(weights),
                                          std::move(file), std::move(packed),
                                          std::move(packed_vision), compute));
}

}  // namespace mineru::model
