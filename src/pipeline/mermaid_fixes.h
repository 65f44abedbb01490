// SPDX-License-Identifier: Apache-2.0
// The repairs the current client applies to a flowchart's Mermaid code (mineru-vl-utils 1.2.1
// post_process/mermaid_repetition.py, mermaid_node_id_legalize.py,
// mermaid_invalid_edge_lines.py, mermaid_invalid_subgraph_lines.py, and
// image_analysis_postprocess.py extract_and_validate_mermaid_strict).
//
// Conventions shared by all of them, as in the client: lines are Python str.splitlines() lines
// and are joined back with "\n" (so "\r\n" becomes "\n"); a fixer that rebuilds lines appends
// one "\n" when its input ended with '\n'; "trim" is str.strip(); whitespace is Python's \s;
// an "id character" is [A-Za-z0-9_-] or a code point in U+4E00..U+9FA5; lengths are in code
// points. Every function is total and linear in its input (the client's regexes are quadratic on
// some hostile inputs; these scanners are not).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mineru::pipeline {

// One suspected repetition loop. `subject` is the node id (its first 80 code points for the
// node-id kinds), the edge "SRC-->DST", or "GLOBAL", "EDGE_LABEL", "EDGE_LABEL_CHAIN".
struct MermaidIssue {
  std::string subject;
  std::string kind;
  int count = 0;
  bool operator==(const MermaidIssue&) const = default;
};

// Thresholds (the client's defaults).
inline constexpr int kMermaidMinConsecutiveRepeats = 8;
inline constexpr int kMermaidMinTotalLineRepeats = 20;
inline constexpr size_t kMermaidMaxLabelLength = 2000;
inline constexpr int kMermaidMinSameEdgeRepeats = 8;
inline constexpr size_t kMermaidMaxNodeIdLength = 128;

// detect_mermaid_repetition_issues. "Normalised" text has every run of backslashes followed by
// 'n' and every <br>, <br/>, <br /> (any case) replaced by a newline. Issues, in this order:
//  1. For each node `ID["LABEL"]` (ID a run of id characters, optional whitespace, LABEL with
//     backslash escapes, across lines): the node-id issues of ID (below), then over the trimmed
//     non-empty lines of the normalised LABEL the first of: a run of >= 8 equal lines
//     (consecutive_line_repetition, count = run), a line seen >= 20 times
//     (overall_line_repetition, count = occurrences), a label >= 2000 long whose distinct lines
//     are <= 0.2 of its lines (long_low_diversity_label, count = lines).
//     Node-id issues of an id: longer than 128 (oversized_node_id, count = length); the most
//     frequent two-letter token (non-overlapping [A-Z][a-z] or [A-Z]{2}; when there is none,
//     every two-letter window of the runs of >= 8 ASCII letters) seen >= 8 times
//     (node_id_token_repetition, count = occurrences).
//  2. Over the normalised lines, simple edges `SRC --> [|label|] DST [shape]` (the whole line;
//     shape one of [..], (..), {..}): the same SRC-->DST >= 8 times (same_edge_repetition),
//     in order of first appearance.
//  3. Normalised lines with "-->": with two or more arrows, the node-id issues of every
//     endpoint (the leading id characters of each segment, after an optional |label|); with one,
//     when the line is a simple edge, those of SRC and DST.
//  4. Normalised lines `SRC --> DST["LABEL"]`: every trimmed label used >= 8 times
//     (EDGE_LABEL, same_label_edge_repetition), then the longest run of consecutive such lines
//     with one label when >= 8 (EDGE_LABEL_CHAIN, consecutive_same_label_edges).
//  5. Over the normalised lines that are not structure (empty, or starting with "graph ",
//     "flowchart ", "subgraph ", "direction ", "%%", or equal to "end", case-insensitive, or
//     containing "-->"), with leading []()"'> and whitespace and trailing []()"', . ; : and
//     whitespace removed and whitespace runs collapsed: a run of >= 8 equal lines
//     (GLOBAL, raw_consecutive_line_repetition), the most frequent line seen >= 20 times
//     (GLOBAL, raw_overall_line_repetition).
std::vector<MermaidIssue> DetectMermaidRepetition(std::string_view code);

// try_fix_mermaid_node_id_legalization. Declared ids: lines whose trimmed form starts with
// [A-Za-z_][A-Za-z0-9_]*, optional whitespace and one of [ ( {. Every line with "-->" that does
// not start with "%%" and has no bidirectional arrow (<, -, -, > with optional whitespace
// between) is split into statements at ';' and each statement into a chain at "-->", both only
// outside double quotes (backslash escapes), brackets []{}() and |label| spans; a trailing ';' is
// kept. The line becomes two spaces + the statements joined by "; ". A chain is written as
// `E0 --> T1 --> T2`, a target that starts with |label| as `-->|label| T` (the label without
// parentheses, runs of spaces as one, trimmed). An endpoint without any of [](){}"| that is not
// ^[A-Za-z_][A-Za-z0-9_]*$ gets an id: its first ASCII alphanumeric run followed by the others
// capitalised (else its underscores, else "node"), "n" prepended before a leading digit, 2, 3,
// ... appended on collision with any declared or assigned id. Its first use is written
// `ID["original"]`, later uses `ID`.
std::string LegalizeMermaidNodeIds(std::string_view code);

// try_fix_mermaid_invalid_edge_lines: drops each line that is not a "%%" comment, contains
// "-->" and '|', has no labelled edge (`-->`, whitespace, `|label|`, whitespace, non-space),
// has exactly one '|' outside single or double quotes (backslash escapes) and whose trimmed form
// has "-->" followed, with no '|' between, by its last '|' and then at least one character.
std::string RemoveInvalidMermaidEdgeLines(std::string_view code);

// try_fix_mermaid_invalid_subgraph_lines: for each line `INDENT subgraph BODY` (BODY trimmed):
// kept when BODY starts with a valid id followed by optional whitespace and [ or (, or when its
// first whitespace-separated word is a valid id ([A-Za-z_][A-Za-z0-9_]*); both record the id.
// Otherwise the id is BODY with runs outside [A-Za-z0-9_] as '_', repeated '_' collapsed, '_'
// trimmed, "sg" if empty, "sg_" prepended before a digit, "_2", "_3", ... appended on collision,
// and the line becomes `INDENTsubgraph ID["BODY"]` with '"' in BODY written as `\"`.
std::string FixMermaidSubgraphIds(std::string_view code);

// extract_and_validate_mermaid_strict. Blank -> "". The code is the trimmed inner text of the
// first ```mermaid ... ``` block, else of the first ``` ... ``` block, else the trimmed content;
// a leading "mermaid" (any case) is dropped. A leading grap/grapg/graphh or flowchar/flowchartt
// word (any case) is corrected. Arrows: <-->-like arrows are protected, then `-\s+->`, `--\s+>`,
// `-\s+-\s+>` become "-->", and whitespace + "->" + whitespace not preceded by '-' or '=' becomes
// " --> ". Nodes: every `NAME[TEXT]` (NAME id-character words separated by spaces/tabs, TEXT up
// to the first ']', across lines) becomes NAME (space runs as '_') + `["TEXT"]` with one pair of
// enclosing quotes removed, '"' as &quot; and newlines as <br>; unchanged when NAME starts with
// "subgraph " or TEXT with `"[`; `NAME[]` when TEXT is empty. Result: "```mermaid\n" + code +
// "\n```".
std::string ExtractMermaidStrict(std::string_view content);

// The flowchart normalisation of image analysis: "" when DetectMermaidRepetition() reports any
// issue; else LegalizeMermaidNodeIds, RemoveInvalidMermaidEdgeLines and FixMermaidSubgraphIds in
// turn; then always ExtractMermaidStrict.
std::string NormalizeFlowchart(std::string_view content);

}  // namespace mineru::pipeline
