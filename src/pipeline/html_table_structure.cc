// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's table structure helpers (mineru/utils/table_merge.py _scan_rows,
// _scan_row_visual_sources, build_visual_col_mapping, build_row_rendered_cell_segments,
// calculate_row_rendered_segments, _build_front_cache, detect_table_headers,
// _expand_header_count_by_rowspan, check_rows_match, can_merge_by_structure) over html_table.h's
// model.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pipeline/html_table.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline {
namespace {

// The occupancy of scanned rows, each column marked with the cell that covers it. Cells are
// numbered in scan order; carried-in (initial) columns get owners of their own, one per column,
// like MinerU's (-1, col) markers. A later cell covering a marked column overwrites the mark.
class OwnerScan {
 public:
  static constexpr int32_t kFree = INT32_MIN;

  explicit OwnerScan(const Occupancy& initial) {
    for (size_t r = 0; r < initial.size(); ++r) {
      for (int col : initial[r]) {
        if (col < 0 || !Reserve(r, col + 1, 1)) {
          failed_ = true;
          return;
        }
        owners_[r][static_cast<size_t>(col)] = -2 - col;
        total_cols_ = std::max(total_cols_, col + 1);
      }
    }
  }

  // Scans the next row; false (and failed() from then on) past kMaxOccupancyMarks.
  bool Add(std::span<const TableCell> cells) {
    if (failed_) return false;
    const size_t r = rows_++;
    EnsureRow(r);
    size_t col = 0;
    for (size_t i = 0; i < cells.size(); ++i) {
      const TableCell& cell = cells[i];
      while (col < owners_[r].size() && owners_[r][col] != kFree) ++col;
      const auto id = static_cast<int32_t>(cell_rows_.size());
      cell_rows_.push_back(static_cast<int32_t>(r));
      cell_index_.push_back(static_cast<int32_t>(i));
      const auto colspan = static_cast<size_t>(std::max(cell.colspan, 0));
      const auto rowspan = static_cast<size_t>(std::max(cell.rowspan, 0));
      for (size_t rr = r; rr < r + rowspan; ++rr) {
        if (!Reserve(rr, col + colspan, colspan)) {
          failed_ = true;
          return false;
        }
        std::fill_n(owners_[rr].begin() + static_cast<std::ptrdiff_t>(col), colspan, id);
      }
      col += colspan;
      total_cols_ = std::max(total_cols_, static_cast<int>(col));
    }
    return true;
  }

  bool failed() const { return failed_; }
  size_t rows() const { return rows_; }
  size_t marked_rows() const { return owners_.size(); }
  int total_cols() const { return total_cols_; }
  // Row r's owners (final once row r is added: later rows only mark rows below them).
  const std::vector<int32_t>& OwnersOf(size_t r) const {
    static const std::vector<int32_t> kNone;
    return r < owners_.size() ? owners_[r] : kNone;
  }
  // The scanned row that owns `owner` (−1 for carried-in columns).
  int32_t RowOf(int32_t owner) const {
    return owner >= 0 ? cell_rows_[static_cast<size_t>(owner)] : -1;
  }
  int32_t CellOf(int32_t owner) const {
    return owner >= 0 ? cell_index_[static_cast<size_t>(owner)] : -1;
  }

 private:
  void EnsureRow(size_t r) {
    if (owners_.size() <= r) owners_.resize(r + 1);
  }
  // Makes row r at least `width` wide. Both the marks and the growth count against the budget:
  // a rowspan can widen rows below far past what they hold, and the budget bounds the memory.
  bool Reserve(size_t r, size_t width, size_t marks) {
    marks_ += marks;
    if (marks_ > kMaxOccupancyMarks || width > kMaxOccupancyMarks) return false;
    EnsureRow(r);
    if (owners_[r].size() < width) {
      marks_ += width - owners_[r].size();
      if (marks_ > kMaxOccupancyMarks) return false;
      owners_[r].resize(width, kFree);
    }
    return true;
  }

  std::vector<std::vector<int32_t>> owners_;
  std::vector<int32_t> cell_rows_;
  std::vector<int32_t> cell_index_;
  size_t rows_ = 0;
  size_t marks_ = 0;
  int total_cols_ = 0;
  bool failed_ = false;
};

int EffectiveCols(const std::vector<int32_t>& owners) {
  for (size_t c = owners.size(); c > 0; --c) {
    if (owners[c - 1] != OwnerScan::kFree) return static_cast<int>(c);
  }
  return 0;
}

// Scans rows 0…target; nullopt when target does not exist or the budget runs out.
std::optional<OwnerScan> ScanThrough(std::span<const TableRow> rows, size_t target,
                                     const Occupancy& initial) {
  if (target >= rows.size()) return std::nullopt;
  OwnerScan scan(initial);
  for (size_t r = 0; r <= target; ++r) {
    if (!scan.Add(rows[r].cells)) return std::nullopt;
  }
  return scan;
}

std::vector<int> MapOf(const OwnerScan& scan, std::span<const TableCell> cells, size_t target) {
  const std::vector<int32_t>& owners = scan.OwnersOf(target);
  std::vector<int> map;
  map.reserve(cells.size());
  size_t col = 0;
  for (const TableCell& cell : cells) {
    while (col < owners.size() && owners[col] != OwnerScan::kFree &&
           scan.RowOf(owners[col]) < static_cast<int32_t>(target)) {
      ++col;
    }
    map.push_back(static_cast<int>(col));
    col += static_cast<size_t>(std::max(cell.colspan, 0));
  }
  return map;
}

std::string DisplayText(const TableCell& cell) { return FullToHalf(PythonStrip(cell.text)); }

// calculate_row_rendered_segments: the number of RenderedSegments, without their texts.
size_t RenderedSegmentCount(std::span<const TableRow> rows, size_t target) {
  std::optional<OwnerScan> scan = ScanThrough(rows, target, {});
  if (!scan) return 0;
  const std::vector<int32_t>& owners = scan->OwnersOf(target);
  size_t count = 0;
  int32_t previous = OwnerScan::kFree;
  for (int c = 0; c < scan->total_cols(); ++c) {
    const int32_t owner =
        static_cast<size_t>(c) < owners.size() ? owners[static_cast<size_t>(c)] : OwnerScan::kFree;
    if (owner != OwnerScan::kFree && owner != previous) ++count;
    previous = owner;
  }
  return count;
}

}  // namespace

std::optional<RowScan> ScanRows(std::span<const TableRow> rows, const Occupancy& initial,
                                size_t first_row) {
  OwnerScan scan(initial);
  if (scan.failed()) return std::nullopt;
  RowScan out;
  out.rows.reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!scan.Add(rows[r].cells)) return std::nullopt;
    RowMetrics metrics;
    metrics.row = first_row + r;
    metrics.effective_cols = EffectiveCols(scan.OwnersOf(r));
    for (const TableCell& cell : rows[r].cells) metrics.actual_cols += cell.colspan;
    metrics.visual_cols = static_cast<int>(rows[r].cells.size());
    out.total_cols = std::max(out.total_cols, metrics.effective_cols);
    if (!rows[r].cells.empty()) out.last_data_row = metrics;
    out.rows.push_back(metrics);
  }
  out.total_cols = std::max(out.total_cols, scan.total_cols());
  for (size_t r = rows.size(); r < scan.marked_rows(); ++r) {
    std::vector<int> cols;
    const std::vector<int32_t>& owners = scan.OwnersOf(r);
    for (size_t c = 0; c < owners.size(); ++c) {
      if (owners[c] != OwnerScan::kFree) cols.push_back(static_cast<int>(c));
    }
    out.tail.push_back(std::move(cols));
  }
  while (!out.tail.empty() && out.tail.back().empty()) out.tail.pop_back();
  return out;
}

std::vector<RenderedSegment> RenderedSegments(std::span<const TableRow> rows, size_t target,
                                              const Occupancy& initial) {
  std::optional<OwnerScan> scan = ScanThrough(rows, target, initial);
  if (!scan) return {};
  const std::vector<int32_t>& owners = scan->OwnersOf(target);
  std::vector<RenderedSegment> segments;
  int32_t current = OwnerScan::kFree;
  for (int c = 0; c <= scan->total_cols(); ++c) {
    const bool in_row = c < scan->total_cols() && static_cast<size_t>(c) < owners.size();
    const int32_t owner = in_row ? owners[static_cast<size_t>(c)] : OwnerScan::kFree;
    if (owner == current) continue;
    if (current != OwnerScan::kFree) segments.back().end_col = c;
    current = owner;
    if (owner == OwnerScan::kFree) continue;
    RenderedSegment segment;
    segment.start_col = c;
    const int32_t row = scan->RowOf(owner);
    if (row >= 0) {
      segment.text = DisplayText(
          rows[static_cast<size_t>(row)].cells[static_cast<size_t>(scan->CellOf(owner))]);
    }
    segments.push_back(std::move(segment));
  }
  return segments;
}

std::vector<int> VisualColumnMap(std::span<const TableRow> rows, size_t target,
                                 const Occupancy& initial) {
  std::optional<OwnerScan> scan = ScanThrough(rows, target, initial);
  if (!scan) return {};
  return MapOf(*scan, rows[target].cells, target);
}

std::vector<std::vector<int>> VisualColumnMaps(std::span<const TableRow> rows, size_t count) {
  std::vector<std::vector<int>> maps;
  OwnerScan scan({});
  for (size_t r = 0; r < std::min(count, rows.size()); ++r) {
    if (!scan.Add(rows[r].cells)) return {};
    maps.push_back(MapOf(scan, rows[r].cells, r));
  }
  return maps;
}

bool RefreshTableState(TableState* state) {
  std::span<const TableRow> rows = state->table.rows;
  std::optional<RowScan> scan = ScanRows(rows);
  if (!scan) return false;
  const std::span<const TableRow> front = rows.first(std::min(rows.size(), kMaxHeaderRows + 1));
  std::optional<RowScan> front_scan = ScanRows(front);
  if (!front_scan) return false;
  state->scan = std::move(*scan);
  state->front_metrics = front_scan->rows;
  state->front_signatures.clear();
  for (size_t r = 0; r < std::min(front.size(), kMaxHeaderRows); ++r) {
    RowSignature signature;
    signature.effective_cols = front_scan->rows[r].effective_cols;
    for (const TableCell& cell : front[r].cells) {
      signature.colspans.push_back(cell.colspan);
      signature.rowspans.push_back(cell.rowspan);
      signature.normalized_texts.push_back(RemovePythonWhitespace(FullToHalf(cell.text)));
    }
    state->front_signatures.push_back(std::move(signature));
  }
  return true;
}

std::optional<TableState> BuildTableState(std::string_view html, const HtmlTableOptions& options) {
  if (html.empty()) return std::nullopt;
  std::optional<TableModel> table = BuildTableModel(html, options);
  if (!table || table->rows.empty()) return std::nullopt;
  TableState state;
  state.table = std::move(*table);
  if (!RefreshTableState(&state)) return std::nullopt;
  return state;
}

size_t DetectHeaderRows(const TableState& upper, const TableState& lower) {
  const size_t limit =
      std::min({upper.front_signatures.size(), lower.front_signatures.size(), kMaxHeaderRows});
  size_t strict = 0;
  while (strict < limit) {
    const RowSignature& a = upper.front_signatures[strict];
    const RowSignature& b = lower.front_signatures[strict];
    if (a.effective_cols != b.effective_cols || a.colspans != b.colspans ||
        a.rowspans != b.rowspans || a.normalized_texts != b.normalized_texts) {
      break;
    }
    ++strict;
  }
  if (strict > 0) return strict;
  size_t visual = 0;
  while (visual < limit) {
    if (upper.front_signatures[visual].normalized_texts !=
            lower.front_signatures[visual].normalized_texts ||
        RenderedSegmentCount(upper.table.rows, visual) !=
            RenderedSegmentCount(lower.table.rows, visual)) {
      break;
    }
    ++visual;
  }
  return visual;
}

size_t ExpandHeaderRowsByRowspan(std::span<const TableRow> rows, size_t header_rows) {
  if (header_rows == 0 || rows.empty()) return header_rows;
  size_t expanded = std::min(header_rows, rows.size());
  for (size_t r = 0; r < expanded; ++r) {
    for (const TableCell& cell : rows[r].cells) {
      if (cell.rowspan > 1) {
        expanded = std::min(std::max(expanded, r + static_cast<size_t>(cell.rowspan)), rows.size());
      }
    }
  }
  return expanded;
}

bool BoundaryRowsMatch(const TableState& upper, const TableState& lower) {
  if (!upper.scan.last_data_row) return false;
  const RowMetrics& last = *upper.scan.last_data_row;
  const size_t header_rows =
      ExpandHeaderRowsByRowspan(lower.table.rows, DetectHeaderRows(upper, lower));
  if (header_rows >= lower.front_metrics.size()) return false;
  const RowMetrics& first = lower.front_metrics[header_rows];
  return last.effective_cols == first.effective_cols || last.actual_cols == first.actual_cols ||
         RenderedSegmentCount(upper.table.rows, last.row) ==
             RenderedSegmentCount(lower.table.rows, first.row);
}

bool CanMergeByStructure(const TableState& lower, const TableState& upper,
                         const std::optional<TableBox>& lower_box,
                         const std::optional<TableBox>& upper_box) {
  if (lower_box && upper_box) {
    const double w1 = (*lower_box)[2] - (*lower_box)[0];
    const double w2 = (*upper_box)[2] - (*upper_box)[0];
    if (w1 > 0 && w2 > 0 && std::fabs(w1 - w2) / std::min(w1, w2) >= 0.1) return false;
  }
  if (upper.scan.total_cols == lower.scan.total_cols) return true;
  return BoundaryRowsMatch(upper, lower);
}

}  // namespace mineru::pipeline
