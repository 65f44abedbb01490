// SPDX-License-Identifier: Apache-2.0
#include "apps/model_profile.h"

#include <filesystem>

#include "base/json.h"
#include "image/qwen2vl_preprocess.h"
#include "model/config.h"
#include "pipeline/profile_tokens.h"
#include "text/required_tokens.h"

namespace mineru::apps {

namespace fs = std::filesystem;

Result<pipeline::ProfileEvidence> ReadProfileEvidence(const std::string& model_dir,
                                                      std::string_view model_name,
                                                      uint64_t max_json_bytes) {
  pipeline::ProfileEvidence evidence;
  // Either name may carry "MinerU2.5-Pro" (a hub id, or a snapshot path of the hub cache).
  evidence.model_name = model_name.empty() ? model_dir : std::string(model_name) + "\n" + model_dir;
  const std::string config_path = (fs::path(model_dir) / "config.json").string();
  MINERU_ASSIGN_OR_RETURN(Json config_json, ReadJsonFile(config_path, max_json_bytes));
  MINERU_ASSIGN_OR_RETURN(model::ModelConfig config,
                          model::ParseModelConfig(config_json, config_path));
  evidence.nested_text_config = config.nested_text_config;
  std::error_code ec;
  if (fs::exists(fs::path(model_dir) / "preprocessor_config.json", ec)) {
    MINERU_ASSIGN_OR_RETURN(image::ImageProcessorConfig processor,
                            image::ReadImageProcessorConfig(model_dir, max_json_bytes));
    evidence.min_pixels = processor.min_pixels;
  }
  return evidence;
}

Result<pipeline::ProfileChoice> ChooseModelProfile(const std::string& model_dir,
                                                   std::string_view model_name,
                                                   std::optional<pipeline::Profile> forced) {
  if (forced) return pipeline::DetectProfile({}, forced);
  MINERU_ASSIGN_OR_RETURN(pipeline::ProfileEvidence evidence,
                          ReadProfileEvidence(model_dir, model_name));
  return pipeline::DetectProfile(evidence);
}

Status CheckProfileTokens(const std::string& model_dir, const text::Tokenizer& tokenizer,
                          pipeline::Profile profile) {
  const std::string where = (fs::path(model_dir) / "tokenizer.json").string();
  MINERU_RETURN_IF_ERROR(text::CheckRequiredTokens(
      tokenizer, pipeline::RequiredAddedTokens(profile),
      "the " + std::string(pipeline::ProfileName(profile)) + " profile", where));
  return text::CheckAddedTokenFiles(model_dir, tokenizer);
}

}  // namespace mineru::apps
