// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's cross-page table merge (mineru/utils/table_merge.py merge_table,
// can_merge_tables, perform_table_merge, _clip_overlapped_blank_rowspan_cells,
// adjust_table_rows_colspan, _apply_cell_merge, _carry_rowspan_structure_to_next_row,
// _restore_post_table_captions_as_text; mineru/utils/table_continuation.py) over MinerU 3.4.4
// middle.json pages, on html_table.h's model.
//
// What it adds to MinerU 2.7.6's merge (table_merge.cc): the longer continuation-marker list;
// captions below the lower table's body without a marker do not block the merge and become text
// blocks after it; header rows are expanded over rowspans; blank rowspan placeholders of the lower
// table already covered by the upper table's trailing rowspans are removed; the client's
// `cell_merge` flags join the boundary cells; moved footnotes get an index after the upper body.
//
// Deviations from MinerU: a table is serialised as its source markup with edits applied (not
// BeautifulSoup's re-serialisation); nested tables, unparsable HTML, boxes without a positive
// width and tables past the occupancy budget are never merged (MinerU raises or loops); rows
// after the first </tbody> (a second tbody, a tfoot) keep their document position when rows are
// appended before them, where MinerU's row list puts appended rows last; caption text is read with
// MergeParaText (MinerU 2.7.6's paragraph rule, identical for marker tests).
//
// Cost: each merge step is linear in the two tables' cells; a table continued over N pages is
// carried from step to step like MinerU's, so a chain costs O(N × its rows).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/html_table.h"
#include "pipeline/markdown.h"
#include "pipeline/middle_json.h"
#include "pipeline/python_str.h"
#include "pipeline/python_text.h"
#include "pipeline/table_merge.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

// ---------------------------------------------------------------------------------------------
// Guarded access to middle.json blocks (reads: middle_json.h).

Json* MutableArrayAt(Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return nullptr;
  return &*it;
}

// The first table_body sub-block (MinerU _find_table_body_block).
Json* FirstTableBody(Json& table) {
  Json* blocks = MutableArrayAt(table, "blocks");
  if (blocks == nullptr) return nullptr;
  for (Json& sub : *blocks) {
    if (StringAt(sub, "type") == "table_body") return &sub;
  }
  return nullptr;
}

// The first table_body's first span, where MinerU reads and writes the HTML.
Json* BodySpan(Json& table) {
  Json* body = FirstTableBody(table);
  if (body == nullptr) return nullptr;
  Json* lines = MutableArrayAt(*body, "lines");
  if (lines == nullptr || lines->empty()) return nullptr;
  Json* spans = MutableArrayAt((*lines)[0], "spans");
  if (spans == nullptr || spans->empty() || !(*spans)[0].is_object()) return nullptr;
  return &(*spans)[0];
}

// bbox as four finite numbers.
std::optional<TableBox> BoxOf(const Json& block) {
  if (!block.is_object()) return std::nullopt;
  auto it = block.find("bbox");
  if (it == block.end() || !it->is_array() || it->size() < 4) return std::nullopt;
  TableBox box{};
  for (size_t i = 0; i < 4; ++i) {
    const Json& v = (*it)[i];
    if (!v.is_number()) return std::nullopt;
    box[i] = v.get<double>();
    if (!std::isfinite(box[i])) return std::nullopt;
  }
  return box;
}

size_t CountSubBlocks(Json& table, std::string_view type) {
  size_t n = 0;
  if (Json* blocks = MutableArrayAt(table, "blocks")) {
    for (const Json& sub : *blocks) n += StringAt(sub, "type") == type ? 1 : 0;
  }
  return n;
}

std::optional<TableState> StateOf(Json& table) {
  Json* span = BodySpan(table);
  if (span == nullptr) return std::nullopt;
  return BuildTableState(StringAt(*span, "html"));
}

void WriteHtml(Json& table, const TableState& state) {
  if (Json* span = BodySpan(table)) (*span)["html"] = SerializeTable(state.table);
}

// Python `flag == 1` for one cell_merge entry.
bool IsMergeFlag(const Json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() == 1;
  if (v.is_number_unsigned()) return v.get<uint64_t>() == 1;
  if (v.is_number_float()) return v.get<double>() == 1.0;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Captions.

std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// The code point that ends at s[end], or nullopt when the bytes there are not UTF-8.
std::optional<char32_t> CodePointBefore(std::string_view s, size_t end) {
  for (size_t n = 1; n <= 4 && n <= end; ++n) {
    char32_t cp = 0;
    if (text::WellFormedLength(s, end - n, &cp) == n) return cp;
  }
  return std::nullopt;
}

bool IsContinuationCaption(const Json& caption) {
  return IsTableContinuationText(MergeParaText(caption));
}

// MinerU _is_post_table_non_continuation_caption: a caption without a marker whose top is at or
// below the table body's bottom.
bool IsPostTableNonContinuationCaption(Json& table, const Json& caption) {
  if (IsContinuationCaption(caption)) return false;
  Json* body = FirstTableBody(table);
  if (body == nullptr) return false;
  std::optional<TableBox> body_box = BoxOf(*body);
  std::optional<TableBox> caption_box = BoxOf(caption);
  if (!body_box || !caption_box) return false;
  return (*caption_box)[1] >= (*body_box)[3];
}

// MinerU can_merge_tables. `post_captions` are the lower table's captions below its body.
bool CanMergeTables(Json& lower, Json& upper, const TableState& lower_state,
                    const TableState& upper_state, const std::vector<size_t>& post_captions) {
  const size_t upper_footnotes = CountSubBlocks(upper, "table_footnote");
  bool has_caption = false;
  bool continued = false;
  if (Json* blocks = MutableArrayAt(lower, "blocks")) {
    for (size_t i = 0; i < blocks->size(); ++i) {
      const Json& sub = (*blocks)[i];
      if (StringAt(sub, "type") != "table_caption") continue;
      if (std::find(post_captions.begin(), post_captions.end(), i) != post_captions.end()) continue;
      has_caption = true;
      if (IsContinuationCaption(sub)) continued = true;
    }
  }
  if (has_caption) {
    if (!continued || upper_footnotes > 1) return false;
  } else if (upper_footnotes > 0) {
    return false;
  }
  std::optional<TableBox> lower_box = BoxOf(lower);
  std::optional<TableBox> upper_box = BoxOf(upper);
  if (!lower_box || !upper_box) return false;
  const double w_lower = (*lower_box)[2] - (*lower_box)[0];
  const double w_upper = (*upper_box)[2] - (*upper_box)[0];
  const double narrower = std::min(w_lower, w_upper);
  if (!(narrower > 0) || std::fabs(w_lower - w_upper) / narrower >= 0.1) return false;
  if (upper_state.scan.total_cols == lower_state.scan.total_cols) return true;
  return BoundaryRowsMatch(upper_state, lower_state);
}

// ---------------------------------------------------------------------------------------------
// Row edits.

bool HasSemanticContent(const TableCell& cell) {
  return cell.has_media || !PythonStrip(cell.text).empty();
}

bool RowHasSemanticContent(const TableRow& row) {
  return std::any_of(row.cells.begin(), row.cells.end(), HasSemanticContent);
}

std::vector<int> Colspans(const TableRow& row) {
  std::vector<int> out;
  for (const TableCell& cell : row.cells) out.push_back(cell.colspan);
  return out;
}

int ActualCols(const TableRow& row) {
  int sum = 0;
  for (const TableCell& cell : row.cells) sum += cell.colspan;
  return sum;
}

void SetColspan(TableCell* cell, int colspan) {
  cell->colspan = colspan;
  cell->start_tag = WithSpanAttribute(cell->start_tag, "colspan", colspan);
}

// A copy of a blank rowspan cell with `rowspan` rows left (attribute dropped at 1), closed.
TableCell WithRowspan(const TableCell& cell, int rowspan) {
  TableCell copy = cell;
  copy.lead.clear();
  copy.rowspan = rowspan;
  copy.start_tag = WithSpanAttribute(copy.start_tag, "rowspan",
                                     rowspan > 1 ? std::optional(rowspan) : std::nullopt);
  if (copy.end_tag.empty()) copy.end_tag = "</" + copy.name + ">";
  return copy;
}

// MinerU _insert_cell_before_visual_column: before the first cell of row `target` that starts
// at or right of `col`, else at the row's end (markup around the insertion point stays in front).
void InsertBeforeVisualColumn(std::span<TableRow> rows, size_t target, int col, TableCell cell) {
  if (target >= rows.size()) return;
  TableRow& row = rows[target];
  const std::vector<int> map = VisualColumnMap(rows, target);
  for (size_t i = 0; i < map.size() && i < row.cells.size(); ++i) {
    if (map[i] >= col) {
      cell.lead = std::move(row.cells[i].lead);
      row.cells[i].lead.clear();
      row.cells.insert(row.cells.begin() + static_cast<std::ptrdiff_t>(i), std::move(cell));
      return;
    }
  }
  cell.lead = std::move(row.tail);
  row.tail.clear();
  row.cells.push_back(std::move(cell));
}

struct PendingCell {
  size_t row = 0;
  int col = 0;
  TableCell cell;
};

// Inserts the cells, right-most (then lowest) first, like MinerU's reverse sort.
void InsertAll(std::span<TableRow> rows, std::vector<PendingCell> cells) {
  std::stable_sort(cells.begin(), cells.end(), [](const PendingCell& a, const PendingCell& b) {
    return a.row != b.row ? a.row > b.row : a.col > b.col;
  });
  for (PendingCell& pending : cells) {
    InsertBeforeVisualColumn(rows, pending.row, pending.col, std::move(pending.cell));
  }
}

bool Covers(const std::vector<int>& cols, int start, int count) {
  auto it = std::lower_bound(cols.begin(), cols.end(), start);
  for (int k = 0; k < count; ++k, ++it) {
    if (it == cols.end() || *it != start + k) return false;
  }
  return true;
}

// MinerU _clip_overlapped_blank_rowspan_cells over rows (the lower table's rows after its
// headers): a blank cell spanning rows whose columns the upper table's trailing rowspans
// (`initial`) already cover loses those rows (moved down with the rest of its rowspan, or
// dropped). True when anything changed.
bool ClipOverlappedBlankRowspanCells(std::span<TableRow> rows, const Occupancy& initial) {
  if (rows.empty() || initial.empty()) return false;
  // Only rows the carried-in occupancy reaches can overlap.
  const size_t limit = std::min(rows.size(), initial.size());
  const std::vector<std::vector<int>> maps = VisualColumnMaps(rows, limit);
  if (maps.size() != limit) return false;
  std::vector<std::pair<size_t, size_t>> removed;  // (row, cell)
  std::vector<PendingCell> moved;
  for (size_t r = 0; r < limit; ++r) {
    const std::vector<TableCell>& cells = rows[r].cells;
    for (size_t c = 0; c < cells.size() && c < maps[r].size(); ++c) {
      const TableCell& cell = cells[c];
      if (cell.rowspan <= 1 || HasSemanticContent(cell)) continue;
      const int start = maps[r][c];
      int overlap = 0;
      while (overlap < cell.rowspan) {
        const size_t covered = r + static_cast<size_t>(overlap);
        if (covered >= initial.size() || !Covers(initial[covered], start, cell.colspan)) break;
        ++overlap;
      }
      if (overlap == 0) continue;
      const int remaining = cell.rowspan - overlap;
      const size_t target = r + static_cast<size_t>(overlap);
      if (remaining > 0 && target >= rows.size()) continue;
      removed.emplace_back(r, c);
      if (remaining > 0) moved.push_back({target, start, WithRowspan(cell, remaining)});
    }
  }
  if (removed.empty()) return false;
  for (auto it = removed.rbegin(); it != removed.rend(); ++it) {
    std::vector<TableCell>& cells = rows[it->first].cells;
    // The removed cell's lead (markup before it) stays with what follows.
    std::string lead = std::move(cells[it->second].lead);
    cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(it->second));
    if (it->second < cells.size()) {
      cells[it->second].lead = lead + cells[it->second].lead;
    } else {
      rows[it->first].tail = lead + rows[it->first].tail;
    }
  }
  InsertAll(rows, std::move(moved));
  return true;
}

// MinerU adjust_table_rows_colspan: rows [begin, end) narrower than `target` columns are
// widened: shaped like the match row (as it was before: same cell count `reference_visual` and
// colspans) they take the reference colspans above 1, else their last cell absorbs the missing
// effective columns.
void AdjustRowsColspan(std::vector<TableRow>& rows, size_t begin, size_t end, const RowScan& scan,
                       const std::vector<int>& reference, size_t reference_visual, int target,
                       const std::vector<int>& match_colspans) {
  for (size_t r = begin; r < end && r < rows.size(); ++r) {
    TableRow& row = rows[r];
    if (row.cells.empty()) continue;
    const int effective = r < scan.rows.size() ? scan.rows[r].effective_cols : 0;
    if (effective >= target || ActualCols(row) >= target) continue;
    if (row.cells.size() == reference_visual && Colspans(row) == match_colspans) {
      if (row.cells.size() <= reference.size()) {
        for (size_t c = 0; c < row.cells.size(); ++c) {
          if (reference[c] > 1) SetColspan(&row.cells[c], reference[c]);
        }
      }
    } else if (target > effective) {
      TableCell& last = row.cells.back();
      SetColspan(&last, last.colspan + (target - effective));
    }
  }
}

// MinerU _carry_rowspan_structure_to_next_row: the blank rowspan cells of row r move one row
// down (one row shorter) before row r is deleted.
void CarryRowspansToNextRow(std::span<TableRow> rows, size_t r) {
  if (r + 1 >= rows.size()) return;
  const std::vector<int> map = VisualColumnMap(rows, r);
  std::vector<PendingCell> carried;
  const std::vector<TableCell>& cells = rows[r].cells;
  for (size_t c = 0; c < cells.size() && c < map.size(); ++c) {
    if (cells[c].rowspan <= 1 || HasSemanticContent(cells[c])) continue;
    carried.push_back({r + 1, map[c], WithRowspan(cells[c], cells[c].rowspan - 1)});
  }
  InsertAll(rows, std::move(carried));
}

// Column → index of the cell covering it, from a row's visual column map.
std::vector<int> ColumnOwners(const TableRow& row, const std::vector<int>& map) {
  std::vector<int> owners;
  for (size_t c = 0; c < row.cells.size() && c < map.size(); ++c) {
    const auto end = static_cast<size_t>(map[c]) + static_cast<size_t>(row.cells[c].colspan);
    if (owners.size() < end) owners.resize(end, -1);
    std::fill(owners.begin() + map[c], owners.begin() + static_cast<std::ptrdiff_t>(end),
              static_cast<int>(c));
  }
  return owners;
}

// MinerU _apply_cell_merge: for every column flagged 1, the content of the lower table's first
// data row's cell there is appended to the upper table's last row's cell there (once per cell
// pair) and the lower cell is emptied; a lower row left without content is deleted.
void ApplyCellMerge(TableState& upper, TableState& lower, size_t header_rows,
                    const Json* cell_merge) {
  if (cell_merge == nullptr || !cell_merge->is_array() || cell_merge->empty()) return;
  std::vector<TableRow>& rows1 = upper.table.rows;
  std::vector<TableRow>& rows2 = lower.table.rows;
  if (header_rows >= rows2.size() || rows1.empty()) return;
  TableRow& last = rows1.back();
  TableRow& first = rows2[header_rows];
  std::span<const TableRow> lower_rows(rows2.begin() + static_cast<std::ptrdiff_t>(header_rows),
                                       rows2.end());
  const std::vector<int> owners1 = ColumnOwners(last, VisualColumnMap(rows1, rows1.size() - 1));
  const std::vector<int> owners2 =
      ColumnOwners(first, VisualColumnMap(lower_rows, 0, upper.scan.tail));
  auto owner_at = [](const std::vector<int>& owners, size_t col) {
    return col < owners.size() ? owners[col] : -1;
  };
  std::set<std::pair<int, int>> transferred;
  for (size_t col = 0; col < cell_merge->size(); ++col) {
    if (!IsMergeFlag((*cell_merge)[col])) continue;
    const int c1 = owner_at(owners1, col);
    const int c2 = owner_at(owners2, col);
    if (c1 < 0 || c2 < 0 || !transferred.insert({c1, c2}).second) continue;
    TableCell& to = last.cells[static_cast<size_t>(c1)];
    TableCell& from = first.cells[static_cast<size_t>(c2)];
    to.inner += from.inner;
    to.text += from.text;
    to.has_media = to.has_media || from.has_media;
    from.inner.clear();
    from.text.clear();
    from.has_media = false;
  }
  if (!RowHasSemanticContent(first)) {
    CarryRowspansToNextRow(rows2, header_rows);
    rows2.erase(rows2.begin() + static_cast<std::ptrdiff_t>(header_rows));
  }
}

// MinerU perform_table_merge's table part: false (states unusable) past the occupancy budget.
bool PerformTableMerge(TableState& upper, TableState& lower, const Json* cell_merge) {
  std::vector<TableRow>& rows1 = upper.table.rows;
  std::vector<TableRow>& rows2 = lower.table.rows;
  const size_t header_rows = ExpandHeaderRowsByRowspan(rows2, DetectHeaderRows(upper, lower));
  if (header_rows < rows2.size()) {
    std::span<TableRow> data(rows2.begin() + static_cast<std::ptrdiff_t>(header_rows), rows2.end());
    if (ClipOverlappedBlankRowspanCells(data, upper.scan.tail) && !RefreshTableState(&lower)) {
      return false;
    }
  }
  bool upper_adjusted = false;
  if (!rows1.empty() && header_rows < rows2.size()) {
    const std::vector<int> last_colspans = Colspans(rows1.back());
    const std::vector<int> first_colspans = Colspans(rows2[header_rows]);
    const int cols1 = upper.scan.total_cols;
    const int cols2 = lower.scan.total_cols;
    if (cols1 > cols2) {
      AdjustRowsColspan(rows2, header_rows, rows2.size(), lower.scan, last_colspans,
                        rows1.back().cells.size(), cols1, first_colspans);
    } else if (cols2 > cols1) {
      AdjustRowsColspan(rows1, 0, rows1.size(), upper.scan, first_colspans,
                        rows2[header_rows].cells.size(), cols2, last_colspans);
      upper_adjusted = true;
    }
  }
  if (upper_adjusted && !RefreshTableState(&upper)) return false;
  ApplyCellMerge(upper, lower, header_rows, cell_merge);
  const size_t keep = std::min(header_rows, rows2.size());
  std::vector<TableRow> moved(
      std::make_move_iterator(rows2.begin() + static_cast<std::ptrdiff_t>(keep)),
      std::make_move_iterator(rows2.end()));
  rows2.resize(keep);
  AppendRows(&upper.table, std::move(moved));
  // The appended rows' metrics (MinerU scans them with the upper table's trailing occupancy; a
  // full rescan gives the same). The front cache stays as it was, as in MinerU.
  std::optional<RowScan> scan = ScanRows(rows1);
  if (!scan) return false;
  upper.scan = std::move(*scan);
  return true;
}

// Footnotes: the upper table's are replaced by copies of the lower table's, marked cross_page
// and indexed after the upper body (index + 1, + 2, ...; no index when the body has none).
void MoveFootnotes(Json& upper, const std::vector<Json>& footnotes) {
  Json* blocks = MutableArrayAt(upper, "blocks");
  if (blocks == nullptr) return;
  Json kept = Json::array();
  for (Json& sub : *blocks) {
    if (StringAt(sub, "type") != "table_footnote") kept.push_back(std::move(sub));
  }
  *blocks = std::move(kept);
  std::optional<Json> body_index;
  if (Json* body = FirstTableBody(upper)) {
    auto it = body->find("index");
    if (it != body->end() && (it->is_number() || it->is_boolean())) body_index = *it;
  }
  int64_t offset = 0;
  for (const Json& footnote : footnotes) {
    ++offset;
    Json copy = footnote;
    if (!copy.is_object()) continue;
    copy["cross_page"] = true;
    if (!body_index) {
      copy.erase("index");
    } else if (body_index->is_number_float()) {
      copy["index"] = body_index->get<double>() + static_cast<double>(offset);
    } else if (body_index->is_boolean()) {
      copy["index"] = (body_index->get<bool>() ? 1 : 0) + offset;
    } else if (body_index->is_number_unsigned()) {
      copy["index"] = body_index->get<uint64_t>() + static_cast<uint64_t>(offset);
    } else {
      copy["index"] = body_index->get<int64_t>() + offset;
    }
    blocks->push_back(std::move(copy));
  }
}

// After a merge: the lower table's post-body captions become text blocks right after it, and
// the rest of its sub-blocks lose their lines.
void RetireLowerTable(Json& para_blocks, const std::vector<size_t>& post_captions) {
  Json& lower = para_blocks[0];
  Json* blocks = MutableArrayAt(lower, "blocks");
  if (blocks == nullptr) return;
  std::vector<Json> restored;
  Json kept = Json::array();
  for (size_t i = 0; i < blocks->size(); ++i) {
    if (std::find(post_captions.begin(), post_captions.end(), i) != post_captions.end()) {
      Json text = (*blocks)[i];
      text["type"] = "text";
      restored.push_back(std::move(text));
    } else {
      kept.push_back(std::move((*blocks)[i]));
    }
  }
  for (Json& sub : kept) {
    if (!sub.is_object()) continue;
    sub["lines"] = Json::array();
    sub["lines_deleted"] = true;
  }
  *blocks = std::move(kept);
  for (size_t k = 0; k < restored.size(); ++k) {
    para_blocks.insert(para_blocks.begin() + static_cast<std::ptrdiff_t>(1 + k),
                       std::move(restored[k]));
  }
}

void MergeCrossPageTables344(Json& pdf_info) {
  if (!pdf_info.is_array()) return;
  // The merged upper table of the previous step when it is its page's only block: it is this
  // step's lower table, with the rows it absorbed (serialised once it is merged or not).
  std::optional<TableState> carried;
  for (size_t page = pdf_info.size(); page-- > 1;) {
    std::optional<TableState> lower_state = std::move(carried);
    carried.reset();
    const bool lower_edited = lower_state.has_value();
    Json* blocks = MutableArrayAt(pdf_info[page], "para_blocks");
    Json* previous_blocks = MutableArrayAt(pdf_info[page - 1], "para_blocks");
    bool merged = false;
    if (blocks != nullptr && previous_blocks != nullptr && !blocks->empty() &&
        !previous_blocks->empty() && StringAt(blocks->front(), "type") == "table" &&
        StringAt(previous_blocks->back(), "type") == "table") {
      Json& lower = blocks->front();
      Json& upper = previous_blocks->back();
      if (!lower_state) lower_state = StateOf(lower);
      std::optional<TableState> upper_state = StateOf(upper);
      if (lower_state && upper_state) {
        std::vector<size_t> post_captions;
        std::vector<Json> footnotes;
        if (Json* subs = MutableArrayAt(lower, "blocks")) {
          for (size_t i = 0; i < subs->size(); ++i) {
            const std::string type = StringAt((*subs)[i], "type");
            if (type == "table_caption" && IsPostTableNonContinuationCaption(lower, (*subs)[i])) {
              post_captions.push_back(i);
            } else if (type == "table_footnote") {
              footnotes.push_back((*subs)[i]);
            }
          }
        }
        if (CanMergeTables(lower, upper, *lower_state, *upper_state, post_captions)) {
          // The carried state is still needed for writing back if the merge fails.
          std::optional<TableState> lower_copy;
          if (lower_edited) lower_copy = *lower_state;
          TableState& lower_work = lower_copy ? *lower_copy : *lower_state;
          auto it = lower.find("cell_merge");
          const Json* cell_merge = it != lower.end() ? &*it : nullptr;
          if (PerformTableMerge(*upper_state, lower_work, cell_merge)) {
            merged = true;
            MoveFootnotes(upper, footnotes);
            RetireLowerTable(*blocks, post_captions);
            if (page - 1 == 0 || previous_blocks->size() > 1) {
              WriteHtml(previous_blocks->back(), *upper_state);
            } else {
              carried = std::move(upper_state);
            }
          }
        }
      }
    }
    if (lower_edited && !merged && blocks != nullptr && !blocks->empty() && lower_state) {
      WriteHtml(blocks->front(), *lower_state);
    }
  }
}

}  // namespace

bool IsTableContinuationText(std::string_view text) {
  const std::string normalized = AsciiLower(FullToHalf(PythonStrip(text)));
  if (normalized.empty()) return false;
  static constexpr std::array<std::string_view, 9> kEndMarkers = {
      "(续)",    "(续表)",        "(续上表)",          "(continued)",
      "(cont.)", "(cont\u2019d)", "(\u2026continued)", "continued",
      "续表",
  };
  for (std::string_view marker : kEndMarkers) {
    if (normalized.size() < marker.size()) continue;
    const size_t start = normalized.size() - marker.size();
    if (normalized.compare(start, marker.size(), marker.data(), marker.size()) != 0) continue;
    if (marker != "continued" || start == 0) return true;
    // "continued" only as a word of its own ("discontinued" is no marker).
    std::optional<char32_t> before = CodePointBefore(normalized, start);
    if (!before || !IsPythonAlpha(*before)) return true;
  }
  return normalized.find("(continued)") != std::string::npos;
}

void MergeCrossPageTables(Json& pdf_info, const TableMergeRules& rules) {
  if (rules.mineru_344) {
    MergeCrossPageTables344(pdf_info);
  } else {
    MergeCrossPageTables(pdf_info);
  }
}

}  // namespace mineru::pipeline
