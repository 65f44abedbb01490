// SPDX-License-Identifier: Apache-2.0
#include "model/packed_vision.h"

namespace mineru::model {

int64_t PackedVisionWeights::bytes() const {
  int64_t total = patch_embed.bytes() + merger_fc1.bytes() + merger_fc2.bytes();
  for (const PackedVisionBlock& block : blocks) {
    total += block.qkv.bytes() + block.proj.bytes() + block.fc1.bytes() + block.fc2.bytes();
  }
  return total;
}

std::vector<std::pair<std::string, const ops::PackedMatrix*>> PackedVisionWeights::Matrices()
    const {
  std::vector<std::pair<std::string, const ops::PackedMatrix*>> out;
  out.emplace_back(VisionMatrixName(-1, "patch_embed"), &patch_embed);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const int b = static_cast<int>(i);
    out.emplace_back(VisionMatrixName(b, "qkv"), &blocks[i].qkv);
    out.emplace_back(VisionMatrixName(b, "proj"), &blocks[i].proj);
    out.emplace_back(VisionMatrixName(b, "fc1"), &blocks[i].fc1);
    out.emplace_back(VisionMatrixName(b, "fc2"), &blocks[i].fc2);
  }
  out.emplace_back(VisionMatrixName(-1, "merger_fc1"), &merger_fc1);
  out.emplace_back(VisionMatrixName(-1, "merger_fc2"), &merger_fc2);
  return out;
}

Result<PackedVisionWeights> PackVisionWeights(const MatrixFactory& factory,
                                              const VisionWeights& weights) {
  PackedVisionWeights packed;
  packed.precision = factory.options().precision;
  MINERU_ASSIGN_OR_RETURN(packed.patch_embed,
                          factory.Make(VisionMatrixName(-1, "patch_embed"), weights.patch_embed));
  packed.blocks.reserve(weights.blocks.size());
  for (size_t i = 0; i < weights.blocks.size(); ++i) {
    const VisionBlockWeights& w = weights.blocks[i];
    const int b = static_cast<int>(i);
    PackedVisionBlock block;
    MINERU_ASSIGN_OR_RETURN(block.qkv, factory.Make(VisionMatrixName(b, "qkv"), w.qkv));
    MINERU_ASSIGN_OR_RETURN(block.proj, factory.Make(VisionMatrixName(b, "proj"), w.proj));
    MINERU_ASSIGN_OR_RETURN(block.fc1, factory.Make(VisionMatrixName(b, "fc1"), w.fc1));
    MINERU_ASSIGN_OR_RETURN(block.fc2, factory.Make(VisionMatrixName(b, "fc2"), w.fc2));
    packed.blocks.push_back(std::move(block));
  }
  MINERU_ASSIGN_OR_RETURN(packed.merger_fc1,
                          factory.Make(VisionMatrixName(-1, "merger_fc1"), weights.merger_fc1));
  MINERU_ASSIGN_OR_RETURN(packed.merger_fc2,
                          factory.Make(VisionMatrixName(-1, "merger_fc2"), weights.merger_fc2));
  return packed;
}

}  // namespace mineru::model
