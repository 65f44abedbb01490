// SPDX-License-Identifier: Apache-2.0
// A region of a page as MinerU2.5's client sees it (mineru_vl_utils ContentBlock): its type from
// the layout step, its box in page-normalised coordinates, its rotation and, after the
// recognition step and post-processing, its content. The layout parser makes them, the crop
// step reads them, post-processing rewrites them, the document assembly consumes them.
//
// Two clients define the type set (docs/PIPELINE.md, "Profiles"): mineru-vl-utils 0.1.22, which
// MinerU uses with MinerU2.5-2509, knows the first kBlockTypeCount types; mineru-vl-utils 1.2,
// which MinerU 3.x/4 uses with MinerU2.5-Pro, adds nine more (kProBlockTypeCount in all).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mineru::pipeline {

// The 2509 types (mineru-vl-utils 0.1.22 structs.py) in their table's order, then the types
// mineru-vl-utils 1.x added for MinerU2.5-Pro.
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
  // mineru-vl-utils 1.x (MinerU2.5-Pro) only.
  kDocTitle,
  kParagraphTitle,
  kFormulaNumber,
  kIndex,
  kListItem,
  kCaption,
  kFootnote,
  kChart,
  kImageBlock,
};

// Types of the 2509 client (0 .. kBlockTypeCount-1).
inline constexpr int kBlockTypeCount = static_cast<int>(BlockType::kUnknown) + 1;
// Every type of the Pro client (0 .. kProBlockTypeCount-1): 31.
inline constexpr int kProBlockTypeCount = static_cast<int>(BlockType::kImageBlock) + 1;

// The lowercase name the model writes ("text", "table_caption", ...).
std::string_view BlockTypeName(BlockType type);
// The type of a (lowercase) label of either set; nullopt for a label outside both.
std::optional<BlockType> ParseBlockType(std::string_view label);
// Whether `type` belongs to the 2509 client's set.
inline bool Is2509BlockType(BlockType type) { return static_cast<int>(type) < kBlockTypeCount; }

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

  // --- Fields of the Pro client (mineru-vl-utils 1.x); never set by the 2509 profile. ---
  // Text blocks only: whether the paragraph continues the previous one (the layout answer's
  // <|txt_contd_tgt|> mark). Set (true or false) on every Pro text block, absent elsewhere.
  std::optional<bool> merge_prev;
  // Image and chart blocks after image analysis: the analysis' class ("natural_image", a chart's
  // sub-class such as "bar_chart", possibly "").
  std::optional<std::string> sub_type;
  // Table blocks: the cross-page cell merge flags (one 0/1 per visual column of the previous
  // page's last table row) the model answered for this table, the lower of a pair.
  std::optional<std::vector<int>> cell_merge;

  // --- Private to the client (the "_"-keys it strips before results leave it). ---
  // Tables: the images inside the table, masked out of its crop and named by a token such as
  // "[KT7Z]", in the order they were placed: token -> "data:image/jpeg;base64,...".
  std::vector<std::pair<std::string, std::string>> table_image_tokens;
  // Images inside a table: never recognised, removed by post-processing.
  bool absorbed_by_table = false;

  bool operator==(const ContentBlock&) const = default;
};

}  // namespace mineru::pipeline
