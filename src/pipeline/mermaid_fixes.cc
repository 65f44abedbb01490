// SPDX-License-Identifier: Apache-2.0
// The Mermaid line fixers: node-id legalisation, invalid edge lines, subgraph ids (see
// mermaid_fixes.h). The repetition detector is mermaid_repetition.cc, the strict extraction
// mermaid_strict.cc.
#include "pipeline/mermaid_fixes.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pipeline/mermaid_text.h"

namespace mineru::pipeline {
namespace {

using mermaid::IsAsciiAlnum;
using mermaid::IsAsciiLetter;
using mermaid::IsValidId;
using mermaid::MatchBidirectionalArrow;
using mermaid::SkipSpace;

// Output lines joined with "\n", plus one "\n" when the input ended with '\n'.
class LineWriter {
 public:
  explicit LineWriter(std::string_view input) : input_(input) { out_.reserve(input.size()); }
  void Add(std::string_view line) {
    if (!first_) out_.push_back('\n');
    first_ = false;
    out_.append(line);
  }
  std::string Finish() {
    if (!input_.empty() && input_.back() == '\n') out_.push_back('\n');
    return std::move(out_);
  }

 private:
  std::string_view input_;
  std::string out_;
  bool first_ = true;
};

bool HasBidirectionalArrow(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (MatchBidirectionalArrow(line, i) != 0) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Node-id legalisation.

// Declared and assigned ids. Both sets only grow, so the next free numeric suffix of a base
// never decreases and is remembered (the client's linear search would be quadratic).
class IdRegistry {
 public:
  void Declare(std::string id) { declared_.insert(std::move(id)); }

  // _convert_endpoint on a trimmed endpoint.
  std::string Convert(std::string_view raw) {
    if (raw.empty() || raw.find_first_of("[](){}\"|") != std::string_view::npos || IsValidId(raw)) {
      return std::string(raw);
    }
    const std::string key(raw);
    auto mapped = id_map_.find(key);
    if (mapped == id_map_.end()) {
      std::string fixed = SanitizeNodeId(raw);
      if (IsTaken(fixed)) {
        const std::string base = fixed;
        int& next = next_suffix_.try_emplace(base, 2).first->second;
        while (IsTaken(base + std::to_string(next))) ++next;
        fixed = base + std::to_string(next);
        ++next;
      }
      assigned_.insert(fixed);
      mapped = id_map_.emplace(key, std::move(fixed)).first;
    }
    const std::string& fixed = mapped->second;
    if (declared_.insert(fixed).second) return fixed + "[\"" + key + "\"]";
    return fixed;
  }

 private:
  bool IsTaken(const std::string& id) const {
    return declared_.count(id) > 0 || assigned_.count(id) > 0;
  }

  // _sanitize_node_id: first ASCII alphanumeric run + the others capitalised; without any,
  // the underscores; "node" if empty; "n" before a leading digit.
  static std::string SanitizeNodeId(std::string_view raw) {
    std::string id;
    bool first = true;
    for (size_t i = 0; i < raw.size();) {
      if (!IsAsciiAlnum(raw[i])) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < raw.size() && IsAsciiAlnum(raw[end])) ++end;
      std::string part(raw.substr(i, end - i));
      if (!first) {  // str.capitalize()
        for (char& c : part) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
        if (part[0] >= 'a' && part[0] <= 'z') part[0] = static_cast<char>(part[0] - 32);
      }
      id += part;
      first = false;
      i = end;
    }
    if (first) {
      for (char c : raw) {
        if (c == '_') id.push_back(c);
      }
    }
    if (id.empty()) id = "node";
    if (id[0] >= '0' && id[0] <= '9') id = "n" + id;
    return id;
  }

  std::unordered_set<std::string> declared_;
  std::unordered_map<std::string, std::string> id_map_;
  std::unordered_set<std::string> assigned_;
  std::unordered_map<std::string, int> next_suffix_;
};

// Tracks whether a position is "top level": outside double quotes (with backslash escapes
// inside them), brackets []{}() and |label| spans (a '|' toggles only outside brackets).
class TopLevelScanner {
 public:
  // Consumes s[i]; returns whether s[i] itself is at top level and not a quote, bracket or
  // pipe (so may be a separator).
  bool Step(char ch) {
    if (escaped_) {
      escaped_ = false;
      return false;
    }
    if (in_quote_) {
      if (ch == '\\') {
        escaped_ = true;
      } else if (ch == '"') {
        in_quote_ = false;
      }
      return false;
    }
    if (ch == '"') {
      in_quote_ = true;
      return false;
    }
    if (ch == '[' || ch == '(' || ch == '{') {
      ++depth_;
      return false;
    }
    if (ch == ']' || ch == ')' || ch == '}') {
      if (depth_ > 0) --depth_;
      return false;
    }
    if (ch == '|' && depth_ == 0) {
      in_pipe_label_ = !in_pipe_label_;
      return false;
    }
    return depth_ == 0 && !in_pipe_label_;
  }

 private:
  bool in_quote_ = false;
  bool escaped_ = false;
  int depth_ = 0;
  bool in_pipe_label_ = false;
};

// The line split at top-level ';'; *trailing_semicolon when the last piece was blank (and so
// dropped) after at least one ';'.
std::vector<std::string_view> SplitStatements(std::string_view line, bool* trailing_semicolon) {
  std::vector<std::string_view> statements;
  TopLevelScanner scanner;
  size_t start = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (scanner.Step(line[i]) && line[i] == ';') {
      statements.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  statements.push_back(line.substr(start));
  *trailing_semicolon = statements.size() > 1 && PythonStrip(statements.back()).empty();
  if (*trailing_semicolon) statements.pop_back();
  return statements;
}

// The statement split at top-level "-->".
std::vector<std::string_view> SplitChain(std::string_view statement) {
  std::vector<std::string_view> parts;
  TopLevelScanner scanner;
  size_t start = 0;
  for (size_t i = 0; i < statement.size(); ++i) {
    if (scanner.Step(statement[i]) && statement.substr(i, 3) == "-->") {
      parts.push_back(statement.substr(start, i - start));
      start = i + 3;
      i += 2;  // '-' '-' '>' change no scanner state
    }
  }
  parts.push_back(statement.substr(start));
  return parts;
}

// _sanitize_edge_label: no parentheses, runs of spaces as one, trimmed.
std::string SanitizeEdgeLabel(std::string_view raw) {
  std::string label;
  for (char c : raw) {
    if (c == '(' || c == ')') continue;
    if (c == ' ' && !label.empty() && label.back() == ' ') continue;
    label.push_back(c);
  }
  return std::string(PythonStrip(label));
}

// One edge target: `|label| DST` (^\|(.*?)\|\s*(.+?)\s*$ on the trimmed target) or `DST`.
std::string FixTarget(std::string_view target, IdRegistry* ids) {
  const std::string_view t = PythonStrip(target);
  if (!t.empty() && t[0] == '|') {
    const size_t close = t.find('|', 1);
    // The lazy label ends at the first '|' unless nothing follows it (then no later '|'
    // exists either, the target being trimmed).
    if (close != std::string_view::npos && close + 1 < t.size()) {
      return " -->|" + SanitizeEdgeLabel(t.substr(1, close - 1)) + "| " +
             ids->Convert(PythonStrip(t.substr(close + 1)));
    }
  }
  return " --> " + ids->Convert(t);
}

std::string FixStatement(std::string_view statement, IdRegistry* ids) {
  const std::string_view stripped = PythonStrip(statement);
  if (stripped.find("-->") == std::string_view::npos || stripped.starts_with("%%")) {
    return std::string(stripped);
  }
  const std::vector<std::string_view> chain = SplitChain(stripped);
  std::string out = ids->Convert(PythonStrip(chain[0]));
  for (size_t i = 1; i < chain.size(); ++i) out += FixTarget(chain[i], ids);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Invalid edge lines.

// -->\s*\|[^|\n]+\|\s*\S somewhere in the line.
bool HasValidEdgeLabel(std::string_view line) {
  for (size_t at = line.find("-->"); at != std::string_view::npos; at = line.find("-->", at + 1)) {
    const size_t open = SkipSpace(line, at + 3);
    if (open >= line.size() || line[open] != '|') continue;
    const size_t close = line.find_first_of("|\n", open + 1);
    if (close == std::string_view::npos || line[close] != '|' || close == open + 1) continue;
    if (SkipSpace(line, close + 1) < line.size()) return true;
  }
  return false;
}

size_t CountUnquotedPipes(std::string_view line) {
  bool in_single = false;
  bool in_double = false;
  bool escape = false;
  size_t count = 0;
  for (char ch : line) {
    if (escape) {
      escape = false;
    } else if (ch == '\\') {
      escape = true;
    } else if (ch == '\'' && !in_double) {
      in_single = !in_single;
    } else if (ch == '"' && !in_single) {
      in_double = !in_double;
    } else if (ch == '|' && !in_single && !in_double) {
      ++count;
    }
  }
  return count;
}

// -->\s*[^|\n]*\|\s*[^|\n]+$ somewhere in the trimmed line: an arrow after the second-to-last
// '|', then the last '|', then at least one character.
bool HasSuspectSinglePipe(std::string_view stripped) {
  const size_t last = stripped.rfind('|');
  if (last == std::string_view::npos || last + 1 >= stripped.size()) return false;
  const size_t previous = last == 0 ? std::string_view::npos : stripped.rfind('|', last - 1);
  const size_t from = previous == std::string_view::npos ? 0 : previous + 1;
  return stripped.substr(from, last - from).find("-->") != std::string_view::npos;
}

bool IsInvalidSinglePipeEdgeLine(std::string_view line) {
  const std::string_view stripped = PythonStrip(line);
  if (stripped.empty() || stripped.starts_with("%%")) return false;
  if (line.find("-->") == std::string_view::npos || line.find('|') == std::string_view::npos) {
    return false;
  }
  if (HasValidEdgeLabel(line)) return false;
  return CountUnquotedPipes(line) == 1 && HasSuspectSinglePipe(stripped);
}

// ---------------------------------------------------------------------------------------------
// Subgraph ids.

class SubgraphIds {
 public:
  void Record(std::string id) { seen_.insert(std::move(id)); }

  // _build_unique_id, with the next free suffix remembered per base (seen ids only grow).
  std::string Unique(const std::string& base) {
    if (seen_.insert(base).second) return base;
    int& next = next_suffix_.try_emplace(base, 2).first->second;
    while (seen_.count(base + "_" + std::to_string(next)) > 0) ++next;
    std::string id = base + "_" + std::to_string(next);
    ++next;
    seen_.insert(id);
    return id;
  }

 private:
  std::unordered_set<std::string> seen_;
  std::unordered_map<std::string, int> next_suffix_;
};

// _sanitize_subgraph_id.
std::string SanitizeSubgraphId(std::string_view body) {
  // Bytes suffice: a code point outside ASCII is a run of bytes outside the class, which
  // becomes one '_' either way.
  std::string collapsed;
  for (char c : body) {
    const char kept = IsAsciiAlnum(c) || c == '_' ? c : '_';
    if (kept == '_' && !collapsed.empty() && collapsed.back() == '_') continue;
    collapsed.push_back(kept);
  }
  const size_t begin = collapsed.find_first_not_of('_');
  if (begin == std::string::npos) return "sg";
  collapsed = collapsed.substr(begin, collapsed.find_last_not_of('_') - begin + 1);
  if (collapsed[0] >= '0' && collapsed[0] <= '9') collapsed = "sg_" + collapsed;
  return collapsed;
}

// The explicit id of `ID\s*[` or `ID\s*(` at the start of the trimmed body, "" for none.
std::string_view ExplicitSubgraphId(std::string_view body) {
  const std::string_view b = PythonStrip(body);
  if (b.empty() || !(IsAsciiLetter(b[0]) || b[0] == '_')) return {};
  size_t end = 1;
  while (end < b.size() && (IsAsciiAlnum(b[end]) || b[end] == '_')) ++end;
  const size_t next = SkipSpace(b, end);
  if (next < b.size() && (b[next] == '[' || b[next] == '(')) return b.substr(0, end);
  return {};
}

}  // namespace

std::string LegalizeMermaidNodeIds(std::string_view code) {
  const std::vector<std::string_view> lines = pystr::SplitLines(code);
  IdRegistry ids;
  for (std::string_view line : lines) {
    const std::string_view s = PythonStrip(line);
    if (s.empty() || !(IsAsciiLetter(s[0]) || s[0] == '_')) continue;
    size_t end = 1;
    while (end < s.size() && (IsAsciiAlnum(s[end]) || s[end] == '_')) ++end;
    const size_t next = SkipSpace(s, end);
    if (next < s.size() && (s[next] == '[' || s[next] == '(' || s[next] == '{')) {
      ids.Declare(std::string(s.substr(0, end)));
    }
  }
  LineWriter out(code);
  for (std::string_view line : lines) {
    if (line.find("-->") == std::string_view::npos || HasBidirectionalArrow(line) ||
        PythonStrip(line).starts_with("%%")) {
      out.Add(line);
      continue;
    }
    bool trailing_semicolon = false;
    std::string rebuilt = "  ";
    bool any = false;
    for (std::string_view statement : SplitStatements(line, &trailing_semicolon)) {
      if (PythonStrip(statement).empty()) continue;
      if (any) rebuilt += "; ";
      rebuilt += FixStatement(statement, &ids);
      any = true;
    }
    if (!any) {
      out.Add(line);
      continue;
    }
    if (trailing_semicolon) rebuilt.push_back(';');
    out.Add(rebuilt);
  }
  return out.Finish();
}

std::string RemoveInvalidMermaidEdgeLines(std::string_view code) {
  LineWriter kept(code);
  for (std::string_view line : pystr::SplitLines(code)) {
    if (!IsInvalidSinglePipeEdgeLine(line)) kept.Add(line);
  }
  return kept.Finish();
}

std::string FixMermaidSubgraphIds(std::string_view code) {
  LineWriter out(code);
  SubgraphIds ids;
  for (std::string_view line : pystr::SplitLines(code)) {
    // ^(\s*)subgraph\s+(.+?)\s*$
    const size_t keyword = SkipSpace(line, 0);
    const size_t after = keyword + 8;
    const size_t body_begin = SkipSpace(line, after);
    if (line.substr(keyword, 8) != "subgraph" || body_begin == after || body_begin == line.size()) {
      // (Only whitespace after the keyword can match with a one-space body, which has no
      // words and is kept as it is.)
      out.Add(line);
      continue;
    }
    std::string_view body = line.substr(body_begin);
    body = body.substr(0, PythonStrip(body).size());  // body starts with a non-space
    if (const std::string_view id = ExplicitSubgraphId(body); !id.empty()) {
      ids.Record(std::string(id));
      out.Add(line);
      continue;
    }
    size_t word_end = 0;
    while (word_end < body.size() && PythonSpaceLength(body, word_end) == 0) {
      size_t len = 0;
      pystr::CodePointAt(body, word_end, &len);
      word_end += len;
    }
    if (IsValidId(body.substr(0, word_end))) {
      ids.Record(std::string(body.substr(0, word_end)));
      out.Add(line);
      continue;
    }
    std::string fixed(line.substr(0, keyword));
    fixed += "subgraph " + ids.Unique(SanitizeSubgraphId(body)) + "[\"";
    for (char c : body) {
      if (c == '"') fixed.push_back('\\');
      fixed.push_back(c);
    }
    fixed += "\"]";
    out.Add(fixed);
  }
  return out.Finish();
}

}  // namespace mineru::pipeline
