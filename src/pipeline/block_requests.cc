// SPDX-License-Identifier: Apache-2.0
#include "pipeline/block_requests.h"

#include <algorithm>

#include "pipeline/sampling_presets.h"

namespace mineru::pipeline {

bool AlwaysSkipped(BlockType type) {
  return type == BlockType::kImage || type == BlockType::kList || type == BlockType::kEquationBlock;
}

bool IsRecognised(BlockType type, std::span<const BlockType> not_extract) {
  if (AlwaysSkipped(type)) return false;
  return std::find(not_extract.begin(), not_extract.end(), type) == not_extract.end();
}

std::vector<BlockType> ParseNotExtractList(std::span<const std::string> names,
                                           std::vector<std::string>* warnings) {
  std::vector<BlockType> types;
  for (const std::string& name : names) {
    std::optional<BlockType> type = ParseBlockType(name);
    if (type && !Is2509BlockType(*type)) type.reset();
    if (!type) {
      if (warnings != nullptr) {
        warnings->push_back("not_extract_list: unknown block type '" + name + "' ignored");
      }
      continue;
    }
    if (std::find(types.begin(), types.end(), *type) == types.end()) types.push_back(*type);
  }
  return types;
}

std::string_view RecognitionPrompt(BlockType type) {
  switch (type) {
    case BlockType::kTable:
      return kTablePrompt;
    case BlockType::kEquation:
      return kEquationPrompt;
    default:
      return kTextPrompt;
  }
}

engine::SamplingParams RecognitionSampling(BlockType type) {
  switch (type) {
    case BlockType::kTable:
      return MineruTableSampling();
    case BlockType::kEquation:
      return MineruEquationSampling();
    default:
      return MineruDefaultSampling();
  }
}

engine::SamplingParams LayoutSampling() { return MineruLayoutSampling(); }

}  // namespace mineru::pipeline
