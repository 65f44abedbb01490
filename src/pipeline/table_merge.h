// SPDX-License-Identifier: Apache-2.0
// MinerU's cross-page table merge over middle.json's pdf_info (spec/mineru.md section 3.7,
// MinerU 2.7.6 mineru/utils/table_merge.py merge_table): a table that opens a page is appended to
// the table that closes the previous page when its captions, footnotes, width and column
// structure say it continues it.
//
// The table HTML is read with html_table.h's tolerant parser of <table>/<tbody>/<tr>/<td>/<th>
// with rowspan and colspan (what the OTSL converter and the model emit). Deviations from MinerU's
// BeautifulSoup: HTML the parser rejects (a nested table, no <table> element, an unterminated
// tag or comment, a rowspan/colspan that is not an integer in 1–1000) is never merged, and the
// merged HTML keeps the upper table's original markup with only the changed colspan attributes
// rewritten and the lower rows inserted before the upper table's </tbody> (else </table>),
// instead of BeautifulSoup's re-serialisation.
#pragma once

#include <optional>
#include <string_view>

#include "base/json.h"

namespace mineru::pipeline {

// Section 3.7, applied in place. Pages are scanned last → first; malformed pages, blocks and HTML
// are left alone. Call only when table recognition and MINERU_TABLE_MERGE_ENABLE are on.
void MergeCrossPageTables(Json& pdf_info);

// The table's span-aware total column count (MinerU calculate_table_total_columns: the furthest
// column any cell reaches, cells placed left to right past columns that rowspans above occupy);
// nullopt when the parser rejects the HTML. Exposed for tests.
std::optional<int> TableColumnCount(std::string_view html);

}  // namespace mineru::pipeline
