// SPDX-License-Identifier: Apache-2.0
// Which MinerU client and output generation the pipeline follows for a checkpoint
// (docs/PIPELINE.md, "Profiles"):
//
//   2509  MinerU2.5-2509-1.2B as mineru-vl-utils 0.1.22 treats it, outputs as MinerU 2.7.6
//         writes them;
//   pro   MinerU2.5-Pro-2604/2605-1.2B as mineru-vl-utils 1.2 treats it (new block types, image
//         analysis, cross-page table merging by the model, paragraphs continued across columns
//         and pages), outputs as MinerU 3.4.4 writes them.
//
// Upstream has no switch (the client never looks at the checkpoint); the profile is chosen from
// the checkpoint's files by DetectProfile, and can be forced.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mineru::pipeline {

enum class Profile { k2509, kPro };

// "2509" or "pro".
std::string_view ProfileName(Profile profile);
// The inverse of ProfileName; nullopt for anything else.
std::optional<Profile> ParseProfileName(std::string_view name);

// What DetectProfile looks at, all read from the checkpoint (or the served model).
struct ProfileEvidence {
  // The model directory's name, the Hugging Face id or the served model name (any of them; a
  // path is fine: its last component is what is usually telling).
  std::string model_name;
  // config.json nests the text hyper-parameters in a "text_config" object (transformers >= 4.52
  // writes it; the Pro checkpoints have it, 2509 has not).
  bool nested_text_config = false;
  // preprocessor_config.json's min_pixels, when known (Pro: 50176 = 224 * 224; 2509: 3136).
  std::optional<int64_t> min_pixels;
};

// The min_pixels of the Pro checkpoints' preprocessor_config.json.
inline constexpr int64_t kProMinPixels = 50176;

struct ProfileChoice {
  Profile profile = Profile::k2509;
  std::string reason;  // why, in words ("forced", "config.json has text_config", ...)
};

// The rule, first match wins: `forced`; the name matches /MinerU2\.5-Pro/i; a nested
// text_config; min_pixels == 50176; else 2509.
ProfileChoice DetectProfile(const ProfileEvidence& evidence,
                            std::optional<Profile> forced = std::nullopt);

// The MinerU release whose output files a profile writes ("2.7.6", "3.4.4"); also the
// middle.json `_version_name`.
std::string_view MineruOutputVersion(Profile profile);

}  // namespace mineru::pipeline
