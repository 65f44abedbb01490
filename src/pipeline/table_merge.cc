// SPDX-License-Identifier: Apache-2.0
#include "pipeline/table_merge.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/html_table.h"
#include "pipeline/markdown.h"
#include "pipeline/middle_json.h"

namespace mineru::pipeline {
namespace {

// ---------------------------------------------------------------------------------------------
// Text helpers.

std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// MinerU 2.7.6: a caption ends with one of these (after full-to-half and lower-casing) ...
constexpr std::array<std::string_view, 8> kContinuationEndMarkers = {
    "(续)",    "(续表)",        "(续上表)",          "(continued)",
    "(cont.)", "(cont\u2019d)", "(\u2026continued)", "续表",
};
// ... or contains this one.
constexpr std::string_view kContinuationInlineMarker = "(continued)";

bool IsContinuationCaption(std::string_view caption) {
  std::string text = AsciiLower(FullToHalf(caption));
  for (std::string_view marker : kContinuationEndMarkers) {
    if (text.size() >= marker.size() && text.compare(text.size() - marker.size(), marker.size(),
                                                     marker.data(), marker.size()) == 0) {
      return true;
    }
  }
  return text.find(kContinuationInlineMarker) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// The table as this merge edits it: html_table.h's parse (single level, nested tables rejected)
// with the colspans the widening rewrites.

struct Cell {
  size_t tag_begin = 0;
  size_t tag_end = 0;
  // The colspan attribute's value bytes (inside any quotes), when the tag has one.
  std::optional<std::pair<size_t, size_t>> colspan_value;
  // Where a new colspan attribute goes: before the tag's ">" or "/>".
  size_t attr_insert_at = 0;
  int colspan = 1;
  int rowspan = 1;
  std::string text;  // get_text(): all text inside, entities decoded
  std::optional<int> new_colspan;
};

struct Row {
  size_t begin = 0;
  size_t end = 0;
  bool closed = false;  // an explicit </tr> ends it
  std::vector<Cell> cells;
};

struct Table {
  std::string_view html;
  std::vector<Row> rows;
  size_t insert_at = 0;  // first <tbody>'s </tbody>, else first <table>'s </table>, else the end
  // Span-aware layout (MinerU build_table_occupied_matrix / calculate_table_total_columns).
  std::vector<int> effective_cols;
  int total_cols = 0;
};

// Computes the span-aware layout; false when the marks exceed the budget.
bool ComputeLayout(Table* table) {
  const size_t n = table->rows.size();
  std::vector<std::vector<char>> occupied(n);
  table->effective_cols.assign(n, 0);
  table->total_cols = 0;
  size_t marks = 0;
  for (size_t r = 0; r < n; ++r) {
    size_t col = 0;
    for (const Cell& cell : table->rows[r].cells) {
      while (col < occupied[r].size() && occupied[r][col]) ++col;
      const size_t last_row = std::min(n, r + static_cast<size_t>(cell.rowspan));
      for (size_t rr = r; rr < last_row; ++rr) {
        std::vector<char>& row = occupied[rr];
        if (row.size() < col + cell.colspan) {
          // The growth counts too: a rowspan can widen rows below far past what they hold.
          marks += col + cell.colspan - row.size();
          if (marks > kMaxOccupancyMarks) return false;
          row.resize(col + cell.colspan, 0);
        }
        std::fill(row.begin() + col, row.begin() + col + cell.colspan, 1);
        marks += static_cast<size_t>(cell.colspan);
        if (marks > kMaxOccupancyMarks) return false;
      }
      col += static_cast<size_t>(cell.colspan);
      table->total_cols = std::max(table->total_cols, static_cast<int>(col));
    }
    // The row's effective width: its furthest occupied column + 1 (rowspans from above count).
    const std::vector<char>& row = occupied[r];
    for (size_t c = row.size(); c > 0; --c) {
      if (row[c - 1]) {
        table->effective_cols[r] = static_cast<int>(c);
        break;
      }
    }
  }
  return true;
}

// Parses `html` (kept by reference: it must outlive the result). nullopt for HTML the parser
// rejects (see table_merge.h).
std::optional<Table> ParseTable(std::string_view html) {
  std::optional<HtmlTable> parsed = ParseHtmlTable(html);
  if (!parsed) return std::nullopt;
  Table table;
  table.html = html;
  table.insert_at = parsed->insert_at;
  for (const HtmlRow& source : parsed->rows) {
    Row row;
    row.begin = source.begin;
    row.end = source.end;
    row.closed = source.closed;
    for (size_t id : source.cells) {
      const HtmlCell& parsed_cell = parsed->cells[id];
      Cell cell;
      cell.tag_begin = parsed_cell.tag_begin;
      cell.tag_end = parsed_cell.tag_end;
      cell.colspan_value = parsed_cell.colspan_value;
      cell.attr_insert_at = parsed_cell.attr_insert_at;
      cell.colspan = parsed_cell.colspan;
      cell.rowspan = parsed_cell.rowspan;
      cell.text = parsed_cell.text;
      row.cells.push_back(std::move(cell));
    }
    table.rows.push_back(std::move(row));
  }
  if (!ComputeLayout(&table)) return std::nullopt;
  return table;
}

// ---------------------------------------------------------------------------------------------
// Row measures.

int ActualCols(const Row& row) {  // sum of colspans
  int sum = 0;
  for (const Cell& cell : row.cells) sum += cell.new_colspan.value_or(cell.colspan);
  return sum;
}

std::vector<int> Colspans(const Row& row) {
  std::vector<int> out;
  for (const Cell& cell : row.cells) out.push_back(cell.new_colspan.value_or(cell.colspan));
  return out;
}

std::string NormalizedText(const Cell& cell) {
  return RemovePythonWhitespace(FullToHalf(cell.text));
}

// Header rows (up to 5) the lower table repeats: first rows equal in cell count, effective
// width, every cell's colspan/rowspan and whitespace-insensitive full-to-half text; when not even
// the first row matches that way, rows equal in texts and effective width only.
size_t DetectHeaderRows(const Table& upper, const Table& lower) {
  const size_t limit = std::min({upper.rows.size(), lower.rows.size(), size_t{5}});
  size_t strict = 0;
  for (; strict < limit; ++strict) {
    const Row& a = upper.rows[strict];
    const Row& b = lower.rows[strict];
    if (a.cells.size() != b.cells.size()) break;
    if (upper.effective_cols[strict] != lower.effective_cols[strict]) break;
    bool same = true;
    for (size_t c = 0; c < a.cells.size() && same; ++c) {
      same = a.cells[c].colspan == b.cells[c].colspan && a.cells[c].rowspan == b.cells[c].rowspan &&
             NormalizedText(a.cells[c]) == NormalizedText(b.cells[c]);
    }
    if (!same) break;
  }
  if (strict > 0) return strict;
  size_t visual = 0;
  for (; visual < limit; ++visual) {
    const Row& a = upper.rows[visual];
    const Row& b = lower.rows[visual];
    if (a.cells.size() != b.cells.size()) break;
    if (upper.effective_cols[visual] != lower.effective_cols[visual]) break;
    bool same = true;
    for (size_t c = 0; c < a.cells.size() && same; ++c) {
      same = NormalizedText(a.cells[c]) == NormalizedText(b.cells[c]);
    }
    if (!same) break;
  }
  return visual;
}

// The upper table's last row with cells and the lower table's first data row agree in effective,
// colspan-summed or visual (cell) column count.
bool RowsMatch(const Table& upper, const Table& lower, size_t header_rows) {
  if (upper.rows.empty() || lower.rows.empty()) return false;
  std::optional<size_t> last;
  for (size_t r = upper.rows.size(); r > 0; --r) {
    if (!upper.rows[r - 1].cells.empty()) {
      last = r - 1;
      break;
    }
  }
  if (!last || lower.rows.size() <= header_rows) return false;
  const Row& a = upper.rows[*last];
  const Row& b = lower.rows[header_rows];
  return upper.effective_cols[*last] == lower.effective_cols[header_rows] ||
         ActualCols(a) == ActualCols(b) || a.cells.size() == b.cells.size();
}

// Widens rows [begin, end) of `table` to `target` columns (MinerU adjust_table_rows_colspan):
// rows already that wide are left; a row shaped like the reference row (same cell count and
// colspans) takes the reference structure's colspans above 1; any other row's last cell absorbs
// the missing columns.
void WidenRows(Table* table, size_t begin, size_t end, const std::vector<int>& structure,
               const std::vector<int>& reference_colspans, int target) {
  for (size_t r = begin; r < end; ++r) {
    Row& row = table->rows[r];
    if (row.cells.empty()) continue;
    const int effective = table->effective_cols[r];
    if (effective >= target || ActualCols(row) >= target) continue;
    if (row.cells.size() == structure.size() && Colspans(row) == reference_colspans) {
      for (size_t c = 0; c < row.cells.size(); ++c) {
        if (structure[c] > 1) row.cells[c].new_colspan = structure[c];
      }
    } else if (target > effective) {
      Cell& cell = row.cells.back();
      cell.new_colspan = cell.new_colspan.value_or(cell.colspan) + (target - effective);
    }
  }
}

// `src[begin, end)` with the rewritten colspans of `cells` applied.
std::string Render(std::string_view src, size_t begin, size_t end,
                   const std::vector<const Cell*>& cells) {
  std::string out;
  size_t pos = begin;
  for (const Cell* cell : cells) {
    if (!cell->new_colspan || cell->tag_begin < pos || cell->tag_end > end) continue;
    const std::string value = std::to_string(*cell->new_colspan);
    if (cell->colspan_value) {
      out.append(src.substr(pos, cell->colspan_value->first - pos));
      out += value;
      pos = cell->colspan_value->second;
    } else {
      out.append(src.substr(pos, cell->attr_insert_at - pos));
      out += " colspan=\"" + value + "\"";
      pos = cell->attr_insert_at;
    }
  }
  out.append(src.substr(pos, end - pos));
  return out;
}

std::vector<const Cell*> CellsOf(const Table& table, size_t first_row, size_t end_row) {
  std::vector<const Cell*> out;
  for (size_t r = first_row; r < end_row; ++r) {
    for (const Cell& cell : table.rows[r].cells) out.push_back(&cell);
  }
  return out;
}

// perform_table_merge's HTML part: the upper table's HTML with the lower table's rows after its
// repeated header rows appended, the narrower side widened first.
std::string MergeHtml(Table& upper, Table& lower) {
  const size_t header_rows = DetectHeaderRows(upper, lower);
  const size_t n1 = upper.rows.size();
  const size_t n2 = lower.rows.size();
  if (n1 > 0 && n2 > 0 && header_rows < n2) {
    const Row& last_upper = upper.rows.back();
    const Row& first_lower = lower.rows[header_rows];
    if (upper.total_cols >= lower.total_cols) {
      WidenRows(&lower, header_rows, n2, Colspans(last_upper), Colspans(first_lower),
                upper.total_cols);
    } else {
      WidenRows(&upper, 0, n1, Colspans(first_lower), Colspans(last_upper), lower.total_cols);
    }
  }
  std::string out = Render(upper.html, 0, upper.insert_at, CellsOf(upper, 0, n1));
  const std::vector<const Cell*> lower_cells = CellsOf(lower, 0, n2);
  for (size_t r = header_rows; r < n2; ++r) {
    const Row& row = lower.rows[r];
    out += Render(lower.html, row.begin, row.end, lower_cells);
    if (!row.closed) out += "</tr>";
  }
  out += Render(upper.html, upper.insert_at, upper.html.size(), CellsOf(upper, 0, n1));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Guarded writes to middle.json blocks (reads: pipeline/middle_json.h).

Json* MutableArrayAt(Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return nullptr;
  return &*it;
}

// The first span of a body block's first line, when the body has one (MinerU reads and writes
// the table HTML only there).
Json* FirstSpan(Json& body) {
  Json* lines = MutableArrayAt(body, "lines");
  if (lines == nullptr || lines->empty()) return nullptr;
  Json* spans = MutableArrayAt((*lines)[0], "spans");
  if (spans == nullptr || spans->empty() || !(*spans)[0].is_object()) return nullptr;
  return &(*spans)[0];
}

// The table's HTML: from the last table_body that has a first span (MinerU's loop overwrites).
std::string TableHtml(Json& table) {
  std::string html;
  Json* blocks = MutableArrayAt(table, "blocks");
  if (blocks == nullptr) return html;
  for (Json& sub : *blocks) {
    if (StringAt(sub, "type") != "table_body") continue;
    if (Json* span = FirstSpan(sub)) html = StringAt(*span, "html");
  }
  return html;
}

std::optional<double> Width(const Json& block) {
  if (!block.is_object()) return std::nullopt;
  auto it = block.find("bbox");
  if (it == block.end() || !it->is_array() || it->size() != 4) return std::nullopt;
  for (const Json& v : *it) {
    if (!v.is_number()) return std::nullopt;
  }
  double w = (*it)[2].get<double>() - (*it)[0].get<double>();
  if (!std::isfinite(w)) return std::nullopt;
  return w;
}

size_t CountSubBlocks(Json& table, std::string_view type) {
  size_t n = 0;
  if (Json* blocks = MutableArrayAt(table, "blocks")) {
    for (const Json& sub : *blocks) n += StringAt(sub, "type") == type ? 1 : 0;
  }
  return n;
}

// MinerU 2.7.6 can_merge_tables: the caption and footnote conditions.
bool CaptionsAllowMerge(Json& upper, Json& lower) {
  const size_t upper_footnotes = CountSubBlocks(upper, "table_footnote");
  bool has_caption = false;
  bool continued = false;
  if (Json* blocks = MutableArrayAt(lower, "blocks")) {
    for (const Json& sub : *blocks) {
      if (StringAt(sub, "type") != "table_caption") continue;
      has_caption = true;
      if (IsContinuationCaption(MergeParaText(sub))) continued = true;
    }
  }
  if (has_caption) return continued && upper_footnotes <= 1;
  return upper_footnotes == 0;
}

// Tries to merge `lower` (first block of a page) into `upper` (last block of the page before).
void TryMerge(Json& upper, Json& lower) {
  if (!CaptionsAllowMerge(upper, lower)) return;
  const std::string lower_html = TableHtml(lower);
  const std::string upper_html = TableHtml(upper);
  if (lower_html.empty() || upper_html.empty()) return;
  // Widths differ by less than 10% of the narrower one.
  std::optional<double> w_lower = Width(lower);
  std::optional<double> w_upper = Width(upper);
  if (!w_lower || !w_upper) return;
  const double narrower = std::min(*w_lower, *w_upper);
  if (!(narrower > 0) || std::fabs(*w_lower - *w_upper) / narrower >= 0.1) return;
  std::optional<Table> upper_table = ParseTable(upper_html);
  std::optional<Table> lower_table = ParseTable(lower_html);
  if (!upper_table || !lower_table) return;
  const bool columns_match = upper_table->total_cols == lower_table->total_cols;
  if (!columns_match &&
      !RowsMatch(*upper_table, *lower_table, DetectHeaderRows(*upper_table, *lower_table))) {
    return;
  }
  const std::string merged = MergeHtml(*upper_table, *lower_table);

  // Footnotes: the upper table's are replaced by copies of the lower table's, marked cross_page.
  Json* upper_blocks = MutableArrayAt(upper, "blocks");
  Json* lower_blocks = MutableArrayAt(lower, "blocks");
  if (upper_blocks == nullptr || lower_blocks == nullptr) return;  // unreachable: HTML was found
  Json kept = Json::array();
  for (Json& sub : *upper_blocks) {
    if (StringAt(sub, "type") != "table_footnote") kept.push_back(std::move(sub));
  }
  for (const Json& sub : *lower_blocks) {
    if (StringAt(sub, "type") != "table_footnote") continue;
    Json copy = sub;
    copy["cross_page"] = true;
    kept.push_back(std::move(copy));
  }
  *upper_blocks = std::move(kept);
  // The merged HTML goes to the first table_body that has a first span.
  for (Json& sub : *upper_blocks) {
    if (StringAt(sub, "type") != "table_body") continue;
    if (Json* span = FirstSpan(sub)) {
      (*span)["html"] = merged;
      break;
    }
  }
  // The absorbed table's sub-blocks lose their lines.
  for (Json& sub : *lower_blocks) {
    if (!sub.is_object()) continue;
    sub["lines"] = Json::array();
    sub["lines_deleted"] = true;
  }
}

}  // namespace

std::optional<int> TableColumnCount(std::string_view html) {
  std::optional<Table> table = ParseTable(html);
  if (!table) return std::nullopt;
  return table->total_cols;
}

void MergeCrossPageTables(Json& pdf_info) {
  if (!pdf_info.is_array()) return;
  for (size_t page = pdf_info.size(); page-- > 1;) {
    Json* blocks = MutableArrayAt(pdf_info[page], "para_blocks");
    Json* previous_blocks = MutableArrayAt(pdf_info[page - 1], "para_blocks");
    if (blocks == nullptr || previous_blocks == nullptr) continue;
    if (blocks->empty() || previous_blocks->empty()) continue;
    Json& lower = blocks->front();
    Json& upper = previous_blocks->back();
    if (StringAt(lower, "type") != "table" || StringAt(upper, "type") != "table") continue;
    TryMerge(upper, lower);
  }
}

}  // namespace mineru::pipeline
