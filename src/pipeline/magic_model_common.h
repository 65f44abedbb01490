// SPDX-License-Identifier: Apache-2.0
// What MinerU 2.7.6's and MinerU 3.4.4's VLM "MagicModel" share (2.7.6 vlm_magic_model.py and
// magic_model_utils.py; 3.4.4 vlm_magic_model.py and visual_magic_model_utils.py; boxbase.py of
// both): the content cleaning of a client block, its spans, the integer point boxes, MinerU's box
// geometry, the one-line block JSON and the list rule. Internal to magic_model.cc and the
// magic_model_pro*.cc files; nothing here is part of the pipeline's interface.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"

namespace mineru::pipeline::magic {

// A box in integer PDF points: x0, y0, x1, y1 (origin top-left).
using Box = std::array<int, 4>;

// ---------------------------------------------------------------------------------------------
// Content cleaning (isolated_formula_clean, code_content_clean, clean_content and the
// inline-equation split; identical in 2.7.6 and 3.4.4).

// Leading \[ and trailing \] removed, then trimmed.
std::string IsolatedFormulaClean(std::string_view latex);

// A first line starting with ``` and a last line equal to ``` (after trimming) are removed;
// the remaining lines are joined with '\n' and trimmed.
std::string CodeContentClean(std::string_view content);

// When \[ and \] occur equally often (and at all), every \[x\] on one line becomes [x]
// (re.sub(r'\\\[(.*?)\\\]', r'[\1]')).
std::string CleanContent(std::string_view content);

Json BoxJson(const Box& b);

// {"bbox", "type", "content"}.
Json TextSpan(const Box& bbox, std::string_view type, std::string_view content);

// The spans of already cleaned text: when the \( \) counts are equal and non-zero (*split is
// then set, MinerU's condition for switching code to algorithm even if no formula matched),
// alternating text / inline_equation spans (each formula on one line, trimmed; blank text pieces
// dropped); otherwise one span of type `plain_type` holding the whole content.
Json InlineSpans(const Box& bbox, std::string_view content, std::string_view plain_type,
                 bool* split);

// CleanContent (when non-empty) then InlineSpans with plain type "text".
Json TextSpans(const Box& bbox, std::string_view raw, bool* split);

// ---------------------------------------------------------------------------------------------
// Blocks.

// A MinerU block with its single line (every VLM block has exactly one, whose bbox is the
// block's).
struct Block {
  Box bbox = {0, 0, 0, 0};
  std::string type;  // MinerU type: text, title, image_body, code_body, ...
  std::optional<int> angle;
  Json spans = Json::array();  // the spans of the block's single line
  Json line_extra;             // code bodies: {"type": sub_type, "guess_lang": lang}; else null
  int index = 0;
  // Further top-level keys of the block (MinerU 3.4.4: merge_prev, sub_type, cell_merge); null
  // or an object. MinerU 2.7.6 blocks have none.
  Json fields;
};

// {"bbox", "type", "angle", "lines": [{"bbox", "spans"[, "extra"]}], "index"} plus `fields`.
Json BlockJson(const Block& b);

// int(v * size) as Python computes it; nullopt when not finite or beyond +-1e9 points (keeps
// every later difference of coordinates inside int).
std::optional<int> ToPoints(double v, int size);

// A client box (page fractions x1, y1, x2, y2) in integer points, each axis swapped into order;
// nullopt when a coordinate is not representable (see ToPoints).
std::optional<Box> ToPointBox(const std::array<double, 4>& fractions, int width, int height);

// A Block with the client block's box in points (ToPointBox), angle and index set; nullopt with
// a warning ("middle.json: block N has an invalid bbox; skipped"; warnings may be null) when
// the box is not representable.
std::optional<Block> BlockShell(const std::array<double, 4>& fractions, std::optional<int> angle,
                                int index, int width, int height,
                                std::vector<std::string>* warnings);

// ---------------------------------------------------------------------------------------------
// Geometry (mineru/utils/boxbase.py).

int64_t Area(const Box& b);

// calculate_overlap_area_in_bbox1_area_ratio: the share of a's area inside b (0 for an empty a).
double OverlapRatioOfFirst(const Box& a, const Box& b);

// is_in: a lies entirely inside b (edges may touch).
bool IsIn(const Box& a, const Box& b);

// bbox_distance: 0 when the boxes overlap, else the gap along one axis or between corners.
double EdgeDistance(const Box& a, const Box& b);

// bbox_center_distance: the Euclidean distance of the centres.
double CenterDistance(const Box& a, const Box& b);

// ---------------------------------------------------------------------------------------------
// Lists (fix_list_blocks, the same in 2.7.6 and 3.4.4).

struct ListGroup {
  Block list;
  std::vector<Block> children;
};

// Each text block, then each ref_text block, whose area is >= 80% inside a list box joins the
// first such list and leaves its own vector; lists that got no child are not returned.
std::vector<ListGroup> FixLists(const std::vector<Block>& lists, std::vector<Block>* texts,
                                std::vector<Block>* ref_texts);

// {"bbox", "type": "list", "angle", "index", "blocks", "sub_type"}: sub_type = the most frequent
// child type, the first type seen winning a tie.
Json ListJson(const ListGroup& l);

}  // namespace mineru::pipeline::magic
