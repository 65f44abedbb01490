// SPDX-License-Identifier: Apache-2.0
#include "engine/generation_config.h"

#include <filesystem>

#include "base/json.h"

namespace mineru::engine {

Result<std::vector<int32_t>> ReadStopIds(const std::string& model_dir,
                                         const model::ModelConfig& config) {
  const std::string path = model_dir + "/generation_config.json";
  std::vector<int64_t> ids = config.eos_token_ids;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    MINERU_ASSIGN_OR_RETURN(Json json, ReadJsonFile(path, kMaxGenerationConfigBytes));
    if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: not a JSON object", path);
    const auto it = json.find("eos_token_id");
    if (it != json.end() && it->is_number_integer()) {
      ids = {it->get<int64_t>()};
    } else if (it != json.end() && !it->is_null()) {
      MINERU_ASSIGN_OR_RETURN(auto list, FindIntArray(json, "eos_token_id", path));
      ids = list.value_or(std::vector<int64_t>{});
    }
  }
  std::vector<int32_t> stop;
  for (int64_t id : ids) {
    if (id < 0 || id >= config.text.vocab_size) {
      return Fail(ErrorCode::kCorrupt, "{}: eos_token_id {} is outside the vocabulary of {}", path,
                  id, config.text.vocab_size);
    }
    stop.push_back(static_cast<int32_t>(id));
  }
  return stop;
}

}  // namespace mineru::engine
