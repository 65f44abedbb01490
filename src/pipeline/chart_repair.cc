// SPDX-License-Identifier: Apache-2.0
#include "pipeline/chart_repair.h"

#include <cstddef>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "pipeline/python_str.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline {
namespace {

bool IsAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Cells are views into the line they were split from (a cell is a trimmed stretch of it).
using Row = std::vector<std::string_view>;

// The row split of SplitChartMarkdownRow(), as views.
std::optional<Row> SplitRow(std::string_view line) {
  std::string_view text = PythonStrip(line);
  if (text.empty() || text.find('|') == std::string_view::npos) return std::nullopt;
  if (text.front() == '|') text.remove_prefix(1);
  if (!text.empty() && text.back() == '|') text.remove_suffix(1);
  Row cells;
  size_t start = 0;
  bool escaped = false;
  bool in_code = false;
  // Bytes suffice: every special character is ASCII, and UTF-8 continuation bytes never are.
  // The client copies every character into the cell (a backslash and what it protects too), so
  // a cell is exactly the text between two splitting '|'s.
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (escaped) {
      escaped = false;
    } else if (ch == '\\') {
      escaped = true;
    } else if (ch == '`') {
      in_code = !in_code;
    } else if (ch == '|' && !in_code) {
      cells.push_back(PythonStrip(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  cells.push_back(PythonStrip(text.substr(start)));
  return cells;
}

// `:?-{3,}:?` over the whole of the cell with its spaces removed.
bool IsSeparatorCell(std::string_view cell) {
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < cell.size() && cell[i] == ' ') ++i;
  };
  skip_spaces();
  if (i < cell.size() && cell[i] == ':') ++i;
  size_t dashes = 0;
  while (true) {
    skip_spaces();
    if (i >= cell.size() || cell[i] != '-') break;
    ++i;
    ++dashes;
  }
  if (i < cell.size() && cell[i] == ':') ++i;
  skip_spaces();
  return dashes >= 3 && i == cell.size();
}

template <typename Cells>
bool IsSeparatorRow(const Cells& cells) {
  if (cells.empty()) return false;
  for (const auto& cell : cells) {
    if (!IsSeparatorCell(cell)) return false;
  }
  return true;
}

bool IsSeparatorLine(std::string_view line) {
  const auto cells = SplitRow(line);
  return cells && IsSeparatorRow(*cells);
}

// 1-based line number of byte offset `pos` (newlines before it + 1).
size_t LineNumberAt(std::string_view s, size_t pos) {
  size_t line = 1;
  for (size_t i = 0; i < pos; ++i) line += s[i] == '\n';
  return line;
}

// Detector 3: the shortest period of the collapsed content, when it repeats >= 2 times.
std::optional<std::pair<size_t, size_t>> WholeContentRepeat(std::string_view content) {
  const std::string collapsed = pystr::CollapseWhitespace(content);
  const std::string_view compact = PythonStrip(collapsed);
  std::vector<char32_t> cps;
  for (size_t i = 0, len = 0; i < compact.size(); i += len) {
    cps.push_back(pystr::CodePointAt(compact, i, &len));
  }
  const size_t n = cps.size();
  if (n < kChartMinWholeRepeatLength) return std::nullopt;
  // Knuth-Morris-Pratt failure function: n - border(n) is the shortest period, and the string
  // is a power of its prefix of that length exactly when the period divides n (this is what
  // the client's (s + s).find(s, 1) computes).
  std::vector<size_t> border(n, 0);
  for (size_t i = 1; i < n; ++i) {
    size_t k = border[i - 1];
    while (k > 0 && cps[i] != cps[k]) k = border[k - 1];
    if (cps[i] == cps[k]) ++k;
    border[i] = k;
  }
  const size_t period = n - border[n - 1];
  if (period < n && n % period == 0) return std::make_pair(period, n / period);
  return std::nullopt;
}

std::optional<std::string> DetectCellPattern(std::string_view content) {
  const auto lines = pystr::SplitLines(content);
  bool in_table_block = false;
  bool separator_seen = false;
  for (size_t index = 0; index < lines.size(); ++index) {
    const auto row = SplitRow(lines[index]);
    if (!row) {
      in_table_block = false;
      separator_seen = false;
      continue;
    }
    if (!in_table_block) {  // the header
      in_table_block = true;
      separator_seen = false;
      continue;
    }
    if (!separator_seen) {
      separator_seen = IsSeparatorRow(*row);
      continue;
    }
    for (size_t cell = 0; cell < row->size(); ++cell) {
      const std::string_view text = (*row)[cell];
      if (text.empty()) continue;
      if (auto issue = DetectChartCellRepetition(text)) {
        return *issue + " at line " + std::to_string(index + 1) + " cell " +
               std::to_string(cell + 1);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> ConsecutiveLines(const std::vector<std::string_view>& lines) {
  size_t index = 0;
  while (index < lines.size()) {
    const std::string_view line = lines[index];
    if (line.empty()) {
      ++index;
      continue;
    }
    size_t next = index + 1;
    while (next < lines.size() && lines[next] == line) ++next;
    const size_t count = next - index;
    if ((count >= 2 && pystr::Length(line) >= kChartMinLongLine) || count >= 3) {
      return "content_repetition_consecutive_line: line " + std::to_string(index + 1) +
             " repeats " + std::to_string(count) + " times";
    }
    index = next;
  }
  return std::nullopt;
}

std::optional<std::string> SameLineManyTimes(const std::vector<std::string_view>& lines) {
  std::unordered_map<std::string_view, std::vector<size_t>> positions;
  std::vector<std::string_view> order;  // first appearances, as a Python dict iterates
  for (size_t i = 0; i < lines.size(); ++i) {
    if (pystr::Length(lines[i]) < kChartMinLongLine || IsSeparatorLine(lines[i])) continue;
    auto [it, inserted] = positions.try_emplace(lines[i]);
    if (inserted) order.push_back(lines[i]);
    it->second.push_back(i + 1);
  }
  for (std::string_view line : order) {
    const std::vector<size_t>& at = positions[line];
    if (at.size() < kChartMinSameLineCount) continue;
    std::string shown;
    for (size_t i = 0; i < at.size() && i < 10; ++i) {
      if (i > 0) shown.push_back(',');
      shown += std::to_string(at[i]);
    }
    return "content_repetition_same_line_many_times: same line appears " +
           std::to_string(at.size()) + " times at lines " + shown;
  }
  return std::nullopt;
}

// Detector 8, streaming over the tokens of `text` (two reused key buffers, no allocation per
// token).
std::optional<std::string> TokenRun(std::string_view text) {
  std::string run_key;         // lower-cased token of the current run
  std::string key;             // lower-cased token just read
  std::string_view run_first;  // the run's first token, as written
  size_t run_start = 0;        // token index where the run began
  size_t run_count = 0;
  size_t token_index = 0;
  auto run_error = [&]() -> std::optional<std::string> {
    if (run_count < kChartMinTokenRun) return std::nullopt;
    return "content_repetition_single_token: token " + PythonRepr(run_first) + " repeats " +
           std::to_string(run_count) + " times at token " + std::to_string(run_start);
  };
  size_t i = 0;
  while (i < text.size()) {
    if (size_t n = PythonSpaceLength(text, i)) {
      i += n;
      continue;
    }
    const size_t start = i;
    if (IsAsciiAlnum(text[i])) {
      while (i < text.size() && IsAsciiAlnum(text[i])) ++i;
      while (i + 1 < text.size() &&
             (text[i] == '-' || text[i] == '_' || text[i] == '.' || text[i] == '/') &&
             IsAsciiAlnum(text[i + 1])) {
        ++i;
        while (i < text.size() && IsAsciiAlnum(text[i])) ++i;
      }
    } else {
      size_t len = 0;
      pystr::CodePointAt(text, i, &len);
      i += len;
    }
    const std::string_view token = text.substr(start, i - start);
    key.clear();
    pystr::AppendLower(token, &key);
    if (run_count > 0 && key == run_key) {
      ++run_count;
    } else {
      if (auto hit = run_error()) return hit;
      std::swap(run_key, key);
      run_first = token;
      run_start = token_index;
      run_count = 1;
    }
    ++token_index;
  }
  return run_error();
}

// ---------------------------------------------------------------------------------------------
// Largest legal table.

std::string NormalizeSourceLine(std::string_view line) {
  std::string out;
  const std::string_view s = PythonStrip(line);
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, 3) == "\xEF\xBD\x9C") {  // U+FF5C FULLWIDTH VERTICAL LINE
      out.push_back('|');
      i += 3;
    } else if (s.substr(i, 2) == "\xC2\xA6") {  // U+00A6 BROKEN BAR
      out.push_back('|');
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  // Then `\|` -> `|` (a second pass, as the client's chained str.replace calls).
  std::string result;
  result.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\\' && i + 1 < out.size() && out[i + 1] == '|') continue;
    result.push_back(out[i]);
  }
  return result;
}

// `normalized` receives the normalised line the cells point into.
std::optional<Row> SplitRepairRow(std::string_view line, std::string* normalized) {
  *normalized = NormalizeSourceLine(line);
  if (normalized->find('|') == std::string::npos) return std::nullopt;
  auto cells = SplitRow(*normalized);
  if (!cells || cells->size() < 2) return std::nullopt;
  return cells;
}

bool IsNoisyRow(const Row& cells) {
  if (IsSeparatorRow(cells)) return false;
  for (std::string_view cell : cells) {
    if (!cell.empty() && DetectChartCellRepetition(cell)) return true;
  }
  return false;
}

// Blocks of rows; the cells point into *storage (one normalised line per input line).
std::vector<std::vector<Row>> TableBlocks(std::string_view content,
                                          std::vector<std::string>* storage) {
  const std::vector<std::string_view> lines = pystr::SplitLines(content);
  storage->assign(lines.size(), std::string());  // never resized again: the views stay valid
  std::vector<std::vector<Row>> blocks;
  std::vector<Row> current;
  bool separator_seen = false;
  for (size_t index = 0; index < lines.size(); ++index) {
    auto cells = SplitRepairRow(lines[index], &(*storage)[index]);
    if (!cells) {
      if (!current.empty()) blocks.push_back(std::move(current));
      current.clear();
      separator_seen = false;
      continue;
    }
    if (current.empty()) {
      current.push_back(std::move(*cells));
      separator_seen = false;
      continue;
    }
    if (!separator_seen) {
      separator_seen = IsSeparatorRow(*cells);
      current.push_back(std::move(*cells));
      continue;
    }
    if (IsNoisyRow(*cells)) continue;
    current.push_back(std::move(*cells));
  }
  if (!current.empty()) blocks.push_back(std::move(current));
  return blocks;
}

std::string CleanCell(std::string_view cell) {
  std::string tabs_as_spaces(cell);
  for (char& c : tabs_as_spaces) {
    if (c == '\t') c = ' ';
  }
  const std::string collapsed = pystr::CollapseWhitespace(tabs_as_spaces);
  std::string cleaned(PythonStrip(collapsed));
  if (pystr::Count(cleaned, "`") % 2 == 1) cleaned.push_back('`');
  std::string out;
  out.reserve(cleaned.size());
  for (char c : cleaned) {
    if (c == '|') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

void AppendFormattedRow(const Row& cells, std::string* out) {
  if (!out->empty()) out->push_back('\n');
  *out += "| ";
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) *out += " | ";
    *out += CleanCell(cells[i]);
  }
  *out += " |";
}

void AppendSeparator(size_t columns, std::string* out) {
  *out += "\n| ";
  for (size_t i = 0; i < columns; ++i) *out += i > 0 ? " | ---" : "---";
  *out += " |";
}

// Header, separator, data rows [first, last).
std::string FormatTable(const Row& header, const std::vector<Row>& rows, size_t first,
                        size_t last) {
  std::string out;
  AppendFormattedRow(header, &out);
  AppendSeparator(header.size(), &out);
  for (size_t i = first; i < last; ++i) AppendFormattedRow(rows[i], &out);
  return out;
}

bool HasPipeBoundaries(std::string_view line) {
  const std::string_view s = PythonStrip(line);
  return !s.empty() && s.front() == '|' && s.back() == '|';
}

bool IsValidRepairedTable(std::string_view table) {
  const auto lines = pystr::SplitLines(PythonStrip(table));
  if (lines.size() < 3) return false;
  const auto header = SplitRow(lines[0]);
  const auto separator = SplitRow(lines[1]);
  if (!header || !separator || !IsSeparatorRow(*separator)) return false;
  if (!HasPipeBoundaries(lines[0]) || !HasPipeBoundaries(lines[1])) return false;
  if (header->size() != separator->size()) return false;
  for (size_t i = 2; i < lines.size(); ++i) {
    const auto row = SplitRow(lines[i]);
    if (!row || !HasPipeBoundaries(lines[i]) || row->size() != header->size()) return false;
  }
  return true;
}

using Score = std::tuple<size_t, size_t, size_t>;

Score TableScore(std::string_view table) {
  const auto lines = pystr::SplitLines(table);
  const auto first = lines.empty() ? std::nullopt : SplitRow(lines[0]);
  return {lines.size(), first ? first->size() : 0, pystr::Length(table)};
}

// Keeps the first candidate of the greatest score.
class BestTable {
 public:
  void Offer(std::string candidate) {
    if (!IsValidRepairedTable(candidate)) return;
    const Score score = TableScore(candidate);
    if (!best_.empty() && !(score > best_score_)) return;
    best_score_ = score;
    best_ = std::move(candidate);
  }
  std::string Take() { return std::move(best_); }

 private:
  std::string best_;
  Score best_score_{};
};

}  // namespace

std::optional<std::vector<std::string>> SplitChartMarkdownRow(std::string_view line) {
  const auto cells = SplitRow(line);
  if (!cells) return std::nullopt;
  return std::vector<std::string>(cells->begin(), cells->end());
}

bool IsChartSeparatorRow(const std::vector<std::string>& cells) { return IsSeparatorRow(cells); }

std::optional<std::string> DetectChartCellRepetition(std::string_view cell) {
  const size_t length = pystr::Length(cell);
  const size_t double_colons = pystr::Count(cell, "::");
  const size_t semicolons = pystr::Count(cell, ";");
  if (length > kChartCellMaxLength || double_colons > kChartCellMaxDoubleColons ||
      semicolons > kChartCellMaxSemicolons) {
    return "content_repetition_cell_overlength: len=" + std::to_string(length) +
           ", double_colon=" + std::to_string(double_colons) +
           ", semicolon=" + std::to_string(semicolons);
  }
  std::unordered_map<std::string, size_t> counts;
  size_t start = 0;
  for (size_t i = 0; i <= cell.size();) {
    size_t delimiter = 0;
    if (i == cell.size()) {
      delimiter = 1;  // the end closes the last fragment
    } else if (cell[i] == ':' && i + 1 < cell.size() && cell[i + 1] == ':') {
      delimiter = 2;
    } else if (cell[i] == ';' || cell[i] == ',' || cell[i] == '|') {
      delimiter = 1;
    }
    if (delimiter == 0) {
      ++i;
      continue;
    }
    const std::string normalized =
        pystr::Lower(PythonStrip(pystr::CollapseWhitespace(cell.substr(start, i - start))));
    if (pystr::Length(normalized) >= 3 && ++counts[normalized] >= kChartFragmentRepeatMin) {
      return "content_repetition_phrase_segment: fragment " + PythonRepr(normalized) + " repeats " +
             std::to_string(counts[normalized]) + " times";
    }
    i += delimiter;
    start = i;
  }
  return std::nullopt;
}

std::vector<std::string> DetectChartRepetition(std::string_view content) {
  std::vector<std::string> errors;
  if (content.find("\\|") != std::string_view::npos) errors.emplace_back("has_pipe_escape");

  for (size_t i = 0; i < content.size(); ++i) {
    if (content[i] != '\n') continue;
    size_t end = i;
    while (end < content.size() && content[end] == '\n') ++end;
    if (end - i >= kChartMinNewlineRun) {
      errors.push_back("content_repetition_newline: " + std::to_string(end - i) +
                       " consecutive newlines at line " + std::to_string(LineNumberAt(content, i)));
      break;
    }
    i = end;
  }

  if (auto repeat = WholeContentRepeat(content)) {
    errors.push_back("content_repetition_whole_content: content repeats " +
                     std::to_string(repeat->second) +
                     " times, repeated_unit_len=" + std::to_string(repeat->first));
  }

  for (size_t i = 0; i < content.size();) {
    if (!IsAsciiAlnum(content[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < content.size() && content[end] == content[i]) ++end;
    if (end - i >= kChartMinCharRun) {
      errors.push_back("content_repetition_repeated_char: character " +
                       PythonRepr(content.substr(i, 1)) + " repeats " + std::to_string(end - i) +
                       " times at line " + std::to_string(LineNumberAt(content, i)));
      break;
    }
    i = end;
  }

  if (auto cell = DetectCellPattern(content)) errors.push_back(std::move(*cell));

  // content.strip("\n"), then trimmed lines.
  std::string_view inner = content;
  while (!inner.empty() && inner.front() == '\n') inner.remove_prefix(1);
  while (!inner.empty() && inner.back() == '\n') inner.remove_suffix(1);
  std::vector<std::string_view> lines = pystr::SplitLines(inner);
  for (std::string_view& line : lines) line = PythonStrip(line);
  if (auto run = ConsecutiveLines(lines)) errors.push_back(std::move(*run));
  if (auto same = SameLineManyTimes(lines)) errors.push_back(std::move(*same));

  std::string without_separators;
  bool first = true;
  for (std::string_view line : pystr::SplitLines(content)) {
    if (IsSeparatorLine(line)) continue;
    if (!first) without_separators.push_back('\n');
    without_separators += line;
    first = false;
  }
  if (auto tokens = TokenRun(without_separators)) errors.push_back(std::move(*tokens));
  return errors;
}

std::string ExtractLargestChartTable(std::string_view content) {
  BestTable best;
  std::vector<std::string> storage;
  for (const std::vector<Row>& rows : TableBlocks(content, &storage)) {
    // (a) a header row before each separator row.
    for (size_t sep = 1; sep < rows.size(); ++sep) {
      if (!IsSeparatorRow(rows[sep])) continue;
      const Row& header = rows[sep - 1];
      if (header.size() < 2 || IsSeparatorRow(header)) continue;
      size_t end = sep + 1;
      while (end < rows.size() && !IsSeparatorRow(rows[end]) && rows[end].size() == header.size()) {
        ++end;
      }
      if (end > sep + 1) best.Offer(FormatTable(header, rows, sep + 1, end));
    }
    // (b) runs of rows with one cell count, the first as header.
    size_t index = 0;
    while (index < rows.size()) {
      if (IsSeparatorRow(rows[index]) || rows[index].size() < 2) {
        ++index;
        continue;
      }
      size_t next = index + 1;
      while (next < rows.size() && !IsSeparatorRow(rows[next]) &&
             rows[next].size() == rows[index].size()) {
        ++next;
      }
      if (next - index >= 2) best.Offer(FormatTable(rows[index], rows, index + 1, next));
      index = next;
    }
  }
  return best.Take();
}

std::string RepairChartRepetition(std::string_view content) {
  if (DetectChartRepetition(content).empty()) return std::string(content);
  std::string table = ExtractLargestChartTable(content);
  return table.empty() ? std::string(content) : table;
}

}  // namespace mineru::pipeline
