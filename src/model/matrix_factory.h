// SPDX-License-Identifier: Apache-2.0
// Prepares each of the model's matrices for compute as ComputeOptions say (model/precision.h):
//   fp32 precision, bf16 weights: viewed in the mapped packed-panels file when one is given
//     (nothing copied), else packed now into float32-contract panels (ops/packed_matrix.h);
//     either way the checkpoint pages of the parts are dropped from the resident set;
//   bf16 precision, bf16 weights: the checkpoint's rows viewed in place (nothing copied);
//   int8 weights: viewed in the mapped quantized file when one is given (nothing copied), else
//     quantized now (and the parts' pages dropped).
// Names identify a matrix in those files (DecoderMatrixName, VisionMatrixName;
// model/weights_file.h).
#pragma once

#include <span>
#include <string>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/precision.h"
#include "model/weights_file.h"
#include "ops/packed_matrix.h"

namespace mineru::model {

// "decoder.<layer>.<role>" (qkv, o, gate_up, down) and "decoder.lm_head".
std::string DecoderMatrixName(int layer, std::string_view role);
// "vision.<block>.<role>" (qkv, proj, fc1, fc2) and "vision.<role>" for block < 0
// (patch_embed, merger_fc1, merger_fc2).
std::string VisionMatrixName(int block, std::string_view role);

class MatrixFactory {
 public:
  // `file` may be null; when given it is of the kind `options` read (an int8 file for int8
  // weights, a panels file for fp32 precision with the checkpoint's weights, none for bf16
  // precision) and must outlive every matrix made from it.
  MatrixFactory(ThreadPool& pool, const ComputeOptions& options, const WeightsFile* file)
      : pool_(pool), options_(options), file_(file) {}

  // The row-concatenation of `parts` as matrix `name`. keep_pages: the parts are still read
  // elsewhere (a tied head is the embedding table), so their pages are never dropped. Fails only
  // when the file's tensor is unusable (wrong shape or panel dtype, missing).
  Result<ops::PackedMatrix> Make(const std::string& name, std::span<const ops::MatrixView> parts,
                                 bool keep_pages = false) const;
  Result<ops::PackedMatrix> Make(const std::string& name, const ops::MatrixView& part,
                                 bool keep_pages = false) const {
    return Make(name, std::span(&part, 1), keep_pages);
  }

  const ComputeOptions& options() const { return options_; }

 private:
  ThreadPool& pool_;
  ComputeOptions options_;
  const WeightsFile* file_;
};

}  // namespace mineru::model
