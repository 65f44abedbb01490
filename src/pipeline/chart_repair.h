// SPDX-License-Identifier: Apache-2.0
// Repair of a chart's Markdown table when the model fell into a repetition loop
// (mineru-vl-utils 1.2.1 post_process/chart_invalid_repetition.py,
// try_fix_chart_invalid_repetition). Detection finds the loop; repair keeps the largest table
// that is still well formed. Lengths are in code points, "trim" is Python's str.strip() and
// lines are str.splitlines() lines, as in the client. Every function is linear in its input.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mineru::pipeline {

// Thresholds of the detectors (the client's constants).
inline constexpr size_t kChartMinNewlineRun = 5;          // "\n" x 5 in a row
inline constexpr size_t kChartMinWholeRepeatLength = 80;  // collapsed content length
inline constexpr size_t kChartMinCharRun = 20;            // one ASCII letter/digit x 20
inline constexpr size_t kChartCellMaxLength = 300;
inline constexpr size_t kChartCellMaxDoubleColons = 20;
inline constexpr size_t kChartCellMaxSemicolons = 30;
inline constexpr size_t kChartFragmentRepeatMin = 8;
inline constexpr size_t kChartMinLongLine = 30;  // "long" lines for detectors 6 and 7
inline constexpr size_t kChartMinSameLineCount = 4;
inline constexpr size_t kChartMinTokenRun = 8;

// The client's Markdown row split: trim; no '|' (or nothing left) -> nullopt; one leading and
// one trailing '|' removed; split at '|' outside `backtick` spans, a backslash keeping itself
// and protecting the next character; cells trimmed.
std::optional<std::vector<std::string>> SplitChartMarkdownRow(std::string_view line);

// Non-empty, and every cell with its spaces removed is `:?-{3,}:?`.
bool IsChartSeparatorRow(const std::vector<std::string>& cells);

// Why a data cell (already trimmed) looks like a repetition loop, or nullopt:
//  "content_repetition_cell_overlength: len=L, double_colon=D, semicolon=S" when L > 300,
//    D > 20 or S > 30 ("::" and ";" counted without overlap);
//  "content_repetition_phrase_segment: fragment 'F' repeats 8 times" when a fragment between
//    the separators "::", ";", "," and "|" (whitespace collapsed, trimmed, lower-cased; shorter
//    than 3 code points ignored) reaches its 8th occurrence. F is Python's repr() of it.
std::optional<std::string> DetectChartCellRepetition(std::string_view cell);

// The detectors, in this order; each contributes at most one message (the first hit):
//  1. "has_pipe_escape": the content contains `\|`.
//  2. "content_repetition_newline: N consecutive newlines at line L": a run of >= 5 '\n'.
//  3. "content_repetition_whole_content: content repeats C times, repeated_unit_len=U": the
//     content with whitespace runs collapsed to one space and trimmed is >= 80 long and is its
//     shortest period U repeated C >= 2 times.
//  4. "content_repetition_repeated_char: character 'c' repeats N times at line L": one ASCII
//     letter or digit >= 20 times in a row.
//  5. DetectChartCellRepetition()'s message + " at line L cell K", for the data rows of a
//     table (a run of row lines: header, rows up to a separator row, then data rows).
//  6. "content_repetition_consecutive_line: line I repeats N times": over the trimmed lines
//     of the content less leading/trailing '\n', a run of N >= 3 equal non-empty lines, or
//     of N >= 2 when the line is >= 30 long.
//  7. "content_repetition_same_line_many_times: same line appears N times at lines P1,P2,..."
//     (at most ten positions): a trimmed line >= 30 long, not a separator row, seen >= 4 times.
//  8. "content_repetition_single_token: token 'T' repeats N times at token I": over the
//     content less its separator lines, tokens are [A-Za-z0-9]+([-_./][A-Za-z0-9]+)* or any
//     other single non-space code point; the same token (case-insensitive) >= 8 times in a row.
// Line numbers are 1-based; 'c', 'T' are Python repr()s. Empty result: no repetition.
std::vector<std::string> DetectChartRepetition(std::string_view content);

// The largest well-formed table in the content, re-emitted as `| c1 | c2 |` lines with a
// `| --- | --- |` separator; "" when there is none. Lines are normalised first (trim, U+FF5C
// and U+00A6 -> '|', `\|` -> '|'); runs of lines with >= 2 cells form blocks, and inside a block
// a row after the first separator row whose cell fails DetectChartCellRepetition() is dropped.
// Candidates per block: (a) each separator row with a non-separator row of >= 2 cells before it,
// that row as header, the following rows of the header's cell count up to the next separator as
// data (>= 1 needed); (b) each maximal run of >= 2 non-separator rows of one cell count, the
// first as header. Cells are written with tabs and whitespace runs as one space, trimmed, a
// backtick appended to an odd number of them, and '|' as `\|`. A candidate must re-parse as a
// table (>= 3 lines, all bounded by '|', equal cell counts); the winner is the greatest by
// (line count, header cells, length), the earlier one on ties.
std::string ExtractLargestChartTable(std::string_view content);

// DetectChartRepetition() empty -> content unchanged; else ExtractLargestChartTable(), or the
// content unchanged when that finds no table.
std::string RepairChartRepetition(std::string_view content);

}  // namespace mineru::pipeline
