// SPDX-License-Identifier: Apache-2.0
#include "model/packed_decoder.h"

#include "base/mapped_file.h"

namespace mineru::model {

int64_t PackedDecoderWeights::bytes() const {
  int64_t total = lm_head.bytes();
  for (const PackedDecoderLayer& layer : layers) {
    total += layer.qkv.bytes() + layer.o.bytes() + layer.gate_up.bytes() + layer.down.bytes();
  }
  return total;
}

PackedDecoderWeights PackDecoderWeights(ThreadPool& pool, const DecoderWeights& weights,
                                        Precision precision) {
  PackedDecoderWeights packed;
  if (precision == Precision::kBf16) {
    for (const DecoderLayerWeights& w : weights.layers) {
      PackedDecoderLayer layer;
      const ops::MatrixView qkv[] = {w.q, w.k, w.v};
      layer.qkv = ops::PackedMatrix::Bf16Rows(qkv);
      layer.qkv_bias = w.q_bias;
      layer.qkv_bias.insert(layer.qkv_bias.end(), w.k_bias.begin(), w.k_bias.end());
      layer.qkv_bias.insert(layer.qkv_bias.end(), w.v_bias.begin(), w.v_bias.end());
      layer.o = ops::PackedMatrix::Bf16Rows(w.o);
      const ops::MatrixView gate_up[] = {w.gate, w.up};
      layer.gate_up = ops::PackedMatrix::Bf16Rows(gate_up);
      layer.down = ops::PackedMatrix::Bf16Rows(w.down);
      packed.layers.push_back(std::move(layer));
    }
    packed.lm_head = ops::PackedMatrix::Bf16Rows(weights.lm_head);
    return packed;
  }
  auto release = [](const ops::MatrixView& m) {
    DropMappedPages(m.data, static_cast<size_t>(m.rows * m.cols) * DTypeSize(m.dtype));
  };
  for (const DecoderLayerWeights& w : weights.layers) {
    PackedDecoderLayer layer;
    const ops::MatrixView qkv[] = {w.q, w.k, w.v};
    layer.qkv = ops::PackedMatrix::Pack(pool, qkv);
    layer.qkv_bias = w.q_bias;
    layer.qkv_bias.insert(layer.qkv_bias.end(), w.k_bias.begin(), w.k_bias.end());
    layer.qkv_bias.insert(layer.qkv_bias.end(), w.v_bias.begin(), w.v_bias.end());
    layer.o = ops::PackedMatrix::Pack(pool, w.o);
    const ops::MatrixView gate_up[] = {w.gate, w.up};
    layer.gate_up = ops::PackedMatrix::Pack(pool, gate_up);
    layer.down = ops::PackedMatrix::Pack(pool, w.down);
    for (const ops::MatrixView* m : {&w.q, &w.k, &w.v, &w.o, &w.gate, &w.up, &w.down}) {
      release(*m);
    }
    packed.layers.push_back(std::move(layer));
  }
  packed.lm_head = ops::PackedMatrix::Pack(pool, weights.lm_head);
  // A separate head is only ever read packed; a tied one is the embedding table, still used.
  if (weights.lm_head.data != weights.embed_tokens.data) release(weights.lm_head);
  return packed;
}

}  // namespace mineru::model
