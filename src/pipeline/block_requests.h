// SPDX-License-Identifier: Apache-2.0
// What step 2 of the two-step extraction asks the model for each block (mineru-vl-utils 0.1.22
// structs.py and mineru_client.py: DEFAULT_PROMPTS / DEFAULT_SAMPLING_PARAMS /
// prepare_for_extract):
//   * recognised or not: image, list and equation_block are never sent (the skip list), nor any
//     type the caller adds (MinerU 2.7.6 adds none);
//   * the prompt: table "\nTable Recognition:", equation "\nFormula Recognition:", every other
//     type "\nText Recognition:"; the layout request itself uses "\nLayout Detection:";
//   * the sampling preset: layout, table, equation, and the default one for everything else.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sampling.h"
#include "pipeline/content_block.h"

namespace mineru::pipeline {

inline constexpr std::string_view kLayoutPrompt = "\nLayout Detection:";
inline constexpr std::string_view kTablePrompt = "\nTable Recognition:";
inline constexpr std::string_view kEquationPrompt = "\nFormula Recognition:";
inline constexpr std::string_view kTextPrompt = "\nText Recognition:";

// The fixed skip list: image, list, equation_block.
bool AlwaysSkipped(BlockType type);

// Whether a block of `type` gets a recognition request: not in the fixed skip list and not in
// `not_extract` (the caller's extra types).
bool IsRecognised(BlockType type, std::span<const BlockType> not_extract = {});

// The caller's `not_extract_list` as names: names outside the block type set are ignored, as the
// client does, with a warning each (warnings may be null).
std::vector<BlockType> ParseNotExtractList(std::span<const std::string> names,
                                           std::vector<std::string>* warnings);

// The step-2 prompt for a block of `type` (table, equation, else text).
std::string_view RecognitionPrompt(BlockType type);

// The sampling preset for a block of `type` (table, equation, else default).
engine::SamplingParams RecognitionSampling(BlockType type);

// The sampling preset of the layout request.
engine::SamplingParams LayoutSampling();

}  // namespace mineru::pipeline
