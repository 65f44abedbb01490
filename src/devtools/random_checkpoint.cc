// SPDX-License-Identifier: Apache-2.0
#include "devtools/random_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/mapped_file.h"
#include "model/config.h"
#include "model/safetensors.h"
#include "text/model_files.h"

namespace mineru::devtools {
namespace {

namespace fs = std::filesystem;
using model::ModelConfig;
using model::TextConfig;
using model::VisionConfig;

enum class Init { kLinear, kBias, kNormWeight, kNormBias, kEmbedding };

struct PlannedTensor {
  std::string name;  // canonical ("visual.*", "model.*", "lm_head.weight")
  std::vector<int64_t> shape;
  Init init;
  int64_t fan_in = 1;

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

std::vector<PlannedTensor> PlanTensors(const ModelConfig& config, bool tied) {
  const VisionConfig& v = config.vision;
  const TextConfig& t = config.text;
  std::vector<PlannedTensor> plan;
  auto linear = [&](const std::string& name, int64_t out, int64_t in, bool bias) {
    plan.push_back({name + ".weight", {out, in}, Init::kLinear, in});
    if (bias) plan.push_back({name + ".bias", {out}, Init::kBias});
  };
  auto norm = [&](const std::string& name, int64_t width, bool bias) {
    plan.push_back({name + ".weight", {width}, Init::kNormWeight});
    if (bias) plan.push_back({name + ".bias", {width}, Init::kNormBias});
  };
  const int64_t e = v.embed_dim, merged = e * v.merge_unit();
  plan.push_back({"visual.patch_embed.proj.weight",
                  {e, v.in_channels, v.temporal_patch_size, v.patch_size, v.patch_size},
                  Init::kLinear,
                  v.patch_dim()});
  for (int i = 0; i < v.depth; ++i) {
    const std::string b = "visual.blocks." + std::to_string(i) + ".";
    norm(b + "norm1", e, true);
    norm(b + "norm2", e, true);
    linear(b + "attn.qkv", 3 * e, e, true);
    linear(b + "attn.proj", e, e, true);
    linear(b + "mlp.fc1", v.mlp_hidden, e, true);
    linear(b + "mlp.fc2", e, v.mlp_hidden, true);
  }
  norm("visual.merger.ln_q", e, true);
  linear("visual.merger.mlp.0", merged, merged, true);
  linear("visual.merger.mlp.2", v.out_hidden, merged, true);
  const int64_t d = t.hidden_size, kv = int64_t{t.num_kv_heads} * t.head_dim();
  plan.push_back({"model.embed_tokens.weight", {t.vocab_size, d}, Init::kEmbedding});
  for (int i = 0; i < t.num_layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    norm(l + "input_layernorm", d, false);
    norm(l + "post_attention_layernorm", d, false);
    linear(l + "self_attn.q_proj", d, d, true);
    linear(l + "self_attn.k_proj", kv, d, true);
    linear(l + "self_attn.v_proj", kv, d, true);
    linear(l + "self_attn.o_proj", d, d, false);
    linear(l + "mlp.gate_proj", t.intermediate_size, d, false);
    linear(l + "mlp.up_proj", t.intermediate_size, d, false);
    linear(l + "mlp.down_proj", d, t.intermediate_size, false);
  }
  norm("model.norm", d, false);
  if (!tied) linear("lm_head", t.vocab_size, d, false);
  std::sort(plan.begin(), plan.end(),
            [](const PlannedTensor& a, const PlannedTensor& b) { return a.name < b.name; });
  return plan;
}

std::string StoredName(const std::string& canonical, TensorNaming naming) {
  if (naming == TensorNaming::kClassic) return canonical;
  if (canonical.rfind("visual.", 0) == 0) return "model." + canonical;
  if (canonical.rfind("model.", 0) == 0) return "model.language_model." + canonical.substr(6);
  return canonical;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Approximately standard normal: the sum of 4 uniforms, centred and scaled to unit variance
// (Irwin-Hall), from 16-bit pieces of one 64-bit draw.
float StandardNormal(uint64_t& state) {
  const uint64_t bits = SplitMix64(state);
  float sum = 0;
  for (int i = 0; i < 4; ++i) sum += static_cast<float>((bits >> (16 * i)) & 0xffff) / 65536.0f;
  return (sum - 2.0f) * 1.7320508f;
}

// bf16 values of one tensor; chunk c of 1 Mi values draws from its own seeded stream, so the
// result does not depend on how chunks are spread over threads.
std::vector<uint16_t> Generate(ThreadPool& pool, const PlannedTensor& t, uint64_t seed,
                               size_t index) {
  constexpr int64_t kChunk = 1 << 20;
  const int64_t n = t.elements();
  std::vector<uint16_t> out(static_cast<size_t>(n));
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  pool.ParallelFor(static_cast<size_t>(chunks), [&](size_t chunk, int) {
    uint64_t state = seed ^ (0x51ed270b27f3e3a5ull * (index + 1)) ^ (0x2545f4914f6cdd1dull * chunk);
    SplitMix64(state);
    const int64_t begin = static_cast<int64_t>(chunk) * kChunk;
    const int64_t end = std::min(n, begin + kChunk);
    for (int64_t i = begin; i < end; ++i) {
      const float z = StandardNormal(state);
      float value = 0;
      switch (t.init) {
        case Init::kLinear:
          value = z / std::sqrt(static_cast<float>(t.fan_in));
          break;
        case Init::kBias:
        case Init::kNormBias:
        case Init::kEmbedding:
          value = 0.02f * z;
          break;
        case Init::kNormWeight:
          value = 1.0f + 0.05f * z;
          break;
      }
      out[static_cast<size_t>(i)] = F32ToBf16(value);
    }
  });
  return out;
}

Status WriteText(const fs::path& path, const std::string& text) {
  return WriteFileAtomically(path.string(),
                             std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Status WriteJson(const fs::path& path, const Json& json) {
  return WriteText(path, json.dump(2) + "\n");
}

// The special tokens the config names by id must be those tokens in the tokenizer, and every
// token id must have an embedding row.
Status CheckTokenizerAgainstConfig(const text::Tokenizer& tokenizer, const ModelConfig& config,
                                   std::string_view source) {
  struct Expected {
    std::string_view token;
    int64_t id;
    std::string_view field;
  };
  std::vector<Expected> expected = {
      {"<|image_pad|>", config.image_token_id, "image_token_id"},
      {"<|vision_start|>", config.vision_start_token_id, "vision_start_token_id"}};
  if (config.video_token_id >= 0)
    expected.push_back({"<|video_pad|>", config.video_token_id, "video_token_id"});
  if (config.vision_end_token_id >= 0)
    expected.push_back({"<|vision_end|>", config.vision_end_token_id, "vision_end_token_id"});
  if (config.bos_token_id >= 0)
    expected.push_back({"<|endoftext|>", config.bos_token_id, "bos_token_id"});
  for (const Expected& e : expected) {
    const std::optional<int32_t> id = tokenizer.TokenToId(e.token);
    if (!id || *id != e.id) {
      return Fail(ErrorCode::kInvalidArgument,
                  "tokenizer source {}: {} gets id {} but the config's {} is {} (the source must "
                  "be the Qwen2 vocabulary of 151,643 tokens)",
                  source, e.token, id ? std::to_string(*id) : "none", e.field, e.id);
    }
  }
  const std::optional<int32_t> im_end = tokenizer.TokenToId("<|im_end|>");
  if (!im_end || std::find(config.eos_token_ids.begin(), config.eos_token_ids.end(), *im_end) ==
                     config.eos_token_ids.end()) {
    return Fail(ErrorCode::kInvalidArgument,
                "tokenizer source {}: <|im_end|> (id {}) is not among the config's eos_token_id",
                source, im_end.value_or(-1));
  }
  if (tokenizer.id_limit() > config.text.vocab_size) {
    return Fail(ErrorCode::kInvalidArgument,
                "tokenizer source {}: token ids reach {} but the config's vocab_size is {}", source,
                tokenizer.id_limit() - 1, config.text.vocab_size);
  }
  return OkStatus();
}

// Builds the tokenizer files from the source and reads them back as the runtime will.
Result<text::ModelTokenizerFiles> BuildTokenizerFiles(const std::string& source, uint64_t max_bytes,
                                                      const ModelConfig& config,
                                                      CheckpointLayout layout) {
  MINERU_ASSIGN_OR_RETURN(Json json, ReadJsonFile(source, max_bytes));
  MINERU_ASSIGN_OR_RETURN(
      text::ModelTokenizerFiles files,
      text::BuildModelTokenizerFiles(
          json, source,
          layout == CheckpointLayout::kPro ? text::TokenTable::kPro : text::TokenTable::k2509));
  MINERU_ASSIGN_OR_RETURN(Json written,
                          ParseJson(files.tokenizer_json, "tokenizer.json", JsonFileLimits()));
  MINERU_ASSIGN_OR_RETURN(std::unique_ptr<text::Tokenizer> tokenizer,
                          text::Tokenizer::FromJson(written, "tokenizer.json"));
  MINERU_RETURN_IF_ERROR(CheckTokenizerAgainstConfig(*tokenizer, config, source));
  return files;
}

Json PreprocessorConfig(const ModelConfig& config, bool real) {
  const VisionConfig& v = config.vision;
  // HF's defaults; the real shape uses the larger max_pixels MinerU2.5 is reported to ship
  // (2048 * 28 * 28), see docs/MODEL.md.
  const int64_t max_pixels = real ? 1605632 : 1003520;
  return Json{{"do_convert_rgb", true},
              {"do_normalize", true},
              {"do_rescale", true},
              {"do_resize", true},
              {"image_mean", {0.48145466, 0.4578275, 0.40821073}},
              {"image_processor_type", "Qwen2VLImageProcessor"},
              {"image_std", {0.26862954, 0.26130258, 0.27577711}},
              {"max_pixels", max_pixels},
              {"merge_size", v.spatial_merge_size},
              {"min_pixels", 3136},
              {"patch_size", v.patch_size},
              {"processor_class", "Qwen2VLProcessor"},
              {"resample", 3},
              {"rescale_factor", 1.0 / 255.0},
              {"size", {{"max_pixels", max_pixels}, {"min_pixels", 3136}}},
              {"temporal_patch_size", v.temporal_patch_size}};
}

// MinerU2.5-Pro-2605's bounds (224 * 224 and 2048 * 28 * 28), both at the top level and in the
// "size" form newer transformers write (the top level wins where they differ).
Json ProPreprocessorConfig(const ModelConfig& config) {
  constexpr int64_t kMinPixels = 50176, kMaxPixels = 1605632;
  Json json = PreprocessorConfig(config, /*real=*/true);
  json["min_pixels"] = kMinPixels;
  json["max_pixels"] = kMaxPixels;
  json["size"] = {{"longest_edge", kMaxPixels}, {"shortest_edge", kMinPixels}};
  return json;
}

Json GenerationConfig(const ModelConfig& config) {
  std::vector<int64_t> eos = config.eos_token_ids;
  if (config.bos_token_id >= 0 &&
      std::find(eos.begin(), eos.end(), config.bos_token_id) == eos.end()) {
    eos.push_back(config.bos_token_id);  // Qwen2-VL stops on <|endoftext|> too
  }
  Json json{{"eos_token_id", eos}};
  if (config.bos_token_id >= 0) {
    json["bos_token_id"] = config.bos_token_id;
    json["pad_token_id"] = config.bos_token_id;
  }
  return json;
}

// Pro-2605's sampling defaults (those of Qwen2-VL-Instruct) beside the stop ids.
Json ProGenerationConfig(const ModelConfig& config) {
  Json json = GenerationConfig(config);
  json["do_sample"] = true;
  json["temperature"] = 0.01;
  json["top_k"] = 1;
  json["top_p"] = 0.001;
  return json;
}

}  // namespace

Json RealModelConfig() {
  return Json::parse(R"({
  "architectures": ["Qwen2VLForConditionalGeneration"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "hidden_act": "silu",
  "hidden_size": 896,
  "image_token_id": 151655,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 32768,
  "max_window_layers": 24,
  "model_type": "qwen2_vl",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_scaling": {"mrope_section": [8, 12, 12], "rope_type": "default", "type": "default"},
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "use_cache": true,
  "use_sliding_window": false,
  "video_token_id": 151656,
  "vision_config": {
    "depth": 32, "embed_dim": 1280, "hidden_act": "quick_gelu", "hidden_size": 896,
    "in_chans": 3, "mlp_ratio": 4, "model_type": "qwen2_vl", "num_heads": 16,
    "patch_size": 14, "spatial_merge_size": 2, "spatial_patch_size": 14,
    "temporal_patch_size": 2
  },
  "vision_end_token_id": 151653,
  "vision_start_token_id": 151652,
  "vision_token_id": 151654,
  "vocab_size": 151936
})");
}

Json TinyModelConfig() {
  Json config = RealModelConfig();
  config["hidden_size"] = 64;
  config["intermediate_size"] = 128;
  config["num_attention_heads"] = 4;
  config["num_hidden_layers"] = 2;
  config["num_key_value_heads"] = 2;
  config["max_window_layers"] = 2;
  config["rope_scaling"]["mrope_section"] = {2, 3, 3};
  Json& vision = config["vision_config"];
  vision["depth"] = 2;
  vision["embed_dim"] = 64;
  vision["hidden_size"] = 64;
  vision["num_heads"] = 4;
  vision["in_channels"] = 3;
  return config;
}

Json ToProLayout(Json config) {
  Json text = Json::object();
  for (const char* key :
       {"attention_dropout", "bos_token_id",        "eos_token_id",       "hidden_act",
        "hidden_size",       "initializer_range",   "intermediate_size",  "max_position_embeddings",
        "max_window_layers", "num_attention_heads", "num_hidden_layers",  "num_key_value_heads",
        "pad_token_id",      "rms_norm_eps",        "rope_scaling",       "rope_theta",
        "sliding_window",    "use_cache",           "use_sliding_window", "vocab_size"}) {
    if (config.contains(key)) text[key] = config[key];
  }
  text["model_type"] = "qwen2_vl_text";
  // transformers drops a root value equal to PretrainedConfig's default (tie: true) when it
  // saves; the text config's own default is false, so the flag stays there.
  text["tie_word_embeddings"] = true;
  config.erase("tie_word_embeddings");
  if (config.contains("torch_dtype")) {
    config["dtype"] = config["torch_dtype"];
    config.erase("torch_dtype");
  }
  config["text_config"] = std::move(text);
  return config;
}

Json ProModelConfig() { return ToProLayout(RealModelConfig()); }
Json ProTinyModelConfig() { return ToProLayout(TinyModelConfig()); }

Status WriteRandomCheckpoint(ThreadPool& pool, const Json& config_json, const std::string& dir,
                             const RandomCheckpointOptions& options) {
  MINERU_ASSIGN_OR_RETURN(model::ModelConfig config,
                          model::ParseModelConfig(config_json, "model config"));
  std::optional<text::ModelTokenizerFiles> tokenizer_files;
  if (!options.tokenizer_source.empty()) {
    MINERU_ASSIGN_OR_RETURN(
        tokenizer_files, BuildTokenizerFiles(options.tokenizer_source, options.max_tokenizer_bytes,
                                             config, options.layout));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Fail(ErrorCode::kIo, "{}: cannot create directory: {}", dir, ec.message());
  const bool real = config_json == RealModelConfig();
  const bool pro = options.layout == CheckpointLayout::kPro;
  MINERU_RETURN_IF_ERROR(WriteJson(fs::path(dir) / "config.json", config_json));
  MINERU_RETURN_IF_ERROR(
      WriteJson(fs::path(dir) / "preprocessor_config.json",
                pro ? ProPreprocessorConfig(config) : PreprocessorConfig(config, real)));
  MINERU_RETURN_IF_ERROR(WriteJson(fs::path(dir) / "generation_config.json",
                                   pro ? ProGenerationConfig(config) : GenerationConfig(config)));
  if (tokenizer_files) {
    const std::pair<const char*, const std::string*> files[] = {
        {"tokenizer.json", &tokenizer_files->tokenizer_json},
        {"tokenizer_config.json", &tokenizer_files->tokenizer_config_json},
        {"chat_template.jinja", &tokenizer_files->chat_template_jinja},
        {"special_tokens_map.json", &tokenizer_files->special_tokens_map_json},
        {"added_tokens.json", &tokenizer_files->added_tokens_json}};
    for (const auto& [name, text] : files) {
      if (!text->empty()) MINERU_RETURN_IF_ERROR(WriteText(fs::path(dir) / name, *text));
    }
  }

  const std::vector<PlannedTensor> plan = PlanTensors(config, config.tie_word_embeddings);
  // Group tensors into shards of at most max_shard_bytes (a bigger tensor gets its own).
  std::vector<std::vector<size_t>> shards(1);
  uint64_t shard_bytes = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const uint64_t bytes = static_cast<uint64_t>(plan[i].elements()) * 2;
    if (options.max_shard_bytes > 0 && !shards.back().empty() &&
        shard_bytes + bytes > options.max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(i);
    shard_bytes += bytes;
  }
  const bool sharded = options.max_shard_bytes > 0;
  Json weight_map = Json::object();
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string file =
        sharded ? fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, shards.size())
                : "model.safetensors";
    std::vector<model::TensorToWrite> header_entries;
    for (size_t i : shards[s]) {
      const PlannedTensor& t = plan[i];
      const std::string stored = StoredName(t.name, options.naming);
      // The header needs only sizes here; an empty span of the right length stands in.
      header_entries.push_back({stored, DType::kBF16, t.shape,
                                std::span<const uint8_t>(static_cast<const uint8_t*>(nullptr),
                                                         static_cast<size_t>(t.elements()) * 2)});
      weight_map[stored] = file;
    }
    const std::string header = model::SafetensorsHeader(header_entries, {{"format", "pt"}});
    MINERU_ASSIGN_OR_RETURN(AtomicFileWriter writer,
                            AtomicFileWriter::Create((fs::path(dir) / file).string()));
    uint8_t length[8];
    for (int b = 0; b < 8; ++b)
      length[b] = static_cast<uint8_t>(uint64_t{header.size()} >> (8 * b));
    MINERU_RETURN_IF_ERROR(writer.Write(length));
    MINERU_RETURN_IF_ERROR(
        writer.Write(std::span(reinterpret_cast<const uint8_t*>(header.data()), header.size())));
    for (size_t i : shards[s]) {
      const std::vector<uint16_t> values = Generate(pool, plan[i], options.seed, i);
      MINERU_RETURN_IF_ERROR(writer.Write(
          std::span(reinterpret_cast<const uint8_t*>(values.data()), values.size() * 2)));
    }
    MINERU_RETURN_IF_ERROR(writer.Commit());
  }
  if (sharded) {
    uint64_t total = 0;
    for (const PlannedTensor& t : plan) total += static_cast<uint64_t>(t.elements()) * 2;
    MINERU_RETURN_IF_ERROR(
        WriteJson(fs::path(dir) / "model.safetensors.index.json",
                  Json{{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}}));
  }
  return OkStatus();
}

}  // namespace mineru::devtools
