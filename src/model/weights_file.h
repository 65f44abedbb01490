// SPDX-License-Identifier: Apache-2.0
// A checkpoint's matrices prepared for compute, written once and mapped read-only by every
// process that loads the checkpoint that way: the page cache holds one copy for the whole
// machine, and loading costs no compute. Two kinds share one format and one implementation:
//   int8:   `mineru-cpp quantize` writes mineru-q8.bin, read by `--weights int8`; each tensor in
//           the layout of ops/q8_matrix.h.
//   panels: `mineru-cpp pack` writes mineru-packed.bin, read by `--precision fp32` with the
//           checkpoint's own weights; each tensor exactly the bytes ops::PackedMatrix::Pack
//           gives (bf16 panels for a bf16 checkpoint, f32 panels for f32 and f16 ones).
//
// Format (all integers little-endian):
//   bytes 0..7    the kind's magic: "MINERUQ8" (int8) or "MINERUPK" (panels)
//   bytes 8..15   u64 H: length of the JSON header that follows
//   bytes 16..    JSON, keys sorted:
//     int8:   {"fingerprint": <the checkpoint's>, "format": 1, "group": 32,
//              "layout": "q8-panels-16",
//              "tensors": {<name>: {"bytes": b, "cols": c, "offset": o, "rows": r}}}
//     panels: {"depth_block": 1024, "fingerprint": ..., "format": 1, "layout": "panels-32",
//              "panel_cols": 32,
//              "tensors": {<name>: {"bytes": b, "cols": c, "dtype": "BF16" | "F32",
//                                   "offset": o, "rows": r}}}
//     padded with spaces to its length (JSON allows trailing whitespace)
//   each tensor's bytes at absolute offset o, a multiple of kWeightsFileAlign, after the header;
//   b equal to the layout's size for [r, c] (and dtype); ranges do not overlap and end within
//   the file.
// Names are those of model/packed_decoder.h and model/packed_vision.h (DecoderMatrixName,
// VisionMatrixName). Everything is validated on open: a file that is not exactly this is refused
// with kCorrupt naming the file and the field; a file of the other kind with kInvalidArgument
// naming both kinds; one written for another checkpoint with kInvalidArgument naming both
// fingerprints and the command that writes it again.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/mapped_file.h"
#include "base/status.h"
#include "model/checkpoint.h"
#include "ops/packed_matrix.h"

namespace mineru::model {

enum class WeightsFileKind {
  kInt8,    // ops::Q8Matrix bytes, from `mineru-cpp quantize`
  kPanels,  // ops::PackedMatrix panels (WeightLayout::kPanels), from `mineru-cpp pack`
};

inline constexpr char kQuantizedFileName[] = "mineru-q8.bin";
inline constexpr char kPackedFileName[] = "mineru-packed.bin";
inline constexpr int64_t kWeightsFileAlign = 4096;
inline constexpr int64_t kWeightsFileFormat = 1;

// The file a kind is found under next to the checkpoint (kQuantizedFileName, kPackedFileName).
const char* WeightsFileName(WeightsFileKind kind);
// "int8 weights" or "packed panels", for messages.
std::string_view WeightsFileKindName(WeightsFileKind kind);
// The command that writes the kind: "quantize" or "pack".
std::string_view WeightsFileCommand(WeightsFileKind kind);

class WeightsFile {
 public:
  // Maps and validates `path` as a file of `kind` for the checkpoint of `fingerprint`; its
  // header is bounded by limits.max_json_bytes.
  static Result<WeightsFile> Open(const std::string& path, WeightsFileKind kind,
                                  std::string_view fingerprint, const CheckpointLimits& limits);

  // A view of tensor `name` (nothing copied; the view must not outlive this file), which must
  // have this shape and element type: kI8 in an int8 file, the panel dtype (kBF16 or kF32) in a
  // panels file. kNotFound when the file lacks it, kCorrupt when it differs.
  Result<ops::PackedMatrix> View(const std::string& name, int64_t rows, int64_t cols,
                                 DType dtype) const;

  // What the header lists for a tensor, validated: bytes at [offset, offset + bytes) of the
  // file, exactly the layout's size for [rows, cols] in dtype.
  struct Entry {
    int64_t rows, cols, offset, bytes;
    DType dtype;
  };

  WeightsFileKind kind() const { return kind_; }
  const std::string& path() const { return file_.path(); }
  size_t tensors() const { return entries_.size(); }
  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

 private:
  WeightsFileKind kind_ = WeightsFileKind::kInt8;
  MappedFile file_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// Writes a file of `kind` atomically (readers see nothing or all of it). Each matrix must be in
// the kind's layout (WeightLayout::kQ8 for int8, kPanels for panels), else kInvalidArgument.
Status WriteWeightsFile(
    const std::string& path, WeightsFileKind kind, std::string_view fingerprint,
    const std::vector<std::pair<std::string, const ops::PackedMatrix*>>& tensors);

}  // namespace mineru::model
