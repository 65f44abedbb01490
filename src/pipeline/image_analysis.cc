// SPDX-License-Identifier: Apache-2.0
#include "pipeline/image_analysis.h"

#include <cstddef>
#include <vector>

#include "pipeline/chart_repair.h"
#include "pipeline/mermaid_fixes.h"
#include "pipeline/python_str.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline {
namespace {

constexpr std::string_view kContentStart = "<|content_start|>";
constexpr std::string_view kContentEnd = "<|content_end|>";

size_t SkipSpace(std::string_view s, size_t pos) {
  while (size_t n = PythonSpaceLength(s, pos)) pos += n;
  return pos;
}

std::string TaggedField(std::string_view text, std::string_view start_tag,
                        std::string_view end_tag) {
  const size_t start = text.find(start_tag);
  if (start == std::string_view::npos) return "";
  const size_t from = start + start_tag.size();
  const size_t end = text.find(end_tag, from);
  if (end == std::string_view::npos) return "";
  return std::string(PythonStrip(text.substr(from, end - from)));
}

// ^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$ (a line holds no '\n'). After the optional
// leading '|', cells and single '|'s alternate; a '|' followed only by whitespace is the
// optional trailing one, so the parse is deterministic.
bool IsSeparatorLine(std::string_view line) {
  size_t i = SkipSpace(line, 0);
  if (i < line.size() && line[i] == '|') i = SkipSpace(line, i + 1);
  size_t cells = 0;
  while (true) {
    if (i < line.size() && line[i] == ':') ++i;
    size_t dashes = 0;
    while (i < line.size() && line[i] == '-') ++i, ++dashes;
    if (dashes < 3) return false;
    if (i < line.size() && line[i] == ':') ++i;
    i = SkipSpace(line, i);
    ++cells;
    if (i == line.size()) return cells >= 2;
    if (line[i] != '|') return false;
    i = SkipSpace(line, i + 1);
    if (i == line.size()) return cells >= 2;
  }
}

// _count_markdown_table_columns.
size_t ColumnCount(std::string_view line) {
  std::string_view s = PythonStrip(line);
  if (!s.empty() && s.front() == '|') s.remove_prefix(1);
  if (!s.empty() && s.back() == '|') s.remove_suffix(1);
  return pystr::Count(s, "|") + 1;
}

}  // namespace

bool HasMalformedMarkdownTable(std::string_view content) {
  const std::vector<std::string_view> lines = pystr::SplitLines(content);
  const size_t n = lines.size();
  std::vector<char> blank(n), row(n), separator(n);
  std::vector<size_t> columns(n);
  size_t row_lines = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view stripped = PythonStrip(lines[i]);
    blank[i] = stripped.empty();
    columns[i] = ColumnCount(lines[i]);
    row[i] = !stripped.empty() && stripped.find('|') != std::string_view::npos && columns[i] >= 2;
    separator[i] = IsSeparatorLine(lines[i]);
    row_lines += row[i];
  }
  // same_until[i]: the first j > i where the run of row lines with i's column count ends
  // (a non-row line or another count), so each separator's data rows are checked in O(1)
  // (the client rescans them per separator, quadratic on a column of separator lines).
  std::vector<size_t> same_until(n + 1, n);
  for (size_t i = n; i-- > 0;) {
    same_until[i] = (i + 1 < n && row[i] && row[i + 1] && columns[i + 1] == columns[i])
                        ? same_until[i + 1]
                        : i + 1;
  }
  bool found_valid_table = false;
  for (size_t sep = 0; sep < n; ++sep) {
    if (!separator[sep]) continue;
    size_t header = sep;
    while (header > 0 && blank[header - 1]) --header;
    if (header == 0 || !row[header - 1]) return true;
    const size_t header_columns = columns[header - 1];
    if (header_columns < 2 || columns[sep] != header_columns) return true;
    const size_t first = sep + 1;
    if (first < n && row[first]) {
      if (columns[first] != header_columns) return true;
      const size_t end = same_until[first];
      if (end < n && row[end]) return true;  // a row line of another count
    }
    found_valid_table = true;
  }
  return row_lines >= 2 && !found_valid_table;
}

ImageAnalysis ParseImageAnalysis(std::string_view raw) {
  ImageAnalysis result;
  result.class_name = pystr::Lower(TaggedField(raw, "<|class_start|>", "<|class_end|>"));
  result.sub_class = pystr::Lower(TaggedField(raw, "<|sub_class_start|>", "<|sub_class_end|>"));
  result.caption = TaggedField(raw, "<|caption_start|>", "<|caption_end|>");
  std::string content = TaggedField(raw, kContentStart, kContentEnd);
  if (content.empty() && pystr::Count(raw, kContentStart) == 1 &&
      pystr::Count(raw, kContentEnd) == 0) {
    content = std::string(raw.substr(raw.find(kContentStart) + kContentStart.size()));
  }
  if (result.class_name == kImageClassChemical) {
    content.clear();
  } else if (result.class_name == kImageClassFlowchart) {
    content = NormalizeFlowchart(content);
  } else if (result.class_name == kImageClassChart) {
    content = RepairChartRepetition(content);
    if (!content.empty() && HasMalformedMarkdownTable(content)) content.clear();
  }
  result.content = std::move(content);
  return result;
}

}  // namespace mineru::pipeline
