// SPDX-License-Identifier: Apache-2.0
// mineru-cpp inspect DIR: what a checkpoint directory holds, and how long it takes to open.
#include <chrono>
#include <cstdio>
#include <map>

#include "apps/commands.h"
#include "apps/model_options.h"
#include "model/model.h"

namespace mineru::apps {
namespace {

std::string Thousands(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int RunInspect(const std::string& dir, const ModelLoadOptions& load, bool json_output) {
  const auto start = std::chrono::steady_clock::now();
  auto model = model::Model::Load(dir, load.Limits(), /*pack=*/false);
  if (!model) return ReportError(model.error());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const model::Checkpoint& ckpt = (*model)->checkpoint();
  const model::ModelConfig& c = ckpt.config();
  std::map<std::string, int> dtypes;
  for (const auto& [name, tensor] : ckpt.tensors())
    ++dtypes[std::string(DTypeName(tensor.info->dtype))];
  const bool nested = ckpt.config_json().contains("text_config");
  if (json_output) {
    Json out{{"dir", dir},
             {"model_type", c.model_type},
             {"config_layout", nested ? "text_config" : "root"},
             {"vision",
              {{"depth", c.vision.depth},
               {"embed_dim", c.vision.embed_dim},
               {"num_heads", c.vision.num_heads},
               {"mlp_hidden", c.vision.mlp_hidden},
               {"patch_size", c.vision.patch_size},
               {"temporal_patch_size", c.vision.temporal_patch_size},
               {"spatial_merge_size", c.vision.spatial_merge_size},
               {"out_hidden", c.vision.out_hidden}}},
             {"text",
              {{"hidden_size", c.text.hidden_size},
               {"num_layers", c.text.num_layers},
               {"num_heads", c.text.num_heads},
               {"num_kv_heads", c.text.num_kv_heads},
               {"intermediate_size", c.text.intermediate_size},
               {"vocab_size", c.text.vocab_size},
               {"rope_theta", c.text.rope_theta},
               {"mrope_section", c.text.mrope_section},
               {"max_position_embeddings", c.text.max_position_embeddings}}},
             {"tied_embeddings", ckpt.tied_embeddings()},
             {"files", ckpt.files()},
             {"tensors", ckpt.tensors().size()},
             {"dtypes", dtypes},
             {"parameters", ckpt.num_parameters()},
             {"bytes", ckpt.num_bytes()},
             {"fingerprint", ckpt.fingerprint()},
             {"load_seconds", seconds}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("model:        %s\n", dir.c_str());
  std::printf("architecture: %s (text fields %s)\n", c.model_type.c_str(),
              nested ? "in text_config" : "at the root");
  std::printf(
      "vision:       %d blocks, width %d, %d heads of %d, MLP %d, patch %d x %d, "
      "temporal %d, merge %d, output %d\n",
      c.vision.depth, c.vision.embed_dim, c.vision.num_heads, c.vision.head_dim(),
      c.vision.mlp_hidden, c.vision.patch_size, c.vision.patch_size, c.vision.temporal_patch_size,
      c.vision.spatial_merge_size, c.vision.out_hidden);
  std::printf(
      "text:         %d layers, width %d, %d query / %d kv heads of %d, MLP %d, "
      "vocab %lld, rope theta %g, mrope [%d, %d, %d], context %lld\n",
      c.text.num_layers, c.text.hidden_size, c.text.num_heads, c.text.num_kv_heads,
      c.text.head_dim(), c.text.intermediate_size, static_cast<long long>(c.text.vocab_size),
      c.text.rope_theta, c.text.mrope_section[0], c.text.mrope_section[1], c.text.mrope_section[2],
      static_cast<long long>(c.text.max_position_embeddings));
  std::printf("embeddings:   %s\n",
              ckpt.tied_embeddings()
                  ? (ckpt.Has("lm_head.weight") ? "tied (config)" : "tied (no lm_head.weight)")
                  : "separate lm_head.weight");
  std::string dtype_text;
  for (const auto& [name, count] : dtypes) dtype_text += " " + name + " x" + std::to_string(count);
  std::printf("tensors:      %zu in %zu file(s):%s\n", ckpt.tensors().size(), ckpt.files().size(),
              dtype_text.c_str());
  std::printf("parameters:   %s (%s bytes, %.2f GiB)\n", Thousands(ckpt.num_parameters()).c_str(),
              Thousands(ckpt.num_bytes()).c_str(),
              static_cast<double>(ckpt.num_bytes()) / (1 << 30));
  std::printf("fingerprint:  sha256:%s\n", ckpt.fingerprint().c_str());
  std::printf("loaded in:    %.3f s\n", seconds);
  return 0;
}

}  // namespace

void AddInspectCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "inspect", "Print a checkpoint's config, tensor count, parameters, bytes and fingerprint");
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto load = std::make_shared<ModelLoadOptions>();
  cmd->add_option("dir", *dir, "Checkpoint directory (config.json + safetensors)")->required();
  cmd->add_flag("--json", *json, "Print JSON");
  load->Register(*cmd);
  cmd->callback([=] { *exit_code = RunInspect(*dir, *load, *json); });
}

}  // namespace mineru::apps
