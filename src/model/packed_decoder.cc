// SPDX-License-Identifier: Apache-2.0
#include "model/packed_decoder.h"

namespace mineru::model {

int64_t PackedDecoderWeights::bytes() const {
  int64_t total = lm_head.bytes();
  for (const PackedDecoderLayer& layer : layers) {
    total += layer.qkv.bytes() + layer.o.bytes() + layer.gate_up.bytes() + layer.down.bytes();
  }
  return total;
}

std::vector<std::pair<std::string, const ops::PackedMatrix*>> PackedDecoderWeights::Matrices()
    const {
  std::vector<std::pair<std::string, const ops::PackedMatrix*>> out;
  for (size_t i = 0; i < layers.size(); ++i) {
    const int l = static_cast<int>(i);
    out.emplace_back(DecoderMatrixName(l, "qkv"), &layers[i].qkv);
    out.emplace_back(DecoderMatrixName(l, "o"), &layers[i].o);
    out.emplace_back(DecoderMatrixName(l, "gate_up"), &layers[i].gate_up);
    out.emplace_back(DecoderMatrixName(l, "down"), &layers[i].down);
  }
  out.emplace_back(DecoderMatrixName(-1, "lm_head"), &lm_head);
  return out;
}

Result<PackedDecoderWeights> PackDecoderWeights(const MatrixFactory& factory,
                                                const DecoderWeights& weights) {
  PackedDecoderWeights packed;
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    const DecoderLayerWeights& w = weights.layers[i];
    const int l = static_cast<int>(i);
    PackedDecoderLayer layer;
    const ops::MatrixView qkv[] = {w.q, w.k, w.v};
    MINERU_ASSIGN_OR_RETURN(layer.qkv, factory.Make(DecoderMatrixName(l, "qkv"), qkv));
    layer.qkv_bias = w.q_bias;
    layer.qkv_bias.insert(layer.qkv_bias.end(), w.k_bias.begin(), w.k_bias.end());
    layer.qkv_bias.insert(layer.qkv_bias.end(), w.v_bias.begin(), w.v_bias.end());
    MINERU_ASSIGN_OR_RETURN(layer.o, factory.Make(DecoderMatrixName(l, "o"), w.o));
    const ops::MatrixView gate_up[] = {w.gate, w.up};
    MINERU_ASSIGN_OR_RETURN(layer.gate_up, factory.Make(DecoderMatrixName(l, "gate_up"), gate_up));
    MINERU_ASSIGN_OR_RETURN(layer.down, factory.Make(DecoderMatrixName(l, "down"), w.down));
    packed.layers.push_back(std::move(layer));
  }
  // A tied head is the embedding table, still read for lookups: its pages stay.
  const bool tied = weights.lm_head.data == weights.embed_tokens.data;
  MINERU_ASSIGN_OR_RETURN(packed.lm_head,
                          factory.Make(DecoderMatrixName(-1, "lm_head"), weights.lm_head, tied));
  return packed;
}

}  // namespace mineru::model
