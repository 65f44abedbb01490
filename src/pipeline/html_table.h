// SPDX-License-Identifier: Apache-2.0
// The HTML table model MinerU's cross-page table merges and the client's cross-page detection
// share (MinerU 2.7.6 and 3.4.4 mineru/utils/table_merge.py, which mineru-vl-utils 1.2.1
// post_process/cross_page_table.py imports): one tolerant parser of <table>/<tbody>/<tr>/<td>/<th>
// with rowspan and colspan, an editable row/cell model that re-serialises the markup it was read
// from, and MinerU 3.4.4's structure helpers over it (occupancy scan, row metrics, front cache
// signatures, header rows, rendered cell segments, visual column maps, the structure test).
//
// Parser rules and deviations from MinerU's BeautifulSoup ("html.parser"):
// * Rows are all <tr> elements in document order; a row's cells are the <td>/<th> elements inside
//   it. Elements close as HTML implies: a <td>/<th> ends the open cell, a <tr> the open row,
//   </tr>, <tbody>, <thead>, <tfoot> (and their end tags) and </table> end the open row. (Python's
//   html.parser nests unclosed cells instead; model and OTSL output always closes them.)
// * Cell text is BeautifulSoup's get_text(): all text inside, nested elements included; numeric
//   and the common named character references are decoded, other references stay literal.
// * Rejected (nullopt): no <table> element, an unterminated tag or comment, a rowspan/colspan
//   that is not an integer in 1..kMaxTableSpan (where MinerU's int() raises or loops over huge
//   ranges), nested tables unless allowed, nesting deeper than kMaxTableNesting, and tables whose
//   occupancy needs more than kMaxOccupancyMarks column marks.
// * With nested tables allowed the model follows BeautifulSoup's recursive find_all: a nested
//   table's rows are rows too, and a row's cells include the cells of tables nested in it. Such a
//   model is read-only (TableModel::nested); the merges never edit it.
// * Markup is kept as written; only edited attributes and moved cells/rows change. BeautifulSoup
//   instead re-serialises the whole table (attribute quotes, entities, void tags).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mineru::pipeline {

inline constexpr int kMaxTableSpan = 1000;
inline constexpr size_t kMaxTableNesting = 16;
// Column marks one occupancy scan may make (a mark is one row × column a cell covers).
inline constexpr size_t kMaxOccupancyMarks = size_t{4} << 20;

// MinerU full_to_half: U+FF01–FF5E (full-width ASCII, punctuation included) shifted to ASCII.
std::string FullToHalf(std::string_view s);
// ''.join(s.split()): every Python whitespace character removed.
std::string RemovePythonWhitespace(std::string_view s);

// ---------------------------------------------------------------------------------------------
// Parsing: positions into the source.

struct HtmlTableOptions {
  bool allow_nested_tables = false;
};

struct HtmlCell {
  std::string name;  // "td" or "th"
  size_t tag_begin = 0;
  size_t tag_end = 0;  // one past the start tag's '>'
  // Where the content ends: the end tag, or the tag (or end of input) that closed it implicitly.
  size_t content_end = 0;
  size_t end = 0;  // one past the end tag; content_end when closed implicitly
  // The colspan attribute's value bytes (inside any quotes), when the tag has one.
  std::optional<std::pair<size_t, size_t>> colspan_value;
  // Where a new attribute goes: before the start tag's ">" or "/>".
  size_t attr_insert_at = 0;
  int colspan = 1;
  int rowspan = 1;
  std::string text;
  // Contains an img, svg, math, eq, table, figure, object, embed or canvas element (MinerU
  // 3.4.4's "semantic content" besides text).
  bool has_media = false;
};

struct HtmlRow {
  size_t begin = 0;    // the <tr> tag
  size_t tag_end = 0;  // one past the <tr> tag
  size_t end = 0;      // one past </tr>, or where the row was closed implicitly
  bool closed = false;
  size_t end_tag_begin = 0;   // the </tr> tag, when closed
  std::vector<size_t> cells;  // indices into HtmlTable::cells, in document order
};

struct HtmlTable {
  std::string_view html;  // what was parsed (must outlive the result)
  std::vector<HtmlRow> rows;
  std::vector<HtmlCell> cells;
  // Where appended rows go (BeautifulSoup `soup.find("tbody") or soup.find("table")`): the first
  // <tbody>'s </tbody>, else the first table's </table>, else the end.
  size_t insert_at = 0;
  bool nested = false;  // a table inside a table
};

std::optional<HtmlTable> ParseHtmlTable(std::string_view html,
                                        const HtmlTableOptions& options = {});

// `start_tag` ("<td rowspan='2'>") with attribute `name` (colspan or rowspan) set to `value`
// (written in place of the old value, keeping its quotes, or appended as name="value"), or
// removed when value is nullopt (BeautifulSoup attrs.pop).
std::string WithSpanAttribute(std::string_view start_tag, std::string_view name,
                              std::optional<int> value);

// ---------------------------------------------------------------------------------------------
// The editable model.

struct TableCell {
  int colspan = 1;
  int rowspan = 1;
  std::string text;  // get_text()
  bool has_media = false;
  // Markup: lead (what precedes the cell since the row's tag or the previous cell) + start_tag +
  // inner + end_tag ("" when the cell was closed implicitly).
  std::string name;
  std::string lead;
  std::string start_tag;
  std::string inner;
  std::string end_tag;
};

struct TableRow {
  std::vector<TableCell> cells;
  // Markup: lead (since the previous row) + start_tag + cells + tail + end_tag ("" when closed
  // implicitly).
  std::string lead;
  std::string start_tag;
  std::string tail;
  std::string end_tag;
};

struct TableModel {
  std::vector<TableRow> rows;
  std::string tail;  // after the last row
  // Rows [insert_begin, insert_end) were appended at the insertion point (HtmlTable::insert_at);
  // insert_lead is the markup between the previous row and that point, written before them.
  size_t insert_begin = 0;
  size_t insert_end = 0;
  std::string insert_lead;
  bool nested = false;  // read-only: see the parser rules above
};

std::optional<TableModel> BuildTableModel(std::string_view html,
                                          const HtmlTableOptions& options = {});
// The model's HTML (the source itself when nothing was edited). Not for nested models.
std::string SerializeTable(const TableModel& table);
// The row's markup (with "</tr>" when `close` and the row had no end tag).
std::string SerializeRow(const TableRow& row, bool close);

// Appends rows at the model's insertion point (BeautifulSoup tbody.append), their leads dropped.
void AppendRows(TableModel* table, std::vector<TableRow> rows);

// ---------------------------------------------------------------------------------------------
// MinerU 3.4.4 structure helpers.

// Occupied columns of the rows below a scanned range, relative to the row after it (MinerU's
// tail_occupied / initial_occupied): entry k = sorted columns rowspans reach in that row.
using Occupancy = std::vector<std::vector<int>>;

struct RowMetrics {
  size_t row = 0;          // index in the table
  int effective_cols = 0;  // 1 + the highest occupied column of the row (0 if none)
  int actual_cols = 0;     // Σ colspan
  int visual_cols = 0;     // number of cells
};

struct RowScan {
  std::vector<RowMetrics> rows;
  int total_cols = 0;  // the furthest column reached (initial occupancy included)
  std::optional<RowMetrics> last_data_row;  // the last row with a cell
  Occupancy tail;
};

// MinerU _scan_rows over `rows` with `initial` occupancy; metrics' `row` counts from first_row.
// nullopt past kMaxOccupancyMarks.
std::optional<RowScan> ScanRows(std::span<const TableRow> rows, const Occupancy& initial = {},
                                size_t first_row = 0);

struct RenderedSegment {
  std::string text;  // the owning cell's text, full→half-width and stripped; "" for carried-in
  int start_col = 0;
  int end_col = 0;  // exclusive
  bool operator==(const RenderedSegment&) const = default;
};

// MinerU build_row_rendered_cell_segments: row `target`'s columns 0 … total_cols−1 (total_cols =
// widest column reached in rows 0…target and `initial`) grouped into runs owned by the same cell;
// unowned columns end a run and belong to none. Empty for a row that does not exist.
std::vector<RenderedSegment> RenderedSegments(std::span<const TableRow> rows, size_t target,
                                              const Occupancy& initial = {});
// MinerU build_visual_col_mapping: the start column of each cell of row `target` (columns
// covered from rows above, or by `initial`, are skipped). Empty for a row that does not exist.
std::vector<int> VisualColumnMap(std::span<const TableRow> rows, size_t target,
                                 const Occupancy& initial = {});
// VisualColumnMap of rows 0 … count−1 (no initial occupancy) from one scan.
std::vector<std::vector<int>> VisualColumnMaps(std::span<const TableRow> rows, size_t count);

// MinerU 3.4.4 TableMergeState: a table's rows and the metrics its merge decisions read.
struct RowSignature {
  int effective_cols = 0;
  std::vector<int> colspans;
  std::vector<int> rowspans;
  std::vector<std::string> normalized_texts;  // full→half-width, all whitespace removed
};

struct TableState {
  TableModel table;
  RowScan scan;
  // Front cache: signatures of the first min(5, rows) rows and metrics of the first min(6, rows).
  // Like MinerU's, it is rebuilt only by Refresh, not when rows are appended.
  std::vector<RowSignature> front_signatures;
  std::vector<RowMetrics> front_metrics;
};

inline constexpr size_t kMaxHeaderRows = 5;

// MinerU build_table_state_from_html; nullopt when the HTML is rejected or has no row.
std::optional<TableState> BuildTableState(std::string_view html,
                                          const HtmlTableOptions& options = {});
// MinerU _refresh_table_state_metrics: rescans everything; false past the occupancy budget.
bool RefreshTableState(TableState* state);

// MinerU detect_table_headers: leading rows (≤ 5) of `lower` repeating `upper`'s with equal
// signatures; when none, leading rows with equal normalised texts and rendered segment counts.
size_t DetectHeaderRows(const TableState& upper, const TableState& lower);
// MinerU _expand_header_count_by_rowspan: grows `header_rows` so that rows covered by rowspans
// of header rows are headers too (at most all rows).
size_t ExpandHeaderRowsByRowspan(std::span<const TableRow> rows, size_t header_rows);

// A block's box as the structure test reads it: [x0, y0, x1, y1].
using TableBox = std::array<double, 4>;

// MinerU can_merge_by_structure(current=lower, previous=upper): widths (when both boxes are given
// and both widths > 0) within 10% of the narrower; then equal total columns, or the upper table's
// last data row and the lower table's first data row (after the rowspan-expanded header rows)
// agreeing in effective columns, actual columns or rendered segment count.
bool CanMergeByStructure(const TableState& lower, const TableState& upper,
                         const std::optional<TableBox>& lower_box = std::nullopt,
                         const std::optional<TableBox>& upper_box = std::nullopt);
// MinerU check_rows_match: the row test of CanMergeByStructure alone.
bool BoundaryRowsMatch(const TableState& upper, const TableState& lower);

}  // namespace mineru::pipeline
