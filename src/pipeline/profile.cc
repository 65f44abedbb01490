// SPDX-License-Identifier: Apache-2.0
#include "pipeline/profile.h"

#include <algorithm>
#include <cctype>

namespace mineru::pipeline {

std::string_view ProfileName(Profile profile) { return profile == Profile::kPro ? "pro" : "2509"; }

std::optional<Profile> ParseProfileName(std::string_view name) {
  if (name == "2509") return Profile::k2509;
  if (name == "pro") return Profile::kPro;
  return std::nullopt;
}

namespace {

bool NameSaysPro(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("mineru2.5-pro") != std::string::npos;
}

}  // namespace

ProfileChoice DetectProfile(const ProfileEvidence& evidence, std::optional<Profile> forced) {
  if (forced) return {*forced, "forced"};
  if (NameSaysPro(evidence.model_name)) return {Profile::kPro, "the model name says MinerU2.5-Pro"};
  if (evidence.nested_text_config) return {Profile::kPro, "config.json nests text_config"};
  if (evidence.min_pixels && *evidence.min_pixels == kProMinPixels) {
    return {Profile::kPro, "preprocessor_config.json min_pixels is 50176"};
  }
  return {Profile::k2509, "no Pro evidence in the checkpoint"};
}

std::string_view MineruOutputVersion(Profile profile) {
  return profile == Profile::kPro ? "3.4.4" : "2.7.6";
}

}  // namespace mineru::pipeline
