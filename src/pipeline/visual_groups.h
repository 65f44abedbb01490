// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's grouping of visual bodies with their captions and footnotes
// (mineru/utils/visual_magic_model_utils.py: regroup_visual_blocks, absorb_image_block_members,
// find_best_visual_parent, is_visual_neighbor, effective_visual_index_diff). Internal to the
// MinerU 3.4.4 MagicModel (magic_model_pro.cc).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "pipeline/magic_model_common.h"

namespace mineru::pipeline::magic {

// One visual group: {"type", "bbox": body bbox, "blocks", "index": body index} plus `fields`.
struct VisualGroup {
  std::string type;              // image, table, chart, code
  Block body;                    // renamed image_body / table_body / chart_body / code_body
  std::vector<Block> blocks;     // body, captions (<type>_caption), footnotes (<type>_footnote)
                                 // sorted by index
  Json fields = Json::object();  // sub_type (image/chart), sub_images (image), cell_merge (table)
};

struct VisualRegrouping {
  std::vector<VisualGroup> groups;  // in index order
  // Generic captions/footnotes no body took, in index order (MinerU makes them text).
  std::vector<Block> unmatched;
};

// On one page's blocks in index order, after the caption fall-backs, with MinerU 3.4.4 types
// (image_body, image_block_body, table_body, chart_body, code_body; generic caption/footnote;
// anything else takes part only as geometry). `filled_lists`: the indices of list blocks that
// got children (lists without children are ignored, as MinerU's empty lists are).
//
// 1. Every image_body/chart_body whose area is >= 0.9 inside an image_block_body joins the best
//    one (highest ratio, then smaller area, then lower index): it is no block any more; the
//    image_block's group gets "sub_images": [{"type": "image"|"chart", "bbox": [...]}] in index
//    order, the boxes relative to the image_block (0-1, clamped, rounded to 3 decimals).
// 2. Each caption/footnote goes to one body. A body is a candidate when every block between
//    them (in the order of the remaining blocks) is a caption (for a caption; a caption or
//    footnote for a footnote), or lies outside the vertical gap between child and body and
//    overlaps neither (when child and body overlap vertically, any such block is in the way);
//    footnotes take no body with a higher index. The candidate with the smallest effective
//    index distance (positions apart less the blocks of the child's type between) wins; of two
//    tied (one on each side), the one with the nearer edge when the edge distances differ by
//    more than 2 points, else for a caption between tables only the later table, for a footnote
//    the earlier body, else the nearer centre (then the lower index).
// 3. Groups carry the image/chart "sub_type" (when non-empty), "sub_images" and the table
//    "cell_merge" (when non-empty); the body keeps its other fields.
VisualRegrouping RegroupVisualBlocks(const std::vector<Block>& blocks,
                                     const std::set<int>& filled_lists);

// Python's round(min(max(v, 0), 1), 3): the nearest multiple of 0.001 to the double's exact
// value (ties to even), as a double.
double ClampRound3(double v);

}  // namespace mineru::pipeline::magic
