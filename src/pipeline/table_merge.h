// SPDX-License-Identifier: Apache-2.0
// MinerU's cross-page table merge over middle.json's pdf_info: a table that opens a page is
// appended to the table that closes the previous page when its captions, footnotes, width and
// column structure say it continues it. Two generations:
// * MinerU 2.7.6 mineru/utils/table_merge.py merge_table, the
//   default: MergeCrossPageTables(pdf_info).
// * MinerU 3.4.4 mineru/utils/table_merge.py merge_table, with the client's cell_merge flags
//   (mineru-vl-utils 1.2.1 post_process/cross_page_table.py) applied:
//   MergeCrossPageTables(pdf_info, {.mineru_344 = true}); see table_merge_pro.cc.
//
// The table HTML is read with html_table.h's tolerant parser (single level: a nested table is
// never merged). Deviations from MinerU's BeautifulSoup: HTML the parser rejects (a nested table,
// no <table> element, an unterminated tag or comment, a rowspan/colspan that is not an integer in
// 1–1000) is never merged, and the merged HTML keeps the upper table's original markup with only
// the changed attributes rewritten and the lower rows inserted before the upper table's
// </tbody> (else </table>), instead of BeautifulSoup's re-serialisation.
#pragma once

#include <optional>
#include <string_view>

#include "base/json.h"

namespace mineru::pipeline {

// MinerU 2.7.6, applied in place. Pages are scanned last → first; malformed pages, blocks and
// HTML are left alone. Call only when table recognition and MINERU_TABLE_MERGE_ENABLE are on.
void MergeCrossPageTables(Json& pdf_info);

struct TableMergeRules {
  // MinerU 3.4.4's merge (pages as MinerU 3.4.4 writes them, blocks in para_blocks) instead of
  // 2.7.6's.
  bool mineru_344 = false;
};

// The merge `rules` select, applied in place (the 2.7.6 one when rules.mineru_344 is false).
void MergeCrossPageTables(Json& pdf_info, const TableMergeRules& rules);

// MinerU 3.4.4 mineru/utils/table_continuation.py is_table_continuation_text: `text` stripped,
// full→half-width (U+FF01–FF5E) and lower-cased ends with "(续)", "(续表)", "(续上表)",
// "(continued)", "(cont.)", "(cont’d)", "(…continued)", "续表" or "continued" (the last only at
// the start or after a non-letter), or contains "(continued)". Used by the 3.4.4 merge and by
// MinerU 3.4.4's caption fall-backs.
bool IsTableContinuationText(std::string_view text);

// The table's span-aware total column count (MinerU calculate_table_total_columns: the furthest
// column any cell reaches, cells placed left to right past columns that rowspans above occupy);
// nullopt when the parser rejects the HTML. Exposed for tests.
std::optional<int> TableColumnCount(std::string_view html);

}  // namespace mineru::pipeline
