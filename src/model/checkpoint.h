// SPDX-License-Identifier: Apache-2.0
// A Hugging Face checkpoint directory: config.json plus model.safetensors, or shards listed in
// model.safetensors.index.json. Tensors are mapped, not copied, and looked up by canonical name
// ("visual.*", "model.*", "lm_head.weight"); names saved by newer transformers
// ("model.visual.*", "model.language_model.*") are mapped to those.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "ops/matrix.h"

namespace mineru::model {

// Limits on the files of a checkpoint directory.
struct CheckpointLimits {
  // Largest safetensors header (--max-header-bytes).
  uint64_t max_header_bytes = kSafetensorsMaxHeaderBytes;
  // Largest config.json / index JSON (--max-json-bytes).
  uint64_t max_json_bytes = uint64_t{16} << 20;
  // Deepest JSON nesting accepted in config.json / index (--max-json-depth).
  int max_json_depth = kJsonMaxDepth;
  // Most shards an index may list (--max-shards).
  int max_shards = 1024;
};

struct CheckpointTensor {
  std::string canonical_name;
  const TensorInfo* info = nullptr;
  const SafetensorsFile* file = nullptr;
};

class Checkpoint {
 public:
  static Result<Checkpoint> Open(const std::string& dir, const CheckpointLimits& limits = {});

  const std::string& dir() const { return dir_; }
  const ModelConfig& config() const { return config_; }
  const Json& config_json() const { return config_json_; }
  // Tied when config.json says so (root or text_config) or when the checkpoint has no
  // lm_head.weight (nor model.lm_head.weight).
  bool tied_embeddings() const { return tied_; }

  bool Has(std::string_view name) const { return tensors_.count(std::string(name)) != 0; }
  // A weight matrix of exactly `shape` (2-D, or higher-D flattened to [shape[0], rest]) in a
  // kernel dtype (BF16, F16, F32). Errors name the tensor and its file.
  Result<ops::MatrixView> Matrix(std::string_view name, std::span<const int64_t> shape) const;
  // A 1-D vector of `size` values, widened to float32 (norm weights and biases: at most a few
  // thousand values each).
  Result<std::vector<float>> Vector(std::string_view name, int64_t size) const;

  const std::map<std::string, CheckpointTensor>& tensors() const { return tensors_; }
  int64_t num_parameters() const;
  uint64_t num_bytes() const;
  // Stable hex SHA-256 of config.json (canonical form), every tensor's name, dtype and shape,
  // and evenly spaced samples of its bytes; see docs/MODEL.md.
  const std::string& fingerprint() const { return fingerprint_; }
  std::vector<std::string> files() const;
  // The mapped bytes of every weight file.
  std::vector<std::span<const uint8_t>> mapped_files() const;

 private:
  Result<const CheckpointTensor*> Find(std::string_view name) const;
  Status Index(const SafetensorsFile& file, const std::set<std::string>* only);
  void ComputeFingerprint();

  std::string dir_;
  Json config_json_;
  ModelConfig config_;
  bool tied_ = false;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, CheckpointTensor> tensors_;
  std::string fingerprint_;
};

// "model.visual.blocks.0..." -> "visual.blocks.0...", "model.language_model.x" -> "model.x",
// "model.lm_head.weight" -> "lm_head.weight".
std::string CanonicalTensorName(std::string_view name);

}  // namespace mineru::model
