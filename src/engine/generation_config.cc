// SPDX-License-Identifier: Apache-2.0
#include "engine/generation_config.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>

#include "base/json.h"

namespace mineru::engine {
namespace {

// An id field that may be an integer or a list of integers (absent or null: none).
Result<std::vector<int64_t>> IdField(const Json& json, std::string_view key,
                                     std::string_view where) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return std::vector<int64_t>{};
  if (it->is_number_integer()) return std::vector<int64_t>{it->get<int64_t>()};
  MINERU_ASSIGN_OR_RETURN(auto list, FindIntArray(json, key, where));
  return list.value_or(std::vector<int64_t>{});
}

}  // namespace

Result<std::vector<int32_t>> ReadStopIds(const std::string& model_dir,
                                         const model::ModelConfig& config) {
  const std::string path = model_dir + "/generation_config.json";
  struct Candidate {
    int64_t id;
    std::string_view source;  // names the field in errors
  };
  std::vector<Candidate> candidates;
  for (int64_t id : config.eos_token_ids) candidates.push_back({id, "config.json eos_token_id"});
  std::optional<int64_t> generation_pad;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    MINERU_ASSIGN_OR_RETURN(Json json, ReadJsonFile(path, kMaxGenerationConfigBytes));
    if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: not a JSON object", path);
    MINERU_ASSIGN_OR_RETURN(std::vector<int64_t> eos, IdField(json, "eos_token_id", path));
    for (int64_t id : eos) candidates.push_back({id, "generation_config.json eos_token_id"});
    MINERU_ASSIGN_OR_RETURN(generation_pad, FindInt(json, "pad_token_id", path));
  }
  if (config.pad_token_id >= 0)
    candidates.push_back({config.pad_token_id, "config.json pad_token_id"});
  if (generation_pad)
    candidates.push_back({*generation_pad, "generation_config.json pad_token_id"});
  std::vector<int32_t> stop;
  for (const Candidate& c : candidates) {
    if (c.id < 0 || c.id >= config.text.vocab_size) {
      return Fail(ErrorCode::kCorrupt, "{}: {} {} is outside the vocabulary of {}", model_dir,
                  c.source, c.id, config.text.vocab_size);
    }
    const int32_t id = static_cast<int32_t>(c.id);
    if (std::find(stop.begin(), stop.end(), id) == stop.end()) stop.push_back(id);
  }
  return stop;
}

}  // namespace mineru::engine
