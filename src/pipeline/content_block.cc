// SPDX-License-Identifier: Apache-2.0
#include "pipeline/content_block.h"

#include <array>

namespace mineru::pipeline {
namespace {

constexpr std::array<std::string_view, kProBlockTypeCount> kNames = {
    "text",         "title",         "table",          "image",           "code",
    "algorithm",    "header",        "footer",         "page_number",     "page_footnote",
    "aside_text",   "equation",      "equation_block", "ref_text",        "list",
    "phonetic",     "table_caption", "table_footnote", "image_caption",   "image_footnote",
    "code_caption", "unknown",       "doc_title",      "paragraph_title", "formula_number",
    "index",        "list_item",     "caption",        "footnote",        "chart",
    "image_block",
};

}  // namespace

std::string_view BlockTypeName(BlockType type) { return kNames[static_cast<size_t>(type)]; }

std::optional<BlockType> ParseBlockType(std::string_view label) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == label) return static_cast<BlockType>(i);
  }
  return std::nullopt;
}

}  // namespace mineru::pipeline
