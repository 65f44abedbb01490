// SPDX-License-Identifier: Apache-2.0
// The int8 weights of a checkpoint, written once by `mineru-cpp quantize` and mapped read-only by
// every process that loads the checkpoint with `--weights int8`: the page cache holds one copy
// for the whole machine, and loading costs no compute.
//
// Format (all integers little-endian):
//   bytes 0..7    "MINERUQ8"
//   bytes 8..15   u64 H: length of the JSON header that follows
//   bytes 16..    JSON: {"format": 1, "group": 32, "layout": "q8-panels-16",
//                        "fingerprint": <the checkpoint's fingerprint>,
//                        "tensors": {<name>: {"rows": r, "cols": c, "offset": o, "bytes": b}}}
//   each tensor's bytes at absolute offset o, a multiple of kQuantizedAlign, b equal to
//   ops::Q8Matrix::BytesFor(r, c), in the layout of ops/q8_matrix.h; ranges do not overlap and
//   end within the file.
// Names are those of model/packed_decoder.h and model/packed_vision.h (DecoderMatrixName,
// VisionMatrixName). Everything is validated on open: a file that is not exactly this is refused
// with kCorrupt naming the file and the field; one written for another checkpoint with
// kInvalidArgument naming both fingerprints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"
#include "model/checkpoint.h"
#include "ops/q8_matrix.h"

namespace mineru::model {

inline constexpr char kQuantizedFileName[] = "mineru-q8.bin";
inline constexpr int64_t kQuantizedAlign = 4096;
inline constexpr int64_t kQuantizedFormat = 1;

class QuantizedFile {
 public:
  // Maps and validates `path`; its header is bounded by limits.max_json_bytes.
  static Result<QuantizedFile> Open(const std::string& path, std::string_view fingerprint,
                                    const CheckpointLimits& limits);

  // A view of tensor `name`, which must have this shape; kNotFound when the file lacks it.
  Result<ops::Q8Matrix> View(const std::string& name, int64_t rows, int64_t cols) const;

  const std::string& path() const { return file_.path(); }
  size_t tensors() const { return entries_.size(); }

 private:
  struct Entry {
    int64_t rows, cols, offset, bytes;
  };
  MappedFile file_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// Writes the file atomically (readers see nothing or all of it).
Status WriteQuantizedFile(const std::string& path, std::string_view fingerprint,
                          const std::vector<std::pair<std::string, const ops::Q8Matrix*>>& tensors);

}  // namespace mineru::model
