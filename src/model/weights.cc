// SPDX-License-Identifier: Apache-2.0
#include "model/weights.h"

#include <string>

namespace mineru::model {
namespace {

// Binds tensors under a name prefix, remembering the first error.
class Binder {
 public:
  Binder(const Checkpoint& checkpoint, std::string prefix)
      : checkpoint_(checkpoint), prefix_(std::move(prefix)) {}

  ops::MatrixView Matrix(const std::string& name, std::initializer_list<int64_t> shape) {
    auto view = checkpoint_.Matrix(prefix_ + name, std::vector<int64_t>(shape));
    if (!view) return Keep(view.error()), ops::MatrixView{};
    return *view;
  }
  std::vector<float> Vector(const std::string& name, int64_t size) {
    auto values = checkpoint_.Vector(prefix_ + name, size);
    if (!values) return Keep(values.error()), std::vector<float>{};
    return std::move(*values);
  }
  Status status() const {
    if (error_) return tl::unexpected(*error_);
    return OkStatus();
  }

 private:
  void Keep(const Error& error) {
    if (!error_) error_ = error;
  }
  const Checkpoint& checkpoint_;
  std::string prefix_;
  std::optional<Error> error_;
};

Result<VisionWeights> BindVision(const Checkpoint& checkpoint) {
  const VisionConfig& c = checkpoint.config().vision;
  const int64_t e = c.embed_dim, mlp = c.mlp_hidden, merged = int64_t{c.embed_dim} * c.merge_unit();
  VisionWeights w;
  Binder top(checkpoint, "visual.");
  w.patch_embed = top.Matrix("patch_embed.proj.weight",
                             {e, c.in_channels, c.temporal_patch_size, c.patch_size, c.patch_size});
  for (int i = 0; i < c.depth; ++i) {
    Binder b(checkpoint, "visual.blocks." + std::to_string(i) + ".");
    VisionBlockWeights block;
    block.norm1_weight = b.Vector("norm1.weight", e);
    block.norm1_bias = b.Vector("norm1.bias", e);
    block.norm2_weight = b.Vector("norm2.weight", e);
    block.norm2_bias = b.Vector("norm2.bias", e);
    block.qkv = b.Matrix("attn.qkv.weight", {3 * e, e});
    block.qkv_bias = b.Vector("attn.qkv.bias", 3 * e);
    block.proj = b.Matrix("attn.proj.weight", {e, e});
    block.proj_bias = b.Vector("attn.proj.bias", e);
    block.fc1 = b.Matrix("mlp.fc1.weight", {mlp, e});
    block.fc1_bias = b.Vector("mlp.fc1.bias", mlp);
    block.fc2 = b.Matrix("mlp.fc2.weight", {e, mlp});
    block.fc2_bias = b.Vector("mlp.fc2.bias", e);
    MINERU_RETURN_IF_ERROR(b.status());
    w.blocks.push_back(std::move(block));
  }
  w.merger_norm_weight = top.Vector("merger.ln_q.weight", e);
  w.merger_norm_bias = top.Vector("merger.ln_q.bias", e);
  w.merger_fc1 = top.Matrix("merger.mlp.0.weight", {merged, merged});
  w.merger_fc1_bias = top.Vector("merger.mlp.0.bias", merged);
  w.merger_fc2 = top.Matrix("merger.mlp.2.weight", {c.out_hidden, merged});
  w.merger_fc2_bias = top.Vector("merger.mlp.2.bias", c.out_hidden);
  MINERU_RETURN_IF_ERROR(top.status());
  return w;
}

Result<DecoderWeights> BindDecoder(const Checkpoint& checkpoint) {
  const TextConfig& c = checkpoint.config().text;
  const int64_t d = c.hidden_size, kv = int64_t{c.num_kv_heads} * c.head_dim();
  const int64_t inter = c.intermediate_size;
  DecoderWeights w;
  Binder top(checkpoint, "model.");
  w.embed_tokens = top.Matrix("embed_tokens.weight", {c.vocab_size, d});
  for (int i = 0; i < c.num_layers; ++i) {
    Binder b(checkpoint, "model.layers." + std::to_string(i) + ".");
    DecoderLayerWeights layer;
    layer.input_norm = b.Vector("input_layernorm.weight", d);
    layer.post_attention_norm = b.Vector("post_attention_layernorm.weight", d);
    layer.q = b.Matrix("self_attn.q_proj.weight", {d, d});
    layer.q_bias = b.Vector("self_attn.q_proj.bias", d);
    layer.k = b.Matrix("self_attn.k_proj.weight", {kv, d});
    layer.k_bias = b.Vector("self_attn.k_proj.bias", kv);
    layer.v = b.Matrix("self_attn.v_proj.weight", {kv, d});
    layer.v_bias = b.Vector("self_attn.v_proj.bias", kv);
    layer.o = b.Matrix("self_attn.o_proj.weight", {d, d});
    layer.gate = b.Matrix("mlp.gate_proj.weight", {inter, d});
    layer.up = b.Matrix("mlp.up_proj.weight", {inter, d});
    layer.down = b.Matrix("mlp.down_proj.weight", {d, inter});
    MINERU_RETURN_IF_ERROR(b.status());
    w.layers.push_back(std::move(layer));
  }
  w.final_norm = top.Vector("norm.weight", d);
  MINERU_RETURN_IF_ERROR(top.status());
  if (checkpoint.tied_embeddings()) {
    w.lm_head = w.embed_tokens;
  } else {
    const int64_t shape[] = {c.vocab_size, d};
    MINERU_ASSIGN_OR_RETURN(w.lm_head, checkpoint.Matrix("lm_head.weight", shape));
  }
  return w;
}

}  // namespace

Result<ModelWeights> BindWeights(const Checkpoint& checkpoint) {
  ModelWeights weights;
  MINERU_ASSIGN_OR_RETURN(weights.vision, BindVision(checkpoint));
  MINERU_ASSIGN_OR_RETURN(weights.decoder, BindDecoder(checkpoint));
  return weights;
}

}  // namespace mineru::model
