// SPDX-License-Identifier: Apache-2.0
// Which pipeline profile (pipeline/profile.h) a checkpoint directory gets, from its files, and
// the check of its tokenizer against that profile's tokens. For parse, serve, worker and inspect.
//
//   MINERU_ASSIGN_OR_RETURN(pipeline::ProfileChoice choice,
//                           ChooseModelProfile(dir, model_argument, forced));
//   MINERU_RETURN_IF_ERROR(CheckProfileTokens(dir, *engine->tokenizer(), choice.profile));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "pipeline/profile.h"
#include "text/tokenizer.h"

namespace mineru::apps {

// Largest config.json / preprocessor_config.json read here (the checkpoint loader's default).
inline constexpr uint64_t kMaxProfileJsonBytes = uint64_t{16} << 20;

// The evidence DetectProfile weighs: `model_name` (a Hugging Face id or served model name; may be
// empty) and the directory's path both count as the name; config.json (parsed by
// model::ParseModelConfig, so a broken one is an error here too) says whether text_config is
// nested; preprocessor_config.json, when present, gives min_pixels (after transformers'
// precedence: top-level min_pixels over size.shortest_edge).
Result<pipeline::ProfileEvidence> ReadProfileEvidence(
    const std::string& model_dir, std::string_view model_name,
    uint64_t max_json_bytes = kMaxProfileJsonBytes);

// DetectProfile over ReadProfileEvidence; with `forced`, that profile and no file is read.
Result<pipeline::ProfileChoice> ChooseModelProfile(const std::string& model_dir,
                                                   std::string_view model_name,
                                                   std::optional<pipeline::Profile> forced);

// The tokens the profile's parsers rely on must be special added tokens of `tokenizer`
// (text::CheckRequiredTokens), and added_tokens.json / tokenizer_config.json's
// added_tokens_decoder, where present, must agree with it (text::CheckAddedTokenFiles).
Status CheckProfileTokens(const std::string& model_dir, const text::Tokenizer& tokenizer,
                          pipeline::Profile profile);

}  // namespace mineru::apps
