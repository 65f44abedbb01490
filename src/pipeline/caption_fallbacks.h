// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's caption fall-backs (mineru/utils/visual_magic_model_utils.py:
// fallback_inline_caption_fragments, fallback_stacked_table_caption_fragments,
// fallback_leading_table_continuation_captions; mineru/utils/table_continuation.py): before
// captions and footnotes are attached to visual bodies, some text/footnote blocks that the layout
// step split off a caption become generic `caption` blocks. Internal to the MinerU 3.4.4
// MagicModel (magic_model_pro.cc).
#pragma once

#include <string_view>
#include <vector>

#include "pipeline/magic_model_common.h"
#include "pipeline/table_merge.h"

namespace mineru::pipeline::magic {

// The three fall-backs in MinerU's order, on one page's converted blocks in index order (MinerU
// types: "caption", "footnote", "text", "table_body", ...). A block they turn into a `caption`
// loses its "merge_prev" field. Every VLM block has one line, so MinerU's "single-line fragment"
// condition always holds.
//
// 1. Inline fragment (only on pages of 3 or more blocks): a text/footnote block whose previous
//    effective block (index order, header/footer/page_number/page_footnote/aside_text skipped)
//    is a caption and whose next effective block is a visual body (image, image_block, table,
//    chart, code), that shares the caption's line (vertical overlap >= 0.6 of the smaller
//    height, or centre-y difference <= 0.5 of the larger height; heights at least 1) and whose
//    bottom (and the caption's) lies 0 ... max(12, 1.5 * larger height) points above the visual.
// 2. Stacked table caption (same page condition): above each table body, the blocks of type
//    caption/text/footnote that end at or above the table top and are horizontally near it (not
//    left of x0 - tol nor right of x1 + tol, tol = max(12, 0.03 * max(width, 1))) are walked
//    from the lowest up (by top, then index, descending); each must end 0 ... max(12, 1.5 * max
//    height so far) points above the previous top. The text/footnote blocks after the cluster's
//    last caption (between it and the table) become captions.
// 3. Leading continuation: the text/footnote blocks that open the page's effective blocks and
//    satisfy IsTableContinuationText, directly followed by a table body and stacked above it
//    (horizontally near; gap <= max(12, 1.5 * max height) and overlap <= max(2, 0.3 * height)).
void ApplyCaptionFallbacks(std::vector<Block>* blocks);

// MinerU 3.4.4 is_table_continuation_text, shared with the cross-page table merge.
using pipeline::IsTableContinuationText;

}  // namespace mineru::pipeline::magic
