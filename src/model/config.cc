// SPDX-License-Identifier: Apache-2.0
#include "model/config.h"

#include <cmath>
#include <numeric>
#include <optional>

namespace mineru::model {
namespace {

bool Present(const Json& object, std::string_view key) {
  const auto it = object.find(key);
  return it != object.end() && !it->is_null();
}

// Reads text fields from "text_config" when the file nests them there (MinerU2.5-Pro), else from
// the root (MinerU2.5-2509). A null value counts as absent.
struct TextFields {
  const Json& root;
  const Json* nested;
  std::string_view where;

  const Json& For(std::string_view key) const {
    if (nested != nullptr && Present(*nested, key)) return *nested;
    return root;
  }
  // For the fields transformers keeps on the outer Qwen2VLConfig (the vision token ids, dtype):
  // the root, else text_config.
  const Json& RootFirst(std::string_view key) const {
    if (nested != nullptr && !Present(root, key) && Present(*nested, key)) return *nested;
    return root;
  }
  Result<std::optional<int64_t>> Int(std::string_view key) const {
    return FindInt(For(key), key, where);
  }
  Result<std::optional<double>> Number(std::string_view key) const {
    return FindNumber(For(key), key, where);
  }
};

Result<int64_t> Required(Result<std::optional<int64_t>> value, std::string_view key,
                         std::string_view where) {
  if (!value) return tl::unexpected(value.error());
  if (!value->has_value()) {
    return Fail(ErrorCode::kCorrupt, "{}: required field '{}' is missing", where, key);
  }
  return **value;
}

template <class T>
T Or(const std::optional<T>& value, T fallback) {
  return value.has_value() ? *value : fallback;
}

Status CheckPositive(int64_t value, std::string_view key, std::string_view where,
                     int64_t max = int64_t{1} << 24) {
  if (value <= 0 || value > max) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' = {} is out of range [1, {}]", where, key, value,
                max);
  }
  return OkStatus();
}

Result<std::vector<int64_t>> TokenIds(const Json& object, std::string_view key,
                                      std::string_view where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::vector<int64_t>{};
  if (it->is_number_integer()) return std::vector<int64_t>{it->get<int64_t>()};
  MINERU_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ids,
                          FindIntArray(object, key, where));
  return ids.value_or(std::vector<int64_t>{});
}

// One of "rope_scaling" / "rope_parameters": its type must be M-RoPE's and it must carry a
// 3-entry mrope_section; rope_parameters may also hold rope_theta (transformers 5.x).
struct RopeObject {
  std::vector<int> mrope_section;
  std::optional<double> rope_theta;
};

Result<std::optional<RopeObject>> ParseRopeObject(const Json& object, std::string_view name,
                                                  std::string_view where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::optional<RopeObject>();
  if (!it->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' must be an object with an 'mrope_section', got {}",
                where, name, it->dump());
  }
  const std::string scaling_where = fmt::format("{}: {}", where, name);
  // HF 4.45 accepts the type under "type" or "rope_type"; "mrope" is renamed to "default".
  MINERU_ASSIGN_OR_RETURN(auto type, FindString(*it, "type", scaling_where));
  MINERU_ASSIGN_OR_RETURN(auto rope_type, FindString(*it, "rope_type", scaling_where));
  for (const auto& type_name : {type, rope_type}) {
    if (type_name && *type_name != "mrope" && *type_name != "default") {
      return Fail(ErrorCode::kUnsupported, "{}: rope type '{}' is not supported (mrope only)",
                  scaling_where, *type_name);
    }
  }
  MINERU_ASSIGN_OR_RETURN(auto section, FindIntArray(*it, "mrope_section", scaling_where));
  if (!section) return Fail(ErrorCode::kCorrupt, "{}: 'mrope_section' is missing", scaling_where);
  if (section->size() != 3) {
    return Fail(ErrorCode::kCorrupt, "{}: 'mrope_section' must have 3 entries (t, h, w), has {}",
                scaling_where, section->size());
  }
  RopeObject rope;
  for (int64_t s : *section) {
    if (s < 0 || s > 4096) {
      return Fail(ErrorCode::kCorrupt, "{}: bad 'mrope_section' entry {}", scaling_where, s);
    }
    rope.mrope_section.push_back(static_cast<int>(s));
  }
  MINERU_ASSIGN_OR_RETURN(rope.rope_theta, FindNumber(*it, "rope_theta", scaling_where));
  return std::optional<RopeObject>(std::move(rope));
}

// mrope_section and rope_theta. Each of rope_scaling and rope_parameters is taken from
// text_config when it is there, else from the root. rope_theta: the "rope_theta" field, else
// rope_parameters' own, else 1e6; where both are given they must agree.
Status ParseRope(const TextFields& fields, TextConfig& text, std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(auto scaling,
                          ParseRopeObject(fields.For("rope_scaling"), "rope_scaling", where));
  MINERU_ASSIGN_OR_RETURN(auto parameters,
                          ParseRopeObject(fields.For("rope_parameters"), "rope_parameters", where));
  if (!scaling && !parameters) {
    return Fail(ErrorCode::kCorrupt,
                "{}: 'rope_scaling' (or 'rope_parameters') with an 'mrope_section' is required "
                "for Qwen2-VL",
                where);
  }
  if (scaling && parameters && scaling->mrope_section != parameters->mrope_section) {
    return Fail(ErrorCode::kCorrupt,
                "{}: 'rope_scaling' and 'rope_parameters' give different mrope_section values",
                where);
  }
  text.mrope_section = scaling ? scaling->mrope_section : parameters->mrope_section;
  MINERU_ASSIGN_OR_RETURN(auto theta, fields.Number("rope_theta"));
  const std::optional<double> nested_theta = parameters ? parameters->rope_theta : std::nullopt;
  if (theta && nested_theta && *theta != *nested_theta) {
    return Fail(ErrorCode::kCorrupt,
                "{}: 'rope_theta' {} and rope_parameters' rope_theta {} differ", where, *theta,
                *nested_theta);
  }
  text.rope_theta = static_cast<float>(Or(theta, Or(nested_theta, 1e6)));
  return OkStatus();
}

Result<VisionConfig> ParseVision(const Json& root, std::string_view where) {
  const auto it = root.find("vision_config");
  if (it == root.end() || !it->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: required object 'vision_config' is missing", where);
  }
  const Json& v = *it;
  const std::string w = std::string(where) + ": vision_config";
  VisionConfig vision;
  MINERU_ASSIGN_OR_RETURN(int64_t depth, Required(FindInt(v, "depth", w), "depth", w));
  MINERU_ASSIGN_OR_RETURN(int64_t embed, Required(FindInt(v, "embed_dim", w), "embed_dim", w));
  MINERU_ASSIGN_OR_RETURN(int64_t heads, Required(FindInt(v, "num_heads", w), "num_heads", w));
  MINERU_ASSIGN_OR_RETURN(int64_t out, Required(FindInt(v, "hidden_size", w), "hidden_size", w));
  MINERU_RETURN_IF_ERROR(CheckPositive(depth, "depth", w, 1024));
  MINERU_RETURN_IF_ERROR(CheckPositive(embed, "embed_dim", w));
  MINERU_RETURN_IF_ERROR(CheckPositive(heads, "num_heads", w, 4096));
  MINERU_RETURN_IF_ERROR(CheckPositive(out, "hidden_size", w));
  vision.depth = static_cast<int>(depth);
  vision.embed_dim = static_cast<int>(embed);
  vision.num_heads = static_cast<int>(heads);
  vision.out_hidden = static_cast<int>(out);
  // HF 4.45 reads "in_channels"; the MinerU2.5 file also carries "in_chans".
  MINERU_ASSIGN_OR_RETURN(auto in_channels, FindInt(v, "in_channels", w));
  MINERU_ASSIGN_OR_RETURN(auto in_chans, FindInt(v, "in_chans", w));
  if (in_channels && in_chans && *in_channels != *in_chans) {
    return Fail(ErrorCode::kCorrupt, "{}: 'in_channels' ({}) and 'in_chans' ({}) disagree", w,
                *in_channels, *in_chans);
  }
  MINERU_ASSIGN_OR_RETURN(auto patch, FindInt(v, "patch_size", w));
  MINERU_ASSIGN_OR_RETURN(auto temporal, FindInt(v, "temporal_patch_size", w));
  MINERU_ASSIGN_OR_RETURN(auto merge, FindInt(v, "spatial_merge_size", w));
  MINERU_ASSIGN_OR_RETURN(auto ratio, FindNumber(v, "mlp_ratio", w));
  MINERU_ASSIGN_OR_RETURN(auto act, FindString(v, "hidden_act", w));
  // Range-check the 64-bit values before narrowing them.
  const int64_t channels = Or(in_channels, Or(in_chans, int64_t{3}));
  const int64_t patch_size = Or(patch, int64_t{14});
  const int64_t temporal_size = Or(temporal, int64_t{2});
  const int64_t merge_size = Or(merge, int64_t{2});
  MINERU_RETURN_IF_ERROR(CheckPositive(channels, "in_channels", w, 64));
  MINERU_RETURN_IF_ERROR(CheckPositive(patch_size, "patch_size", w, 1024));
  MINERU_RETURN_IF_ERROR(CheckPositive(temporal_size, "temporal_patch_size", w, 64));
  MINERU_RETURN_IF_ERROR(CheckPositive(merge_size, "spatial_merge_size", w, 64));
  // One patch row (C * T * P * P values) must stay a sane int.
  MINERU_RETURN_IF_ERROR(CheckPositive(channels * temporal_size * patch_size * patch_size,
                                       "in_channels * temporal_patch_size * patch_size^2", w,
                                       int64_t{1} << 24));
  vision.in_channels = static_cast<int>(channels);
  vision.patch_size = static_cast<int>(patch_size);
  vision.temporal_patch_size = static_cast<int>(temporal_size);
  vision.spatial_merge_size = static_cast<int>(merge_size);
  vision.hidden_act = Or(act, std::string("quick_gelu"));
  const double mlp = static_cast<double>(embed) * Or(ratio, 4.0);
  if (!(mlp >= 1 && mlp < double{1 << 24})) {
    return Fail(ErrorCode::kCorrupt, "{}: 'mlp_ratio' gives an MLP width of {}", w, mlp);
  }
  vision.mlp_hidden = static_cast<int>(mlp);  // HF: int(dim * mlp_ratio)
  if (vision.embed_dim % vision.num_heads != 0 || vision.head_dim() % 4 != 0) {
    return Fail(ErrorCode::kCorrupt,
                "{}: embed_dim {} must split into {} heads of a width divisible by 4 (2-D rotary)",
                w, vision.embed_dim, vision.num_heads);
  }
  if (vision.hidden_act != "quick_gelu" && vision.hidden_act != "gelu") {
    return Fail(ErrorCode::kUnsupported, "{}: hidden_act '{}' is not supported", w,
                vision.hidden_act);
  }
  return vision;
}

}  // namespace

Result<ModelConfig> ParseModelConfig(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected a JSON object", where);
  ModelConfig config;
  MINERU_ASSIGN_OR_RETURN(auto model_type, FindString(json, "model_type", where));
  config.model_type = Or(model_type, std::string());
  if (config.model_type != "qwen2_vl") {
    return Fail(ErrorCode::kUnsupported, "{}: model_type '{}' is not supported (qwen2_vl only)",
                where, config.model_type);
  }
  const auto nested_it = json.find("text_config");
  if (nested_it != json.end() && !nested_it->is_null() && !nested_it->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'text_config' must be an object, got {}", where,
                nested_it->dump());
  }
  const Json* nested = nested_it != json.end() && nested_it->is_object() ? &*nested_it : nullptr;
  config.nested_text_config = nested != nullptr;
  const TextFields fields{json, nested, where};
  TextConfig& text = config.text;
  MINERU_ASSIGN_OR_RETURN(int64_t hidden,
                          Required(fields.Int("hidden_size"), "hidden_size", where));
  MINERU_ASSIGN_OR_RETURN(int64_t layers,
                          Required(fields.Int("num_hidden_layers"), "num_hidden_layers", where));
  MINERU_ASSIGN_OR_RETURN(
      int64_t heads, Required(fields.Int("num_attention_heads"), "num_attention_heads", where));
  MINERU_ASSIGN_OR_RETURN(int64_t inter,
                          Required(fields.Int("intermediate_size"), "intermediate_size", where));
  MINERU_ASSIGN_OR_RETURN(int64_t vocab, Required(fields.Int("vocab_size"), "vocab_size", where));
  MINERU_ASSIGN_OR_RETURN(auto kv_heads, fields.Int("num_key_value_heads"));
  MINERU_RETURN_IF_ERROR(CheckPositive(hidden, "hidden_size", where));
  MINERU_RETURN_IF_ERROR(CheckPositive(layers, "num_hidden_layers", where, 1024));
  MINERU_RETURN_IF_ERROR(CheckPositive(heads, "num_attention_heads", where, 4096));
  MINERU_RETURN_IF_ERROR(CheckPositive(inter, "intermediate_size", where));
  MINERU_RETURN_IF_ERROR(CheckPositive(vocab, "vocab_size", where, int64_t{1} << 30));
  text.hidden_size = static_cast<int>(hidden);
  text.num_layers = static_cast<int>(layers);
  text.num_heads = static_cast<int>(heads);
  const int64_t kv = Or(kv_heads, heads);  // HF default: num_attention_heads
  MINERU_RETURN_IF_ERROR(CheckPositive(kv, "num_key_value_heads", where, 4096));
  text.num_kv_heads = static_cast<int>(kv);
  text.intermediate_size = static_cast<int>(inter);
  text.vocab_size = vocab;
  if (text.hidden_size % text.num_heads != 0 || text.num_heads % text.num_kv_heads != 0 ||
      text.head_dim() % 2 != 0) {
    return Fail(ErrorCode::kCorrupt,
                "{}: hidden_size {} / {} heads / {} kv heads do not form whole, even heads", where,
                text.hidden_size, text.num_heads, text.num_kv_heads);
  }
  // HF Qwen2VLConfig defaults for absent fields.
  MINERU_ASSIGN_OR_RETURN(auto eps, fields.Number("rms_norm_eps"));
  MINERU_RETURN_IF_ERROR(ParseRope(fields, text, where));
  MINERU_ASSIGN_OR_RETURN(auto max_pos, fields.Int("max_position_embeddings"));
  MINERU_ASSIGN_OR_RETURN(auto act, FindString(fields.For("hidden_act"), "hidden_act", where));
  MINERU_ASSIGN_OR_RETURN(auto sliding,
                          FindBool(fields.For("use_sliding_window"), "use_sliding_window", where));
  text.rms_norm_eps = static_cast<float>(Or(eps, 1e-5));
  text.max_position_embeddings = Or(max_pos, int64_t{32768});
  text.hidden_act = Or(act, std::string("silu"));
  text.use_sliding_window = Or(sliding, false);
  if (!(text.rms_norm_eps > 0) || !(text.rope_theta > 1)) {
    return Fail(ErrorCode::kCorrupt, "{}: rms_norm_eps {} / rope_theta {} out of range", where,
                text.rms_norm_eps, text.rope_theta);
  }
  MINERU_RETURN_IF_ERROR(CheckPositive(text.max_position_embeddings, "max_position_embeddings",
                                       where, int64_t{1} << 30));
  if (text.hidden_act != "silu") {
    return Fail(ErrorCode::kUnsupported, "{}: hidden_act '{}' is not supported (silu only)", where,
                text.hidden_act);
  }
  if (text.use_sliding_window) {
    return Fail(ErrorCode::kUnsupported, "{}: use_sliding_window is not supported", where);
  }
  const int section_sum = std::accumulate(text.mrope_section.begin(), text.mrope_section.end(), 0);
  if (section_sum != text.head_dim() / 2) {
    return Fail(ErrorCode::kCorrupt, "{}: mrope_section sums to {}, head_dim / 2 is {}", where,
                section_sum, text.head_dim() / 2);
  }

  MINERU_ASSIGN_OR_RETURN(config.vision, ParseVision(json, where));
  if (config.vision.out_hidden != text.hidden_size) {
    return Fail(ErrorCode::kCorrupt,
                "{}: vision_config.hidden_size {} (merger output) differs from hidden_size {}",
                where, config.vision.out_hidden, text.hidden_size);
  }

  // Tied embeddings: true if the root or the text config says so.
  MINERU_ASSIGN_OR_RETURN(auto tie_root, FindBool(json, "tie_word_embeddings", where));
  std::optional<bool> tie_nested;
  if (nested != nullptr) {
    MINERU_ASSIGN_OR_RETURN(tie_nested, FindBool(*nested, "tie_word_embeddings", where));
  }
  config.tie_word_embeddings = Or(tie_root, false) || Or(tie_nested, false);

  auto root_first = [&](std::string_view key) {
    return FindInt(fields.RootFirst(key), key, where);
  };
  MINERU_ASSIGN_OR_RETURN(config.image_token_id,
                          Required(root_first("image_token_id"), "image_token_id", where));
  MINERU_ASSIGN_OR_RETURN(
      config.vision_start_token_id,
      Required(root_first("vision_start_token_id"), "vision_start_token_id", where));
  MINERU_ASSIGN_OR_RETURN(auto video, root_first("video_token_id"));
  MINERU_ASSIGN_OR_RETURN(auto vision_end, root_first("vision_end_token_id"));
  MINERU_ASSIGN_OR_RETURN(auto bos, fields.Int("bos_token_id"));
  MINERU_ASSIGN_OR_RETURN(auto pad, fields.Int("pad_token_id"));
  config.video_token_id = Or(video, int64_t{-1});
  config.vision_end_token_id = Or(vision_end, int64_t{-1});
  config.bos_token_id = Or(bos, int64_t{-1});
  config.pad_token_id = Or(pad, int64_t{-1});
  MINERU_ASSIGN_OR_RETURN(config.eos_token_ids,
                          TokenIds(fields.For("eos_token_id"), "eos_token_id", where));
  for (int64_t id : {config.image_token_id, config.vision_start_token_id}) {
    if (id < 0 || id >= text.vocab_size) {
      return Fail(ErrorCode::kCorrupt, "{}: special token id {} is outside the vocabulary of {}",
                  where, id, text.vocab_size);
    }
  }
  // transformers >= 4.56 writes "dtype" and reads "torch_dtype" as its old name.
  for (std::string_view key : {"dtype", "torch_dtype"}) {
    MINERU_ASSIGN_OR_RETURN(auto dtype, FindString(fields.RootFirst(key), key, where));
    if (dtype) {
      config.torch_dtype = *dtype;
      break;
    }
  }
  return config;
}

}  // namespace mineru::model
