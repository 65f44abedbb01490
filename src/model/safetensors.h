// SPDX-License-Identifier: Apache-2.0
// One .safetensors file, memory-mapped and validated: an 8-byte little-endian header length,
// a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the data.
// Validation follows the format's own rules: known dtypes, sizes that match shapes, offsets
// inside the data, sorted without overlap or holes, covering the data exactly.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/json.h"
#include "base/mapped_file.h"
#include "base/status.h"

namespace mineru::model {

// The format's own cap on the header (100 MB, as in the reference implementation).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // byte offset of the data in the file
  uint64_t bytes = 0;

  int64_t NumElements() const;
};

class SafetensorsFile {
 public:
  // The header is parsed under JsonFileLimits(max_json_depth): a valid one nests three levels.
  static Result<SafetensorsFile> Open(const std::string& path,
                                      uint64_t max_header_bytes = kSafetensorsMaxHeaderBytes,
                                      int max_json_depth = kJsonMaxDepth);

  const std::string& path() const { return file_.path(); }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::span<const uint8_t> bytes() const { return file_.bytes(); }
  std::span<const uint8_t> Data(const TensorInfo& tensor) const {
    return file_.bytes().subspan(tensor.offset, tensor.bytes);
  }

 private:
  MappedFile file_;
  std::vector<TensorInfo> tensors_;  // in header order
  std::map<std::string, std::string> metadata_;
};

// Writes a safetensors file (used by make-model and tests). Tensors are laid out in the given
// order; `data` of each holds exactly NumElements * DTypeSize bytes.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::kBF16;
  std::vector<int64_t> shape;
  std::span<const uint8_t> data;
};

// Serialises the header (JSON text, padded to 8 bytes) for the given tensors.
std::string SafetensorsHeader(std::span<const TensorToWrite> tensors,
                              const std::map<std::string, std::string>& metadata);

}  // namespace mineru::model
