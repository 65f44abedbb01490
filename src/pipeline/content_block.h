// SPDX-License-Identifier: Apache-2.0
// A region of a page as MinerU2.5's client sees it (mineru_vl_utils ContentBlock): its type from
// the layout step, its box in page-normalised coordinates, its rotation and, after the
// recognition step and post-processing, its content. The layout parser makes them, the crop
// step reads them, post-processing rewrites them, the document assembly consumes them.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace mineru::pipeline {

// MinerU2.5-2509's block types (spec/mineru.md section 2.3), in that table's order.
enum class BlockType {
  kText,
  kTitle,
  kTable,
  kImage,
  kCode,
  kAlgorithm,
  kHeader,
  kFooter,
  kPageNumber,
  kPageFootnote,
  kAsideText,
  kEquation,
  kEquationBlock,
  kRefText,
  kList,
  kPhonetic,
  kTableCaption,
  kTableFootnote,
  kImageCaption,
  kImageFootnote,
  kCodeCaption,
  kUnknown,
};

inline constexpr int kBlockTypeCount = static_cast<int>(BlockType::kUnknown) + 1;

// The lowercase name the model writes ("text", "table_caption", ...).
std::string_view BlockTypeName(BlockType type);
// The type of a (lowercase) label; nullopt for a label outside the set.
std::optional<BlockType> ParseBlockType(std::string_view label);

struct ContentBlock {
  BlockType type = BlockType::kText;
  // x1, y1, x2, y2 in [0, 1] of the page's width and height, x1 < x2, y1 < y2.
  std::array<double, 4> bbox = {0, 0, 0, 0};
  // Counter-clockwise degrees that turn the region upright: 0, 90, 180 or 270; nullopt when the
  // layout step gave no rotation token.
  std::optional<int> angle;
  // Recognised text (Markdown-ish text, OTSL or HTML for tables, LaTeX for equations); nullopt
  // for blocks never recognised (images, lists, equation blocks) or not recognised yet.
  std::optional<std::string> content;

  bool operator==(const ContentBlock&) const = default;
};

}  // namespace mineru::pipeline
