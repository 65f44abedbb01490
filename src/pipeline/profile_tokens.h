// SPDX-License-Identifier: Apache-2.0
// The added tokens each profile's parsers rely on (text/required_tokens.h checks a tokenizer
// against these lists). Only their content matters: ids always come from the checkpoint.
//   2509  layout boxes and references (<|box_start|> <|box_end|> <|ref_start|> <|ref_end|>),
//         the four rotations, and the OTSL cells <fcel> <ecel> <lcel> <ucel> <xcel> <nl>
//         (mineru-vl-utils 0.1.22);
//   pro   the same plus <ched> <|txt_contd|> <|paratext|>, which MinerU2.5-Pro-2605's
//         tokenizer adds (mineru-vl-utils 1.2.1 does not act on them, but a model that may emit
//         them must have them as single special tokens).
#pragma once

#include <span>
#include <string_view>

#include "pipeline/profile.h"

namespace mineru::pipeline {

std::span<const std::string_view> RequiredAddedTokens(Profile profile);

}  // namespace mineru::pipeline
