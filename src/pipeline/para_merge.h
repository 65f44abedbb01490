// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's paragraph merges over middle.json's pdf_info (mineru/backend/utils/
// para_block_utils.py merge_para_text_blocks as the VLM backend calls it: only the merge_prev
// path, no OCR-detection merge), applied after para_blocks were copied from preproc_blocks.
//
// All para blocks of all pages form one list, visited from the last block to the first:
// * A `text` block B with lines that have spans and a true `merge_prev` joins the previous text
//   block P of the same page: walking back, title / doc_title / paragraph_title /
//   interline_equation / list stop the search, image / table / chart / code are stepped over,
//   any other type stops it. P is accepted when B's first line and P's last line have positive
//   heights; B's box (over its lines) starts less than half B's first line height from that
//   line's left; P's box ends less than P's last line height from that line's right; P's last
//   non-empty span does not end with . ! ? 。 ！ ？ ) ） " ” : ： ; ； and B's first non-empty span
//   does not start with a digit or an upper-case letter (Python isdigit/isupper); the boxes' widths
//   differ by less than the narrower; and B's top is above P's bottom (a column break). Lines
//   that came from another page (all spans cross_page) do not count for the geometry unless they
//   are all there is. Then P's lines += B's lines, B keeps `lines: []` and `lines_deleted: true`.
// * A `list` block with sub_type ref_text and children whose immediately preceding block (on any
//   page) is also a ref_text list is appended to it: its children join the previous list's
//   `blocks` (their spans marked `cross_page: true` when the pages differ); it keeps `blocks: []`
//   and `lines_deleted: true`.
//
// Pages are told apart by their page_idx values. Malformed blocks (missing or non-numeric boxes,
// lines or spans of the wrong type) never merge and never throw.
#pragma once

#include "base/json.h"

namespace mineru::pipeline {

void MergeTruncatedParagraphs(Json& pdf_info);

}  // namespace mineru::pipeline
