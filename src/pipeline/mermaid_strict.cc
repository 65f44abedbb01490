// SPDX-License-Identifier: Apache-2.0
// ExtractMermaidStrict and NormalizeFlowchart (mineru-vl-utils 1.2.1
// post_process/image_analysis_postprocess.py, extract_and_validate_mermaid_strict and the
// flowchart branch of process_image_or_chart). Each regex substitution of the client is one
// pass; the comments say why a pass needs no backtracking.
#include <initializer_list>
#include <string>

#include "pipeline/mermaid_fixes.h"
#include "pipeline/mermaid_text.h"

namespace mineru::pipeline {
namespace {

using mermaid::IdCharLength;
using mermaid::IdRunEnd;
using mermaid::MatchBidirectionalArrow;
using mermaid::SkipSpace;

// The code inside the first ```mermaid ... ``` block, else the first ``` ... ``` block, else
// the (trimmed) content; trimmed. The lazy (.*?) ends at the first ``` after the opening and
// its whitespace; when none exists after the first opening, none exists after a later one.
std::string_view ExtractCodeBlock(std::string_view content) {
  for (std::string_view opening : {std::string_view("```mermaid"), std::string_view("```")}) {
    const size_t at = content.find(opening);
    if (at == std::string_view::npos) continue;
    const size_t inner = SkipSpace(content, at + opening.size());
    const size_t close = content.find("```", inner);
    if (close == std::string_view::npos) continue;
    return PythonStrip(content.substr(inner, close - inner));
  }
  return content;
}

bool StartsWithIgnoringAsciiCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && pystr::AsciiLower(s.substr(0, prefix.size())) == prefix;
}

// ^(alt1|alt2|...)\b with IGNORECASE, alternatives tried in order: replaced by `word`.
std::string FixLeadingWord(std::string code, std::initializer_list<std::string_view> typos,
                           std::string_view word) {
  for (std::string_view typo : typos) {
    if (!StartsWithIgnoringAsciiCase(code, typo)) continue;
    // \b after a word character: the end, or a code point that is not \w.
    bool boundary = code.size() == typo.size();
    if (!boundary) {
      size_t len = 0;
      boundary = !pystr::IsWordChar(pystr::CodePointAt(code, typo.size(), &len));
    }
    if (boundary) return std::string(word) + code.substr(typo.size());
  }
  return code;
}

constexpr std::string_view kBidirectionalToken = "__MERMAID_BIDIR_ARROW__";

// Copies the unchanged stretches of a string between replacements.
class SpliceWriter {
 public:
  explicit SpliceWriter(std::string_view s) : s_(s) { out_.reserve(s.size()); }
  // Replaces s[begin, end) (begin >= the end of the previous replacement).
  void Replace(size_t begin, size_t end, std::string_view replacement) {
    out_.append(s_.substr(copied_, begin - copied_));
    out_.append(replacement);
    copied_ = end;
  }
  std::string Finish() {
    out_.append(s_.substr(copied_));
    return std::move(out_);
  }

 private:
  std::string_view s_;
  std::string out_;
  size_t copied_ = 0;
};

std::string ProtectBidirectionalArrows(std::string_view s) {
  SpliceWriter out(s);
  for (size_t i = s.find('<'); i != std::string_view::npos; i = s.find('<', i)) {
    if (size_t end = MatchBidirectionalArrow(s, i)) {
      out.Replace(i, end, kBidirectionalToken);
      i = end;
    } else {
      ++i;
    }
  }
  return out.Finish();
}

std::string RestoreBidirectionalArrows(std::string_view s) {
  SpliceWriter out(s);
  for (size_t i = s.find(kBidirectionalToken); i != std::string_view::npos;
       i = s.find(kBidirectionalToken, i)) {
    out.Replace(i, i + kBidirectionalToken.size(), "<-->");
    i += kBidirectionalToken.size();
  }
  return out.Finish();
}

// Replaces every match of a pattern made of literal characters and `\s+` gaps: `pieces` are
// the literal parts, and a gap of one or more whitespace code points separates consecutive
// ones. No piece starts with whitespace, so each attempt is deterministic.
std::string ReplaceSpacedArrow(std::string_view s, std::initializer_list<std::string_view> pieces,
                               std::string_view replacement) {
  SpliceWriter out(s);
  const char lead = pieces.begin()->front();
  for (size_t i = s.find(lead); i != std::string_view::npos; i = s.find(lead, i)) {
    size_t j = i;
    bool matched = true;
    bool first = true;
    for (std::string_view piece : pieces) {
      if (!first) {
        const size_t gap_end = SkipSpace(s, j);
        if (gap_end == j) {
          matched = false;
          break;
        }
        j = gap_end;
      }
      first = false;
      if (s.substr(j, piece.size()) != piece) {
        matched = false;
        break;
      }
      j += piece.size();
    }
    if (matched) {
      out.Replace(i, j, replacement);
      i = j;
    } else {
      ++i;
    }
  }
  return out.Finish();
}

// (?<![-=])\s+->\s+ -> " --> ". Within one whitespace run every start meets the same
// continuation, so a run is tried at its first position and, if the look-behind fails there
// (a '-' or '=' before the run), at its second.
std::string FixBareArrows(std::string_view s) {
  SpliceWriter out(s);
  for (size_t i = 0; i < s.size();) {
    const size_t first_len = PythonSpaceLength(s, i);
    if (first_len == 0) {
      ++i;
      continue;
    }
    const size_t run_end = SkipSpace(s, i);
    size_t after = 0;
    if (s.substr(run_end, 2) == "->") {
      const size_t tail = SkipSpace(s, run_end + 2);
      if (tail > run_end + 2) after = tail;
    }
    const bool behind_ok = i == 0 || (s[i - 1] != '-' && s[i - 1] != '=');
    if (after != 0 && behind_ok) {
      out.Replace(i, after, " --> ");
      i = after;
    } else if (after != 0 && i + first_len < run_end) {
      out.Replace(i + first_len, after, " --> ");
      i = after;
    } else {
      i = run_end;
    }
  }
  return out.Finish();
}

bool IsSpaceOrTab(char c) { return c == ' ' || c == '\t'; }

// The replacement of one `NAME[ \t]*[TEXT]` match (node_fixer).
void AppendFixedNode(std::string_view name, std::string_view text, std::string_view whole,
                     std::string* out) {
  if (pystr::AsciiLower(name).starts_with("subgraph ") || text.starts_with("\"[")) {
    out->append(whole);
    return;
  }
  for (size_t i = 0; i < name.size();) {
    if (IsSpaceOrTab(name[i])) {
      while (i < name.size() && IsSpaceOrTab(name[i])) ++i;
      out->push_back('_');
    } else {
      out->push_back(name[i++]);
    }
  }
  if (text.empty()) {
    out->append("[]");
    return;
  }
  if (text.front() == '"' && text.back() == '"') {  // a lone '"' both starts and ends it
    text = text.size() >= 2 ? text.substr(1, text.size() - 2) : std::string_view();
  }
  out->append("[\"");
  for (char c : text) {
    if (c == '"') {
      out->append("&quot;");
    } else if (c == '\n') {
      out->append("<br>");
    } else {
      out->push_back(c);
    }
  }
  out->append("\"]");
}

// re.sub of ([ID]+(?:[ \t]+[ID]+)*)[ \t]*\[(.*?)\] (DOTALL) with node_fixer. NAME is greedy and
// only its full extent can be followed by '[' (a shorter one leaves an id character or a
// space/tab before an id character next), so a failed start skips its whole word sequence.
std::string FixNodes(std::string_view s) {
  const size_t last_close = s.rfind(']');
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  size_t copied = 0;  // s[copied, i) is still to be copied unchanged
  for (size_t i = 0; i < s.size();) {
    if (IdCharLength(s, i) == 0) {
      size_t len = 0;
      pystr::CodePointAt(s, i, &len);
      i += len;
      continue;
    }
    size_t name_end = IdRunEnd(s, i);
    while (true) {
      size_t gap = name_end;
      while (gap < s.size() && IsSpaceOrTab(s[gap])) ++gap;
      if (gap == name_end || IdCharLength(s, gap) == 0) break;
      name_end = IdRunEnd(s, gap);
    }
    size_t open = name_end;
    while (open < s.size() && IsSpaceOrTab(s[open])) ++open;
    if (open < s.size() && s[open] == '[' && last_close != std::string_view::npos &&
        last_close > open) {
      const size_t close = s.find(']', open + 1);
      out.append(s.substr(copied, i - copied));
      AppendFixedNode(s.substr(i, name_end - i), s.substr(open + 1, close - open - 1),
                      s.substr(i, close + 1 - i), &out);
      i = copied = close + 1;
      continue;
    }
    i = name_end;
  }
  out.append(s.substr(copied));
  return out;
}

}  // namespace

std::string ExtractMermaidStrict(std::string_view content) {
  const std::string_view trimmed = PythonStrip(content);
  if (trimmed.empty()) return "";
  std::string_view block = ExtractCodeBlock(trimmed);
  if (StartsWithIgnoringAsciiCase(block, "mermaid")) block = PythonStrip(block.substr(7));
  std::string code = FixLeadingWord(std::string(block), {"grap", "grapg", "graphh"}, "graph");
  code = FixLeadingWord(std::move(code), {"flowchar", "flowchartt"}, "flowchart");
  code = ProtectBidirectionalArrows(code);
  code = ReplaceSpacedArrow(code, {"-", "->"}, "-->");
  code = ReplaceSpacedArrow(code, {"--", ">"}, "-->");
  code = ReplaceSpacedArrow(code, {"-", "-", ">"}, "-->");
  code = FixBareArrows(code);
  code = RestoreBidirectionalArrows(code);
  return "```mermaid\n" + FixNodes(code) + "\n```";
}

std::string NormalizeFlowchart(std::string_view content) {
  if (!DetectMermaidRepetition(content).empty()) return ExtractMermaidStrict("");
  std::string code = LegalizeMermaidNodeIds(content);
  code = RemoveInvalidMermaidEdgeLines(code);
  code = FixMermaidSubgraphIds(code);
  return ExtractMermaidStrict(code);
}

}  // namespace mineru::pipeline
