// SPDX-License-Identifier: Apache-2.0
#include "model/checkpoint.h"

#include <cstring>
#include <filesystem>

#include "base/mapped_file.h"
#include "base/sha256.h"

namespace mineru::model {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSingleFile = "model.safetensors";
constexpr std::string_view kIndexFile = "model.safetensors.index.json";

std::string ShapeString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A shard name from an index must be a plain file name inside the checkpoint directory.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name != "." && name != "..";
}

}  // namespace

std::string CanonicalTensorName(std::string_view name) {
  constexpr std::string_view kVisual = "model.visual.";
  constexpr std::string_view kLanguage = "model.language_model.";
  // Some exports nest the output projection too; it is the same lm_head.
  if (name == "model.lm_head.weight") return "lm_head.weight";
  if (name.substr(0, kVisual.size()) == kVisual) {
    return "visual." + std::string(name.substr(kVisual.size()));
  }
  if (name.substr(0, kLanguage.size()) == kLanguage) {
    return "model." + std::string(name.substr(kLanguage.size()));
  }
  return std::string(name);
}

Status Checkpoint::Index(const SafetensorsFile& file, const std::set<std::string>* only) {
  for (const TensorInfo& info : file.tensors()) {
    if (only != nullptr && only->count(info.name) == 0) continue;
    const std::string canonical = CanonicalTensorName(info.name);
    auto [it, inserted] = tensors_.emplace(canonical, CheckpointTensor{canonical, &info, &file});
    if (!inserted) {
      return Fail(ErrorCode::kCorrupt, "tensor '{}' is stored twice ('{}' in {} and '{}' in {})",
                  canonical, it->second.info->name, it->second.file->path(), info.name,
                  file.path());
    }
  }
  return OkStatus();
}

Result<Checkpoint> Checkpoint::Open(const std::string& dir, const CheckpointLimits& limits) {
  Checkpoint checkpoint;
  checkpoint.dir_ = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Fail(ErrorCode::kNotFound, "{}: not a checkpoint directory", dir);
  }
  const std::string config_path = (fs::path(dir) / "config.json").string();
  MINERU_ASSIGN_OR_RETURN(checkpoint.config_json_,
                          ReadJsonFile(config_path, limits.max_json_bytes, limits.max_json_depth));
  MINERU_ASSIGN_OR_RETURN(checkpoint.config_,
                          ParseModelConfig(checkpoint.config_json_, config_path));

  // Like transformers: a single model.safetensors wins over an index.
  const fs::path single = fs::path(dir) / kSingleFile;
  const fs::path index = fs::path(dir) / kIndexFile;
  if (fs::exists(single, ec)) {
    MINERU_ASSIGN_OR_RETURN(
        SafetensorsFile file,
        SafetensorsFile::Open(single.string(), limits.max_header_bytes, limits.max_json_depth));
    checkpoint.files_.push_back(std::make_unique<SafetensorsFile>(std::move(file)));
    MINERU_RETURN_IF_ERROR(checkpoint.Index(*checkpoint.files_.back(), nullptr));
  } else if (fs::exists(index, ec)) {
    MINERU_ASSIGN_OR_RETURN(Json index_json, ReadJsonFile(index.string(), limits.max_json_bytes,
                                                          limits.max_json_depth));
    const auto map_it = index_json.find("weight_map");
    if (!index_json.is_object() || map_it == index_json.end() || !map_it->is_object()) {
      return Fail(ErrorCode::kCorrupt, "{}: no 'weight_map' object", index.string());
    }
    // shard file -> tensors it must hold
    std::map<std::string, std::set<std::string>> shards;
    for (const auto& [name, file] : map_it->items()) {
      if (!file.is_string() || !IsPlainFileName(file.get<std::string>())) {
        return Fail(ErrorCode::kCorrupt, "{}: tensor '{}' maps to an invalid file name {}",
                    index.string(), name, file.dump());
      }
      shards[file.get<std::string>()].insert(name);
    }
    if (static_cast<int>(shards.size()) > limits.max_shards) {
      return Fail(ErrorCode::kResourceExhausted, "{}: {} shards is over the limit of {}",
                  index.string(), shards.size(), limits.max_shards);
    }
    for (const auto& [shard, names] : shards) {
      MINERU_ASSIGN_OR_RETURN(
          SafetensorsFile file,
          SafetensorsFile::Open((fs::path(dir) / shard).string(), limits.max_header_bytes,
                                limits.max_json_depth));
      checkpoint.files_.push_back(std::make_unique<SafetensorsFile>(std::move(file)));
      const SafetensorsFile& opened = *checkpoint.files_.back();
      for (const std::string& name : names) {
        bool found = false;
        for (const TensorInfo& info : opened.tensors()) found = found || info.name == name;
        if (!found) {
          return Fail(ErrorCode::kCorrupt, "{}: tensor '{}' is listed in {} but not stored there",
                      opened.path(), name, kIndexFile);
        }
      }
      MINERU_RETURN_IF_ERROR(checkpoint.Index(opened, &names));
    }
  } else {
    return Fail(ErrorCode::kNotFound, "{}: neither {} nor {} exists", dir, kSingleFile, kIndexFile);
  }
  checkpoint.tied_ = checkpoint.config_.tie_word_embeddings || !checkpoint.Has("lm_head.weight");
  checkpoint.ComputeFingerprint();
  return checkpoint;
}

Result<const CheckpointTensor*> Checkpoint::Find(std::string_view name) const {
  const auto it = tensors_.find(std::string(name));
  if (it == tensors_.end()) {
    return Fail(ErrorCode::kNotFound, "{}: tensor '{}' is missing from the checkpoint", dir_, name);
  }
  return &it->second;
}

Result<ops::MatrixView> Checkpoint::Matrix(std::string_view name,
                                           std::span<const int64_t> shape) const {
  MINERU_ASSIGN_OR_RETURN(const CheckpointTensor* tensor, Find(name));
  const TensorInfo& info = *tensor->info;
  if (!ops::IsKernelDType(info.dtype)) {
    return Fail(ErrorCode::kUnsupported, "{}: tensor '{}' has dtype {} (BF16, F16 or F32 needed)",
                tensor->file->path(), info.name, DTypeName(info.dtype));
  }
  if (!std::equal(info.shape.begin(), info.shape.end(), shape.begin(), shape.end())) {
    return Fail(ErrorCode::kCorrupt, "{}: tensor '{}' has shape {}, the config implies {}",
                tensor->file->path(), info.name, ShapeString(info.shape), ShapeString(shape));
  }
  int64_t cols = 1;
  for (size_t i = 1; i < shape.size(); ++i) cols *= shape[i];
  return ops::MatrixView{tensor->file->Data(info).data(), info.dtype, shape.empty() ? 1 : shape[0],
                         cols};
}

Result<std::vector<float>> Checkpoint::Vector(std::string_view name, int64_t size) const {
  const int64_t shape[] = {size};
  MINERU_ASSIGN_OR_RETURN(ops::MatrixView view, Matrix(name, shape));
  std::vector<float> values(static_cast<size_t>(size));
  const auto* bytes = static_cast<const uint8_t*>(view.data);
  for (int64_t i = 0; i < size; ++i) {
    uint16_t half;
    switch (view.dtype) {
      case DType::kBF16:
        std::memcpy(&half, bytes + 2 * i, 2);
        values[static_cast<size_t>(i)] = Bf16ToF32(half);
        break;
      case DType::kF16:
        std::memcpy(&half, bytes + 2 * i, 2);
        values[static_cast<size_t>(i)] = F16ToF32(half);
        break;
      default:
        std::memcpy(&values[static_cast<size_t>(i)], bytes + 4 * i, 4);
    }
  }
  return values;
}

int64_t Checkpoint::num_parameters() const {
  int64_t total = 0;
  for (const auto& [name, tensor] : tensors_) total += tensor.info->NumElements();
  return total;
}

uint64_t Checkpoint::num_bytes() const {
  uint64_t total = 0;
  for (const auto& [name, tensor] : tensors_) total += tensor.info->bytes;
  return total;
}

std::vector<std::string> Checkpoint::files() const {
  std::vector<std::string> paths;
  for (const auto& file : files_) paths.push_back(file->path());
  return paths;
}

std::vector<std::span<const uint8_t>> Checkpoint::mapped_files() const {
  std::vector<std::span<const uint8_t>> spans;
  for (const auto& file : files_) spans.push_back(file->bytes());
  return spans;
}

void Checkpoint::ComputeFingerprint() {
  // Version tag first so a change of this recipe can never collide with an old fingerprint.
  constexpr uint64_t kWindow = 4096;
  constexpr uint64_t kWindows = 16;
  Sha256 hasher;
  hasher.Update("mineru-model-fingerprint-v1\n");
  hasher.Update(config_json_.dump());            // object keys sorted: canonical
  for (const auto& [name, tensor] : tensors_) {  // sorted by canonical name
    const TensorInfo& info = *tensor.info;
    hasher.Update(name + "|" + std::string(DTypeName(info.dtype)) + "|" + ShapeString(info.shape) +
                  "\n");
    const std::span<const uint8_t> data = tensor.file->Data(info);
    if (data.size() <= kWindow * kWindows) {
      hasher.Update(data);
    } else {
      const uint64_t stride = (data.size() - kWindow) / (kWindows - 1);
      for (uint64_t w = 0; w < kWindows; ++w) hasher.Update(data.subspan(w * stride, kWindow));
    }
  }
  const Sha256Digest digest = hasher.Finish();
  fingerprint_ = HexString(digest);
  // The sampled windows faulted in whole runs of pages around them (the kernel's fault-around
  // and read-ahead): about 64 KiB each, 0.6 GB for MinerU2.5, all of it in this process's
  // resident set. Let them go; whatever is used later is faulted back from the page cache.
  for (const auto& file : files_) {
    const std::span<const uint8_t> bytes = file->bytes();
    DropMappedPages(bytes.data(), bytes.size());
  }
}

}  // namespace mineru::model
