// SPDX-License-Identifier: Apache-2.0
// The Pro client's cross-page table detection (mineru-vl-utils 1.2.1
// post_process/cross_page_table.py, with MinerU 3.4.4's table helpers): for each pair of
// consecutive pages whose boundary tables look like one table split in two, a text-only prompt
// asks the model which cells of the upper table's last row continue in the lower table's first
// data row; the answer becomes the lower table's `cell_merge` flags, which MinerU's merge applies
// (table_merge.h, MinerU 3.4.4 rules).
//
// Deviation: mineru-vl-utils only looks inside one processing window of pages (MinerU hands it
// 64 pages at a time) and so never pairs the last page of a window with the first of the next;
// here every consecutive page pair of the document is a candidate.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/content_block.h"
#include "pipeline/python_str.h"  // PythonRepr, PythonListRepr

namespace mineru::pipeline {

struct TableMergeCandidate {
  size_t upper_page = 0;   // index into the pages given
  size_t upper_block = 0;  // index into that page's blocks
  size_t lower_page = 0;
  size_t lower_block = 0;
  std::string prompt;  // the text-only request (no image)
  // [start_col, end_col) of each rendered segment of the upper table's last data row: what the
  // answer's flags refer to (ParseCellMergeAnswer, ExpandCellMerge).
  std::vector<std::pair<int, int>> prev_segments;
};

// `pages` = every page's post-processed client blocks, in page order (consecutive pages of the
// document). For pages i−1, i: the last table of page i−1 and the first table of page i, skipping
// table/image captions and footnotes, headers, footers, page numbers and page footnotes in
// between (any other block, the generic caption/footnote types included, means no pair); both
// need content that parses as a table, widths within 10%, MinerU's structure test passing, and
// boundary rows (upper: last data row; lower: the row after the repeated header rows, among its
// first six) with the same non-zero number of rendered segments.
std::vector<TableMergeCandidate> FindCrossPageTableCandidates(
    const std::vector<std::vector<ContentBlock>>& pages);

// The prompt for two boundary rows' segment texts (mineru-vl-utils build_cell_merge_prompt).
std::string CellMergePrompt(const std::vector<std::string>& last_row,
                            const std::vector<std::string>& first_row);

// mineru-vl-utils parse_cell_merge_response plus its length check: the first match of
// \[[\s\d,]+\] (Python's Unicode \s and \d) read as JSON must be a non-empty list of 0/1 integers
// of `segment_count` entries; nullopt otherwise (also for a match JSON rejects: non-ASCII digits
// or whitespace, leading zeros, empty items).
std::optional<std::vector<int>> ParseCellMergeAnswer(std::string_view answer, size_t segment_count);

// The flags spread over visual columns (what is stored as the lower table's cell_merge): one
// 0/1 per column up to the last segment's end, the columns of each segment flagged 1 set.
// TV-28: [1,0] over [(0,1),(1,11)] → [1,0,0,0,0,0,0,0,0,0,0].
std::vector<int> ExpandCellMerge(const std::vector<int>& flags,
                                 const std::vector<std::pair<int, int>>& segments);

}  // namespace mineru::pipeline
