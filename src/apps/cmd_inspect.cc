// SPDX-License-Identifier: Apache-2.0
// mineru-cpp inspect DIR: what a checkpoint directory holds, how long it takes to open, which
// pipeline profile it gets and why, and what its tokenizer files say.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "apps/commands.h"
#include "apps/model_options.h"
#include "apps/model_profile.h"
#include "engine/generation_config.h"
#include "model/model.h"
#include "text/chat_template_file.h"
#include "text/tokenizer.h"

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

// The checkpoint's tokenizer files as the runtime reads them; problems are reported, not fatal
// (inspect describes a directory, it does not serve it).
struct TokenizerSummary {
  bool present = false;
  std::string error;  // tokenizer.json does not load
  size_t added = 0;
  int32_t first_added = -1, last_added = -1;
  std::string profile_tokens;  // "ok" or the error of CheckProfileTokens
  std::string template_source, template_match, template_error;
};

TokenizerSummary SummarizeTokenizer(const std::string& dir, pipeline::Profile profile) {
  TokenizerSummary s;
  auto chat_template = text::FindChatTemplate(dir);
  if (!chat_template) {
    s.template_error = chat_template.error().message;
  } else if (*chat_template) {
    s.template_source = (*chat_template)->path;
    s.template_match = text::ChatTemplateMatchName(text::MatchChatTemplate((*chat_template)->text));
  }
  std::error_code ec;
  const std::string path = dir + "/tokenizer.json";
  if (!std::filesystem::exists(path, ec)) return s;
  s.present = true;
  auto tokenizer = text::Tokenizer::Load(path);
  if (!tokenizer) {
    s.error = tokenizer.error().message;
    return s;
  }
  const auto& added = (*tokenizer)->added_tokens();
  s.added = added.size();
  for (const text::AddedToken& token : added) {
    if (s.first_added < 0 || token.id < s.first_added) s.first_added = token.id;
    s.last_added = std::max(s.last_added, token.id);
  }
  const Status check = CheckProfileTokens(dir, **tokenizer, profile);
  s.profile_tokens = check ? "ok" : check.error().message;
  return s;
}

int RunInspect(const std::string& dir, const ModelLoadOptions& load, bool json_output,
               const std::string& forced_name) {
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
  const bool nested = c.nested_text_config;
  auto evidence = ReadProfileEvidence(dir, "", load.Limits().max_json_bytes);
  if (!evidence) return ReportError(evidence.error());
  const std::optional<pipeline::Profile> forced = pipeline::ParseProfileName(forced_name);
  const pipeline::ProfileChoice choice = pipeline::DetectProfile(*evidence, forced);
  auto stop_ids = engine::ReadStopIds(dir, c);
  if (!stop_ids) return ReportError(stop_ids.error());
  const TokenizerSummary tokens = SummarizeTokenizer(dir, choice.profile);
  const Json min_pixels = evidence->min_pixels ? Json(*evidence->min_pixels) : Json();
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
             {"dtype", c.torch_dtype},
             {"stop_ids", *stop_ids},
             {"profile",
              {{"name", pipeline::ProfileName(choice.profile)},
               {"reason", choice.reason},
               {"forced", forced.has_value()},
               {"nested_text_config", evidence->nested_text_config},
               {"min_pixels", min_pixels}}},
             {"chat_template",
              {{"source", tokens.template_source.empty() ? Json() : Json(tokens.template_source)},
               {"match", tokens.template_match.empty() ? Json() : Json(tokens.template_match)},
               {"error", tokens.template_error.empty() ? Json() : Json(tokens.template_error)}}},
             {"tokenizer", tokens.present
                               ? Json{{"error", tokens.error.empty() ? Json() : Json(tokens.error)},
                                      {"added_tokens", tokens.added},
                                      {"first_added_id", tokens.first_added},
                                      {"last_added_id", tokens.last_added},
                                      {"profile_tokens", tokens.profile_tokens}}
                               : Json()},
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
  std::printf("profile:      %s: %s (text_config %s, min_pixels %s)\n",
              std::string(pipeline::ProfileName(choice.profile)).c_str(), choice.reason.c_str(),
              evidence->nested_text_config ? "nested" : "absent",
              evidence->min_pixels ? std::to_string(*evidence->min_pixels).c_str() : "unknown");
  std::string stop_text;
  for (int32_t id : *stop_ids) stop_text += (stop_text.empty() ? "" : ", ") + std::to_string(id);
  std::printf("stop ids:     %s\n", stop_text.empty() ? "none" : stop_text.c_str());
  if (!tokens.template_error.empty()) {
    std::printf("template:     error: %s\n", tokens.template_error.c_str());
  } else if (tokens.template_source.empty()) {
    std::printf("template:     none in the checkpoint (the built-in Qwen2-VL template)\n");
  } else {
    std::printf("template:     %s (%s)\n", tokens.template_match.c_str(),
                tokens.template_source.c_str());
  }
  if (!tokens.present) {
    std::printf("tokenizer:    no tokenizer.json\n");
  } else if (!tokens.error.empty()) {
    std::printf("tokenizer:    error: %s\n", tokens.error.c_str());
  } else {
    std::printf("tokenizer:    %zu added tokens (ids %d..%d); %s profile tokens: %s\n",
                tokens.added, tokens.first_added, tokens.last_added,
                std::string(pipeline::ProfileName(choice.profile)).c_str(),
                tokens.profile_tokens.c_str());
  }
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
  auto profile = std::make_shared<std::string>();
  cmd->add_option("dir", *dir, "Checkpoint directory (config.json + safetensors)")->required();
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->add_option("--profile", *profile,
                  "Show this pipeline profile as forced (2509 or pro) instead of the detected one")
      ->check(CLI::IsMember({"2509", "pro"}));
  load->Register(*cmd);
  cmd->callback([=] { *exit_code = RunInspect(*dir, *load, *json, *profile); });
}

}  // namespace mineru::apps
