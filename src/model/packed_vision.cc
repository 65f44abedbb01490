// SPDX-License-Identifier: Apache-2.0
#include "model/packed_vision.h"

#include "base/mapped_file.h"

namespace mineru::model {

int64_t PackedVisionWeights::bytes() const {
  int64_t total = patch_embed.bytes() + merger_fc1.bytes() + merger_fc2.bytes();
  for (const PackedVisionBlock& block : blocks) {
    total += block.qkv.bytes() + block.proj.bytes() + block.fc1.bytes() + block.fc2.bytes();
  }
  return total;
}

PackedVisionWeights PackVisionWeights(ThreadPool& pool, const VisionWeights& weights,
                                      Precision precision) {
  PackedVisionWeights packed;
  packed.precision = precision;
  // Every matrix packed here is only ever read packed: its mapped pages can go. bf16 rows are
  // the mapped pages themselves.
  auto pack = [&pool, precision](const ops::MatrixView& m) {
    if (precision == Precision::kBf16) return ops::PackedMatrix::Bf16Rows(m);
    ops::PackedMatrix p = ops::PackedMatrix::Pack(pool, m);
    DropMappedPages(m.data, static_cast<size_t>(m.rows * m.cols) * DTypeSize(m.dtype));
    return p;
  };
  packed.patch_embed = pack(weights.patch_embed);
  packed.blocks.reserve(weights.blocks.size());
  for (const VisionBlockWeights& w : weights.blocks) {
    PackedVisionBlock block;
    block.qkv = pack(w.qkv);
    block.proj = pack(w.proj);
    block.fc1 = pack(w.fc1);
    block.fc2 = pack(w.fc2);
    packed.blocks.push_back(std::move(block));
  }
  packed.merger_fc1 = pack(weights.merger_fc1);
  packed.merger_fc2 = pack(weights.merger_fc2);
  return packed;
}

}  // namespace mineru::model
