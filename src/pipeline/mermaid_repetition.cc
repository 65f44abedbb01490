// SPDX-License-Identifier: Apache-2.0
// DetectMermaidRepetition (mineru-vl-utils 1.2.1 post_process/mermaid_repetition.py). The
// client's regexes are matched by hand-written scanners; where a regex could backtrack, the
// comments say why only one alternative can succeed.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pipeline/mermaid_fixes.h"
#include "pipeline/mermaid_text.h"

namespace mineru::pipeline {
namespace {

using mermaid::IdRunEnd;
using mermaid::IsAsciiLetter;
using mermaid::SkipSpace;

// Counts in first-appearance order (a Python dict), reporting the first key of the highest
// count as max(d.items(), key=count) does.
class OrderedCounter {
 public:
  int Add(std::string key) {
    auto [it, inserted] = index_.try_emplace(std::move(key), entries_.size());
    if (inserted) entries_.emplace_back(it->first, 0);
    return ++entries_[it->second].second;
  }
  bool empty() const { return entries_.empty(); }
  int MaxCount() const {
    int best = 0;
    for (const auto& entry : entries_) best = std::max(best, entry.second);
    return best;
  }
  const std::vector<std::pair<std::string, int>>& entries() const { return entries_; }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::pair<std::string, int>> entries_;
};

// re.sub(r"\\+n", "\n", s) then re.sub(r"<br\s*/?>", "\n", s, flags=re.IGNORECASE).
std::string NormalizeEscapedNewlines(std::string_view s) {
  std::string unescaped;
  unescaped.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '\\') {
      unescaped.push_back(s[i++]);
      continue;
    }
    size_t end = i;
    while (end < s.size() && s[end] == '\\') ++end;
    if (end < s.size() && s[end] == 'n') {
      unescaped.push_back('\n');
      i = end + 1;
    } else {
      unescaped.append(s.substr(i, end - i));
      i = end;
    }
  }
  std::string out;
  out.reserve(unescaped.size());
  const std::string_view u = unescaped;
  for (size_t i = 0; i < u.size();) {
    if (u[i] == '<' && i + 2 < u.size() && (u[i + 1] | 0x20) == 'b' && (u[i + 2] | 0x20) == 'r') {
      size_t j = SkipSpace(u, i + 3);
      if (j < u.size() && u[j] == '/') ++j;
      if (j < u.size() && u[j] == '>') {
        out.push_back('\n');
        i = j + 1;
        continue;
      }
    }
    out.push_back(u[i++]);
  }
  return out;
}

void AddNodeIdIssues(std::string_view id, std::vector<MermaidIssue>* issues) {
  if (id.empty()) return;
  const std::string subject(pystr::Prefix(id, 80));
  const size_t length = pystr::Length(id);
  if (length > kMermaidMaxNodeIdLength) {
    issues->push_back({subject, "oversized_node_id", static_cast<int>(length)});
  }
  // Two-character tokens: non-overlapping [A-Z][a-z] or [A-Z]{2}, left to right.
  auto is_upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  OrderedCounter tokens;
  for (size_t i = 0; i + 1 < id.size();) {
    if (is_upper(id[i]) && IsAsciiLetter(id[i + 1])) {
      tokens.Add(std::string(id.substr(i, 2)));
      i += 2;
    } else {
      ++i;
    }
  }
  if (tokens.empty()) {
    // Every two-letter window of the runs of >= 8 ASCII letters.
    for (size_t i = 0; i < id.size();) {
      if (!IsAsciiLetter(id[i])) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < id.size() && IsAsciiLetter(id[end])) ++end;
      if (end - i >= 8) {
        for (size_t k = i; k + 1 < end; ++k) tokens.Add(std::string(id.substr(k, 2)));
      }
      i = end;
    }
  }
  const int count = tokens.MaxCount();
  if (count >= kMermaidMinConsecutiveRepeats) {
    issues->push_back({subject, "node_id_token_repetition", count});
  }
}

// Longest run of equal adjacent lines (the first such run on ties); 0 for no lines.
int MaxConsecutiveRun(const std::vector<std::string>& lines) {
  int best = 0;
  for (size_t i = 0; i < lines.size();) {
    size_t end = i + 1;
    while (end < lines.size() && lines[end] == lines[i]) ++end;
    best = std::max(best, static_cast<int>(end - i));
    i = end;
  }
  return best;
}

void AddLabelIssues(std::string_view node, std::string_view raw_label,
                    std::vector<MermaidIssue>* issues) {
  const std::string label = NormalizeEscapedNewlines(raw_label);
  std::vector<std::string> lines;
  for (std::string_view line : pystr::SplitLines(label)) {
    const std::string_view trimmed = PythonStrip(line);
    if (!trimmed.empty()) lines.emplace_back(trimmed);
  }
  if (lines.empty()) return;
  if (int run = MaxConsecutiveRun(lines); run >= kMermaidMinConsecutiveRepeats) {
    issues->push_back({std::string(node), "consecutive_line_repetition", run});
    return;
  }
  OrderedCounter freq;
  for (const std::string& line : lines) freq.Add(line);
  if (int count = freq.MaxCount(); count >= kMermaidMinTotalLineRepeats) {
    issues->push_back({std::string(node), "overall_line_repetition", count});
    return;
  }
  const double unique_ratio =
      static_cast<double>(freq.entries().size()) / static_cast<double>(lines.size());
  if (pystr::Length(label) >= kMermaidMaxLabelLength && unique_ratio <= 0.2) {
    issues->push_back(
        {std::string(node), "long_low_diversity_label", static_cast<int>(lines.size())});
  }
}

// Section 1: every `ID\s*["LABEL"]` of _NODE_LABEL_RE, left to right. A match can start only
// at the start of an id run: the id is greedy and what follows it must be whitespace or '[',
// so every start inside a run meets the same continuation and fails with the run's first.
// The label is (?:[^"\\]|\\.)* up to an unescaped '"' that must be followed by ']';
// backtracking cannot help since a given-back position never holds an unescaped '"'.
void AddLabelledNodeIssues(std::string_view s, std::vector<MermaidIssue>* issues) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t run_end = IdRunEnd(s, i);
    if (run_end == i) {
      size_t len = 0;
      pystr::CodePointAt(s, i, &len);
      i += len;
      continue;
    }
    size_t j = SkipSpace(s, run_end);
    bool matched = false;
    if (j + 1 < s.size() && s[j] == '[' && s[j + 1] == '"') {
      size_t k = j + 2;
      while (k < s.size() && s[k] != '"') {
        if (s[k] == '\\') {
          if (k + 1 >= s.size()) break;
          size_t len = 0;
          pystr::CodePointAt(s, k + 1, &len);
          k += 1 + len;
        } else {
          ++k;
        }
      }
      if (k + 1 < s.size() && s[k] == '"' && s[k + 1] == ']') {
        const std::string_view node = s.substr(i, run_end - i);
        AddNodeIdIssues(node, issues);
        AddLabelIssues(node, s.substr(j + 2, k - j - 2), issues);
        i = k + 2;
        matched = true;
      }
    }
    if (!matched) i = run_end;
  }
}

// `^\s*SRC\s*-->`: the source id and the offset after the arrow. SRC is greedy over id
// characters, which include '-': it ends either at the run's end (followed by whitespace and
// "-->") or two characters earlier when the run ends in "--" and '>' follows; the two cannot
// both apply.
struct EdgeStart {
  std::string_view src;
  size_t after_arrow = 0;
};

std::optional<EdgeStart> MatchEdgeStart(std::string_view line) {
  const size_t begin = SkipSpace(line, 0);
  const size_t run_end = IdRunEnd(line, begin);
  if (run_end == begin) return std::nullopt;
  const size_t j = SkipSpace(line, run_end);
  if (line.substr(j, 3) == "-->") return EdgeStart{line.substr(begin, run_end - begin), j + 3};
  if (run_end >= begin + 3 && line.substr(run_end - 2, 3) == "-->") {
    return EdgeStart{line.substr(begin, run_end - 2 - begin), run_end + 1};
  }
  return std::nullopt;
}

// _EDGE_LINE_RE: `^\s*SRC\s*-->\s*(\|[^|]*\|\s*)?DST(\s*(\[[^\]]*\]|\([^)]*\)|\{[^}]*\}))?\s*$`.
std::optional<std::pair<std::string_view, std::string_view>> MatchSimpleEdge(
    std::string_view line) {
  const auto start = MatchEdgeStart(line);
  if (!start) return std::nullopt;
  size_t k = SkipSpace(line, start->after_arrow);
  if (k < line.size() && line[k] == '|') {
    const size_t close = line.find('|', k + 1);
    if (close == std::string_view::npos) return std::nullopt;
    k = SkipSpace(line, close + 1);
  }
  const size_t dst_end = IdRunEnd(line, k);
  if (dst_end == k) return std::nullopt;
  size_t t = SkipSpace(line, dst_end);
  if (t < line.size()) {
    const char open = line[t];
    const char close = open == '[' ? ']' : open == '(' ? ')' : open == '{' ? '}' : '\0';
    if (close == '\0') return std::nullopt;
    const size_t end = line.find(close, t + 1);
    if (end == std::string_view::npos) return std::nullopt;
    t = SkipSpace(line, end + 1);
    if (t != line.size()) return std::nullopt;
  }
  return std::make_pair(start->src, line.substr(k, dst_end - k));
}

// _EDGE_LABELED_RE: `^\s*SRC\s*-->\s*DST\s*\["LABEL"\]\s*$`, LABEL = (?:[^"\\]|\\\\.)*
// (a label backslash must come as a pair, which protects the character after it).
std::optional<std::string_view> MatchLabelledEdge(std::string_view line) {
  const auto start = MatchEdgeStart(line);
  if (!start) return std::nullopt;
  const size_t dst = SkipSpace(line, start->after_arrow);
  const size_t dst_end = IdRunEnd(line, dst);
  if (dst_end == dst) return std::nullopt;
  const size_t open = SkipSpace(line, dst_end);
  if (line.substr(open, 2) != "[\"") return std::nullopt;
  size_t k = open + 2;
  while (k < line.size() && line[k] != '"') {
    if (line[k] != '\\') {
      ++k;
      continue;
    }
    if (k + 2 >= line.size() || line[k + 1] != '\\' || line[k + 2] == '\n') return std::nullopt;
    size_t len = 0;
    pystr::CodePointAt(line, k + 2, &len);
    k += 2 + len;
  }
  if (k + 1 >= line.size() || line[k + 1] != ']') return std::nullopt;
  if (SkipSpace(line, k + 2) != line.size()) return std::nullopt;
  return line.substr(open + 2, k - open - 2);
}

// _extract_edge_endpoint_id: trim, drop a leading |label| and the whitespace after it, then
// the leading id run.
std::string_view EndpointId(std::string_view segment) {
  std::string_view s = PythonStrip(segment);
  if (!s.empty() && s[0] == '|') {
    const size_t close = s.find('|', 1);
    if (close != std::string_view::npos) s = s.substr(SkipSpace(s, close + 1));
  }
  return s.substr(0, IdRunEnd(s, 0));
}

void AddEdgeLineIssues(const std::vector<std::string_view>& lines,
                       std::vector<MermaidIssue>* issues) {
  for (std::string_view line : lines) {
    const std::string_view stripped = PythonStrip(line);
    const size_t arrows = pystr::Count(stripped, "-->");
    if (arrows == 0) continue;
    if (arrows >= 2) {
      size_t from = 0;
      while (true) {
        const size_t at = stripped.find("-->", from);
        AddNodeIdIssues(EndpointId(stripped.substr(from, at - from)), issues);
        if (at == std::string_view::npos) break;
        from = at + 3;
      }
      continue;
    }
    if (const auto edge = MatchSimpleEdge(line)) {
      AddNodeIdIssues(edge->first, issues);
      AddNodeIdIssues(edge->second, issues);
    }
  }
}

void AddSameLabelEdgeIssues(const std::vector<std::string_view>& lines,
                            std::vector<MermaidIssue>* issues) {
  OrderedCounter labels;
  std::optional<std::string> run_label;
  int run = 0;
  int best_run = 0;
  for (std::string_view line : lines) {
    const auto raw = MatchLabelledEdge(line);
    if (!raw) {
      run_label.reset();
      run = 0;
      continue;
    }
    const std::string label(PythonStrip(*raw));
    if (label.empty()) continue;
    labels.Add(label);
    if (run_label && *run_label == label) {
      ++run;
    } else {
      run_label = label;
      run = 1;
    }
    best_run = std::max(best_run, run);
  }
  for (const auto& [label, count] : labels.entries()) {
    if (count >= kMermaidMinSameEdgeRepeats) {
      issues->push_back({"EDGE_LABEL", "same_label_edge_repetition", count});
    }
  }
  if (best_run >= kMermaidMinSameEdgeRepeats) {
    issues->push_back({"EDGE_LABEL_CHAIN", "consecutive_same_label_edges", best_run});
  }
}

bool IsStructureLine(std::string_view line) {
  const std::string_view stripped = PythonStrip(line);
  if (stripped.empty()) return true;
  if (stripped.find("-->") != std::string_view::npos) return true;
  // Only ASCII letters can lower-case to the letters of these keywords.
  const std::string lowered = pystr::AsciiLower(stripped.substr(0, 10));
  const std::string_view l = lowered;
  return l.starts_with("graph ") || l.starts_with("flowchart ") || l.starts_with("subgraph ") ||
         l.starts_with("direction ") || l.starts_with("%%") || (stripped.size() == 3 && l == "end");
}

bool IsLeadingNoise(char c) {
  return c == '[' || c == ']' || c == '(' || c == ')' || c == '"' || c == '\'' || c == '>';
}

bool IsTrailingNoise(char c) {
  return c == '[' || c == ']' || c == '(' || c == ')' || c == '"' || c == '\'' || c == ',' ||
         c == '.' || c == ';' || c == ':';
}

// _normalize_free_text_line: trim, strip leading []()"'> and whitespace, trailing []()"',.;:
// and whitespace, collapse whitespace, trim.
std::string NormalizeFreeTextLine(std::string_view line) {
  std::string_view s = PythonStrip(line);
  size_t begin = 0;
  while (begin < s.size()) {
    if (IsLeadingNoise(s[begin])) {
      ++begin;
    } else if (size_t n = PythonSpaceLength(s, begin)) {
      begin += n;
    } else {
      break;
    }
  }
  s.remove_prefix(begin);
  while (!s.empty()) {
    if (IsTrailingNoise(s.back())) {
      s.remove_suffix(1);
      continue;
    }
    // s starts with neither noise nor whitespace, so this strip only drops trailing whitespace.
    const std::string_view trimmed = PythonStrip(s);
    if (trimmed.size() == s.size()) break;
    s = trimmed;
  }
  return std::string(PythonStrip(pystr::CollapseWhitespace(s)));
}

void AddRawLineIssues(const std::vector<std::string_view>& lines,
                      std::vector<MermaidIssue>* issues) {
  std::vector<std::string> kept;
  for (std::string_view line : lines) {
    if (IsStructureLine(line)) continue;
    std::string cleaned = NormalizeFreeTextLine(line);
    if (!cleaned.empty()) kept.push_back(std::move(cleaned));
  }
  if (kept.empty()) return;
  if (int run = MaxConsecutiveRun(kept); run >= kMermaidMinConsecutiveRepeats) {
    issues->push_back({"GLOBAL", "raw_consecutive_line_repetition", run});
  }
  OrderedCounter freq;
  for (const std::string& line : kept) freq.Add(line);
  if (int count = freq.MaxCount(); count >= kMermaidMinTotalLineRepeats) {
    issues->push_back({"GLOBAL", "raw_overall_line_repetition", count});
  }
}

}  // namespace

std::vector<MermaidIssue> DetectMermaidRepetition(std::string_view code) {
  std::vector<MermaidIssue> issues;
  AddLabelledNodeIssues(code, &issues);

  const std::string normalized = NormalizeEscapedNewlines(code);
  const std::vector<std::string_view> lines = pystr::SplitLines(normalized);
  OrderedCounter edges;
  for (std::string_view line : lines) {
    if (const auto edge = MatchSimpleEdge(line)) {
      edges.Add(std::string(edge->first) + "-->" + std::string(edge->second));
    }
  }
  for (const auto& [edge, count] : edges.entries()) {
    if (count >= kMermaidMinSameEdgeRepeats)
      issues.push_back({edge, "same_edge_repetition", count});
  }
  AddEdgeLineIssues(lines, &issues);
  AddSameLabelEdgeIssues(lines, &issues);
  AddRawLineIssues(lines, &issues);
  return issues;
}

}  // namespace mineru::pipeline
