// SPDX-License-Identifier: Apache-2.0
#include "pipeline/cross_page_tables.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/html_table.h"
#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

// Blocks that may stand between a table and the page edge (mineru-vl-utils
// SKIP_BETWEEN_TABLE_TYPES): table_caption, table_footnote, image_caption, image_footnote,
// header, footer, page_number, page_footnote. Every other type ends the scan, including the
// generic caption and footnote types and aside_text.
bool IsSkippedAtPageEdge(BlockType type) {
  switch (type) {
    case BlockType::kTableCaption:
    case BlockType::kTableFootnote:
    case BlockType::kImageCaption:
    case BlockType::kImageFootnote:
    case BlockType::kHeader:
    case BlockType::kFooter:
    case BlockType::kPageNumber:
    case BlockType::kPageFootnote:
      return true;
    default:
      return false;
  }
}

std::optional<size_t> LastTable(const std::vector<ContentBlock>& blocks) {
  for (size_t i = blocks.size(); i-- > 0;) {
    if (blocks[i].type == BlockType::kTable) return i;
    if (!IsSkippedAtPageEdge(blocks[i].type)) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<size_t> FirstTable(const std::vector<ContentBlock>& blocks) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].type == BlockType::kTable) return i;
    if (!IsSkippedAtPageEdge(blocks[i].type)) return std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::string> TextsOf(const std::vector<RenderedSegment>& segments) {
  std::vector<std::string> texts;
  for (const RenderedSegment& segment : segments) texts.push_back(segment.text);
  return texts;
}

// The prompt for one pair, or nullopt (mineru-vl-utils _prepare_merge_tasks and
// _build_boundary_row_context).
std::optional<TableMergeCandidate> CandidateFor(const ContentBlock& upper,
                                                const ContentBlock& lower) {
  // The client's tables are HTML by now; nested tables are read the way BeautifulSoup lists them.
  const HtmlTableOptions options{.allow_nested_tables = true};
  std::optional<TableState> state1 = BuildTableState(*upper.content, options);
  std::optional<TableState> state2 = BuildTableState(*lower.content, options);
  if (!state1 || !state2) return std::nullopt;
  if (!CanMergeByStructure(*state2, *state1, lower.bbox, upper.bbox)) return std::nullopt;
  // The header rows here are not expanded over rowspans (unlike MinerU's own merge).
  const size_t header_rows = DetectHeaderRows(*state1, *state2);
  if (!state1->scan.last_data_row || header_rows >= state2->front_metrics.size()) {
    return std::nullopt;
  }
  const std::vector<RenderedSegment> last =
      RenderedSegments(state1->table.rows, state1->scan.last_data_row->row);
  const std::vector<RenderedSegment> first =
      RenderedSegments(state2->table.rows, state2->front_metrics[header_rows].row);
  if (last.empty() || first.empty() || last.size() != first.size()) return std::nullopt;
  TableMergeCandidate candidate;
  candidate.prompt = CellMergePrompt(TextsOf(last), TextsOf(first));
  for (const RenderedSegment& segment : last) {
    candidate.prev_segments.emplace_back(segment.start_col, segment.end_col);
  }
  return candidate;
}

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// json.loads of a `\[[\s\d,]+\]` match as a list of 0/1: nullopt for invalid JSON, an empty
// list, or a value other than 0 and 1.
std::optional<std::vector<int>> DecodeFlags(std::string_view json) {
  size_t pos = 1;  // after '['
  auto skip_space = [&] {
    while (pos < json.size() && IsJsonSpace(json[pos])) ++pos;
  };
  std::vector<int> flags;
  skip_space();
  if (pos < json.size() && json[pos] == ']') return std::nullopt;  // []
  while (true) {
    skip_space();
    const size_t start = pos;
    while (pos < json.size() && json[pos] >= '0' && json[pos] <= '9') ++pos;
    const std::string_view number = json.substr(start, pos - start);
    if (number.empty()) return std::nullopt;
    if (number.size() > 1 && number[0] == '0') return std::nullopt;  // JSON forbids leading zeros
    if (number != "0" && number != "1") return std::nullopt;         // a valid int, not a flag
    flags.push_back(number == "1" ? 1 : 0);
    skip_space();
    if (pos >= json.size()) return std::nullopt;
    if (json[pos] == ']') return flags;
    if (json[pos] != ',') return std::nullopt;
    ++pos;
  }
}

// Python's `[\s\d,]` for the code point at s[pos]: its byte length, 0 when it is outside.
size_t ClassLength(std::string_view s, size_t pos) {
  if (s[pos] == ',') return 1;
  if (size_t n = PythonSpaceLength(s, pos)) return n;
  char32_t cp = 0;
  const size_t n = text::WellFormedLength(s, pos, &cp);
  return n > 0 && IsPythonDecimal(cp) ? n : 0;
}

}  // namespace

std::string CellMergePrompt(const std::vector<std::string>& last_row,
                            const std::vector<std::string>& first_row) {
  return "Please merge the next two tables.\n\n"
         "## Table 1 (Previous Page - Last Table)\n\n"
         "**Caption:** (No caption)\n"
         "**Last Row(s) Data:**\n[" +
         PythonListRepr(last_row) +
         "]\n\n---\n\n"
         "## Table 2 (Current Page - First Table)\n\n"
         "**Caption:** (No caption)\n"
         "**First Data Row(s):**\n[" +
         PythonListRepr(first_row) + "]";
}

std::vector<TableMergeCandidate> FindCrossPageTableCandidates(
    const std::vector<std::vector<ContentBlock>>& pages) {
  std::vector<TableMergeCandidate> candidates;
  for (size_t page = 1; page < pages.size(); ++page) {
    const std::vector<ContentBlock>& previous = pages[page - 1];
    const std::vector<ContentBlock>& current = pages[page];
    std::optional<size_t> upper = LastTable(previous);
    if (!upper) continue;
    std::optional<size_t> lower = FirstTable(current);
    if (!lower) continue;
    const ContentBlock& upper_block = previous[*upper];
    const ContentBlock& lower_block = current[*lower];
    if (!upper_block.content || upper_block.content->empty() || !lower_block.content ||
        lower_block.content->empty()) {
      continue;
    }
    std::optional<TableMergeCandidate> candidate = CandidateFor(upper_block, lower_block);
    if (!candidate) continue;
    candidate->upper_page = page - 1;
    candidate->upper_block = *upper;
    candidate->lower_page = page;
    candidate->lower_block = *lower;
    candidates.push_back(std::move(*candidate));
  }
  return candidates;
}

std::optional<std::vector<int>> ParseCellMergeAnswer(std::string_view answer,
                                                     size_t segment_count) {
  // re.search: the leftmost '[' followed by a run of class characters and then ']' (the class
  // has no ']', so the run is maximal and the match is unique for its '[').
  for (size_t open = answer.find('['); open != std::string_view::npos;
       open = answer.find('[', open + 1)) {
    size_t pos = open + 1;
    while (pos < answer.size()) {
      const size_t n = ClassLength(answer, pos);
      if (n == 0) break;
      pos += n;
    }
    if (pos == open + 1 || pos >= answer.size() || answer[pos] != ']') continue;
    std::optional<std::vector<int>> flags = DecodeFlags(answer.substr(open, pos + 1 - open));
    if (!flags || flags->size() != segment_count) return std::nullopt;
    return flags;
  }
  return std::nullopt;
}

std::vector<int> ExpandCellMerge(const std::vector<int>& flags,
                                 const std::vector<std::pair<int, int>>& segments) {
  int width = 0;
  for (const auto& [start, end] : segments) width = std::max(width, end);
  std::vector<int> expanded(static_cast<size_t>(width), 0);
  for (size_t i = 0; i < flags.size() && i < segments.size(); ++i) {
    if (flags[i] != 1) continue;
    const int start = std::max(segments[i].first, 0);
    const int end = std::min(segments[i].second, width);
    for (int c = start; c < end; ++c) expanded[static_cast<size_t>(c)] = 1;
  }
  return expanded;
}

}  // namespace mineru::pipeline
