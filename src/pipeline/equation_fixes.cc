// SPDX-License-Identifier: Apache-2.0
#include "pipeline/equation_fixes.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

// What follows "\left" in the client's counting/splitting regex, in its alternation order.
constexpr std::array<std::string_view, 18> kLeftSuffixes = {
    "\\lbrace", "\\lVert",  "\\lvert",  "\\rvert",  "\\rVert", "\\vert",
    "\\Vert",   "\\lfloor", "\\lbrack", "\\langle", "|",       "\\|",
    "[",        "]",        "(",        "\\{",      "\\}",     ".",
};
// What follows "\right"; the client's last alternative (`\right.` with an unescaped dot) is the
// any-character fallback in MatchRight().
constexpr std::array<std::string_view, 17> kRightSuffixes = {
    "\\rbrace", "\\lVert",  "\\lvert",  "\\rvert",  "\\rVert", "\\vert",
    "\\Vert",   "\\rfloor", "\\rbrack", "\\rangle", "|",       "\\|",
    "]",        "[",        ")",        "\\}",      "\\{",
};

// The delimiters the stack matching knows (VALID_LEFT_TOKEN_LIST / VALID_RIGHT_TOKEN_LIST).
constexpr std::array<std::string_view, 20> kValidLeft = {
    "\\left\\lbrace", "\\left\\lVert", "\\left\\lvert",  "\\left\\rvert",  "\\left\\rVert",
    "\\left\\vert",   "\\left\\Vert",  "\\left\\lfloor", "\\left\\lbrack", "\\left\\langle",
    "\\left|",        "\\left\\|",     "\\left[",        "\\left]",        "\\left(",
    "\\left)",        "\\left\\{",     "\\left\\}",      "\\left.",        "\\left/",
};
constexpr std::array<std::string_view, 20> kValidRight = {
    "\\right\\rbrace", "\\right\\lVert", "\\right\\lvert",  "\\right\\rvert",  "\\right\\rVert",
    "\\right\\vert",   "\\right\\Vert",  "\\right\\rfloor", "\\right\\rbrack", "\\right\\rangle",
    "\\right|",        "\\right\\|",     "\\right]",        "\\right[",        "\\right)",
    "\\right(",        "\\right\\}",     "\\right\\{",      "\\right.",        "\\right/",
};

// The pairs is_pair_left_right() accepts; besides these, `\left.` pairs with every right
// delimiter listed here and `\right.` with every left one (as written in the client, \lVert and
// \lvert close with \right\lVert and \right\lvert, and \rvert/\rVert pair only with a dot).
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kPairs = {{
    {"\\left\\lbrace", "\\right\\rbrace"},
    {"\\left\\lVert", "\\right\\lVert"},
    {"\\left\\lvert", "\\right\\lvert"},
    {"\\left\\vert", "\\right\\vert"},
    {"\\left\\Vert", "\\right\\Vert"},
    {"\\left\\lfloor", "\\right\\rfloor"},
    {"\\left\\lbrack", "\\right\\rbrack"},
    {"\\left\\langle", "\\right\\rangle"},
    {"\\left|", "\\right|"},
    {"\\left\\|", "\\right\\|"},
    {"\\left[", "\\right]"},
    {"\\left]", "\\right["},
    {"\\left(", "\\right)"},
    {"\\left)", "\\right("},
    {"\\left\\{", "\\right\\}"},
    {"\\left\\}", "\\right\\{"},
    {"\\left/", "\\right/"},
}};

bool IsPair(std::string_view left, std::string_view right) {
  for (const auto& [l, r] : kPairs) {
    if ((left == l || left == "\\left.") && (right == r || right == "\\right.")) return true;
  }
  return false;
}

bool IsValidDelimiter(std::string_view piece) {
  return std::find(kValidLeft.begin(), kValidLeft.end(), piece) != kValidLeft.end() ||
         std::find(kValidRight.begin(), kValidRight.end(), piece) != kValidRight.end();
}

// Length of the one code point at s[pos] (1 for a byte that does not start valid UTF-8).
size_t CharLength(std::string_view s, size_t pos) {
  char32_t cp = 0;
  size_t n = text::WellFormedLength(s, pos, &cp);
  return n == 0 ? 1 : n;
}

// Length of the left delimiter the counting regex matches at s[pos], 0 for none.
size_t MatchLeft(std::string_view s, size_t pos) {
  constexpr std::string_view kLeft = "\\left";
  if (s.substr(pos, kLeft.size()) != kLeft) return 0;
  std::string_view rest = s.substr(pos + kLeft.size());
  for (std::string_view suffix : kLeftSuffixes) {
    if (rest.starts_with(suffix)) return kLeft.size() + suffix.size();
  }
  return 0;
}

// Length of the right delimiter the counting regex matches at s[pos], 0 for none.
size_t MatchRight(std::string_view s, size_t pos) {
  constexpr std::string_view kRight = "\\right";
  if (s.substr(pos, kRight.size()) != kRight) return 0;
  std::string_view rest = s.substr(pos + kRight.size());
  for (std::string_view suffix : kRightSuffixes) {
    if (rest.starts_with(suffix)) return kRight.size() + suffix.size();
  }
  // `\right.`: any one character except a newline.
  if (rest.empty() || rest[0] == '\n') return 0;
  return kRight.size() + CharLength(s, pos + kRight.size());
}

size_t CountMatches(std::string_view s, size_t (*match)(std::string_view, size_t)) {
  size_t count = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t n = s[pos] == '\\' ? match(s, pos) : 0;
    if (n > 0) {
      ++count;
      pos += n;
    } else {
      ++pos;
    }
  }
  return count;
}

// re.split with a capturing group: text, match, text, ..., text (empty texts included).
template <class Matcher>
std::vector<std::string_view> SplitKeepingMatches(std::string_view s, Matcher match) {
  std::vector<std::string_view> pieces;
  size_t text_start = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t n = match(s, pos);
    if (n > 0) {
      pieces.push_back(s.substr(text_start, pos - text_start));
      pieces.push_back(s.substr(pos, n));
      pos += n;
      text_start = pos;
    } else {
      ++pos;
    }
  }
  pieces.push_back(s.substr(text_start));
  return pieces;
}

// split_with_delimiters(): `&`, `\\`, `\begin{array}\s*{[a-zA-Z\s]*}`, `\end{array}`.
size_t MatchArrayDelimiter(std::string_view s, size_t pos) {
  if (s[pos] == '&') return 1;
  if (s.substr(pos, 2) == "\\\\") return 2;
  constexpr std::string_view kBegin = "\\begin{array}";
  constexpr std::string_view kEnd = "\\end{array}";
  if (s.substr(pos, kEnd.size()) == kEnd) return kEnd.size();
  if (s.substr(pos, kBegin.size()) != kBegin) return 0;
  size_t i = pos + kBegin.size();
  while (size_t n = PythonSpaceLength(s, i)) i += n;
  if (i >= s.size() || s[i] != '{') return 0;
  ++i;
  while (i < s.size()) {
    char c = s[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      ++i;
    } else if (size_t n = PythonSpaceLength(s, i)) {
      i += n;
    } else {
      break;
    }
  }
  if (i >= s.size() || s[i] != '}') return 0;
  return i + 1 - pos;
}

size_t MatchLeftOrRight(std::string_view s, size_t pos) {
  if (s[pos] != '\\') return 0;
  size_t n = MatchLeft(s, pos);
  return n > 0 ? n : MatchRight(s, pos);
}

// The innermost array cell of a fragment: (array tag, cell number within that array).
using CellTag = std::optional<std::pair<int, int>>;

struct ArrayRange {
  int tag = 0;
  size_t start = 0;  // fragment index of its \begin{array}
  size_t end = 0;    // fragment index of its \end{array}
  std::vector<int> contained_tags;
};

// tag_array(): pairs \begin{array} fragments (any fragment containing the text) with
// `\end{array}` fragments; an \end{array} without an open array is skipped. As in the client,
// the running tag becomes the popped array's tag, so later arrays may reuse a tag.
std::vector<ArrayRange> FindArrays(const std::vector<std::string_view>& nodes) {
  std::vector<std::pair<int, size_t>> open;
  std::vector<ArrayRange> arrays;
  int tag = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].find("\\begin{array}") != std::string_view::npos) {
      ++tag;
      open.emplace_back(tag, i);
    } else if (nodes[i] == "\\end{array}") {
      if (open.empty()) continue;
      tag = open.back().first;
      arrays.push_back({tag, open.back().second, i, {}});
      open.pop_back();
    }
  }
  // find_contain: b is in a when a.start < b.start and a.end > b.end. Stack pairing makes the
  // ranges nested or disjoint (starts and ends all distinct), so "contained" means "descendant":
  // walking the arrays by start with a stack of the ranges still open finds every pair in
  // O(arrays x depth) instead of testing all pairs. (The order of a contained list is immaterial:
  // it is used as a set and for its size.)
  std::vector<size_t> by_start(arrays.size());
  for (size_t i = 0; i < by_start.size(); ++i) by_start[i] = i;
  std::sort(by_start.begin(), by_start.end(),
            [&](size_t x, size_t y) { return arrays[x].start < arrays[y].start; });
  std::vector<size_t> enclosing;
  for (size_t b : by_start) {
    while (!enclosing.empty() && arrays[enclosing.back()].end < arrays[b].start) {
      enclosing.pop_back();
    }
    for (size_t a : enclosing) arrays[a].contained_tags.push_back(arrays[b].tag);
    enclosing.push_back(b);
  }
  // Outermost (most contained arrays) first; stable like Python's sorted().
  std::stable_sort(arrays.begin(), arrays.end(), [](const ArrayRange& x, const ArrayRange& y) {
    return x.contained_tags.size() > y.contained_tags.size();
  });
  return arrays;
}

// tag_element(): each fragment's cell in the first array (in FindArrays order) that owns it
// directly; an array's contained arrays are masked out, and `&`/`\\` advance the cell number.
// Without arrays the client returns a single untagged entry, so only fragment 0 takes part.
// Work per array is its own fragment range plus its contained list (the masks are clipped to the
// range, the only part the walk reads).
std::vector<CellTag> TagCells(const std::vector<std::string_view>& nodes,
                              const std::vector<ArrayRange>& arrays) {
  if (arrays.empty()) return {CellTag()};
  std::map<int, const ArrayRange*> by_tag;
  for (const ArrayRange& a : arrays) by_tag[a.tag] = &a;
  std::vector<CellTag> tags(nodes.size());
  std::vector<bool> decided(nodes.size(), false);
  std::vector<int> mask_delta;
  for (const ArrayRange& a : arrays) {
    if (a.start >= nodes.size()) continue;
    const size_t first = a.start;
    const size_t last = std::min(a.end, nodes.size() - 1);
    mask_delta.assign(last - first + 2, 0);
    for (int t : a.contained_tags) {
      const ArrayRange* inner = by_tag[t];
      size_t lo = std::max(inner->start, first);
      size_t hi = std::min(inner->end, last) + 1;
      if (lo >= hi) continue;
      ++mask_delta[lo - first];
      --mask_delta[hi - first];
    }
    int masked = 0;
    int cell = 0;
    for (size_t i = first; i <= last; ++i) {
      masked += mask_delta[i - first];
      if (masked > 0) continue;
      if (nodes[i] == "&" || nodes[i] == "\\\\") {
        ++cell;
      } else if (!decided[i]) {
        tags[i] = std::make_pair(a.tag, cell);
        decided[i] = true;
      }
    }
  }
  return tags;
}

bool IsStructural(std::string_view node) {
  return node == "&" || node == "\\\\" || node.find("\\begin{array}") != std::string_view::npos ||
         node.find("\\end{array}") != std::string_view::npos;
}

// clean_span() for one cell's fragments whose counts differ: pair the delimiters with a stack
// across the fragments and close the unmatched ones.
void BalanceCell(const std::vector<size_t>& members, const std::vector<std::string_view>& nodes,
                 std::vector<std::string>* out) {
  // Pieces of each fragment: text and delimiters alternating, whitespace-only pieces dropped.
  std::vector<std::vector<std::string_view>> pieces(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    for (std::string_view p : SplitKeepingMatches(nodes[members[m]], MatchLeftOrRight)) {
      if (!PythonStrip(p).empty()) pieces[m].push_back(p);
    }
  }
  struct Open {
    std::string_view token;
    size_t member;
    size_t piece;
  };
  std::vector<Open> stack;
  for (size_t m = 0; m < pieces.size(); ++m) {
    for (size_t k = 0; k < pieces[m].size(); ++k) {
      std::string_view token = pieces[m][k];
      if (!IsValidDelimiter(token)) continue;
      if (!stack.empty() && IsPair(stack.back().token, token)) {
        stack.pop_back();
      } else {
        stack.push_back({token, m, k});
      }
    }
  }
  std::vector<std::vector<std::string>> edited(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    edited[m].assign(pieces[m].begin(), pieces[m].end());
  }
  for (const Open& o : stack) {
    std::string& piece = edited[o.member][o.piece];
    if (o.token.find("\\left") != std::string_view::npos) {
      piece += " \\right.";
    } else if (o.token.find("\\right") != std::string_view::npos) {
      piece.insert(0, "\\left. ");
    }
  }
  for (size_t m = 0; m < members.size(); ++m) {
    std::string joined;
    for (const std::string& p : edited[m]) joined += p;
    (*out)[members[m]] = std::move(joined);
  }
}

// The one-level brace group `{([^{}]|{[^{}]*})*}` at s[pos]; returns its end or npos. The regex
// cannot backtrack into another match: no item of the group starts with `}`.
size_t MatchFlatGroup(std::string_view s, size_t pos) {
  if (pos >= s.size() || s[pos] != '{') return std::string_view::npos;
  size_t i = pos + 1;
  while (i < s.size()) {
    char c = s[i];
    if (c == '}') return i + 1;
    if (c != '{') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < s.size() && s[j] != '{' && s[j] != '}') ++j;
    if (j >= s.size() || s[j] != '}') return std::string_view::npos;
    i = j + 1;
  }
  return std::string_view::npos;
}

size_t SkipSpaces(std::string_view s, size_t pos) {
  while (size_t n = PythonSpaceLength(s, pos)) pos += n;
  return pos;
}

// `_\s*G\s*_\s*G` at s[pos]; returns its end or npos.
size_t MatchDoubleSubscript(std::string_view s, size_t pos) {
  if (s[pos] != '_') return std::string_view::npos;
  size_t i = MatchFlatGroup(s, SkipSpaces(s, pos + 1));
  if (i == std::string_view::npos) return i;
  i = SkipSpaces(s, i);
  if (i >= s.size() || s[i] != '_') return std::string_view::npos;
  return MatchFlatGroup(s, SkipSpaces(s, i + 1));
}

std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

constexpr std::array<std::string_view, 16> kSizeCommands = {
    "\\big", "\\bigl", "\\bigr", "\\bigm", "\\bigg", "\\biggl", "\\biggr", "\\biggm",
    "\\Big", "\\Bigl", "\\Bigr", "\\Bigm", "\\Bigg", "\\Biggl", "\\Biggr", "\\Biggm",
};
// {D} -> replacement text after the command.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kSizedDelimiters = {{
    {"{(}", "("},
    {"{)}", ")"},
    {"{\\{}", "\\{"},
    {"{\\}}", "\\}"},
    {"{|}", "|"},
    {"{\\|}", "\\|"},
    {"{[}", "["},
    {"{]}", "]"},
    {"{\\langle}", "\\langle "},
    {"{\\rangle}", "\\rangle "},
}};

// check_left_right() fails and check_align() holds: the counts of \left and \right delimiters
// differ and `\begin{array}` occurs as often as `\end{array}` (non-overlapping substrings).
bool LeftRightFixApplies(std::string_view latex) {
  if (CountMatches(latex, MatchLeft) == CountMatches(latex, MatchRight)) return false;
  auto count = [&](std::string_view what) {
    size_t n = 0;
    for (size_t pos = latex.find(what); pos != std::string_view::npos;
         pos = latex.find(what, pos + what.size())) {
      ++n;
    }
    return n;
  };
  return count("\\begin{array}") == count("\\end{array}");
}

// The fix's fragments: `latex` trimmed, split at the array delimiters (kept as fragments), empty
// pieces dropped, each trimmed (a whitespace-only piece stays as an empty fragment, as in the
// client).
std::vector<std::string_view> ArrayFragments(std::string_view latex) {
  std::vector<std::string_view> nodes;
  for (std::string_view piece : SplitKeepingMatches(PythonStrip(latex), MatchArrayDelimiter)) {
    if (!piece.empty()) nodes.push_back(PythonStrip(piece));
  }
  return nodes;
}

// tag_array()'s pairing as the 1.2.1 guard sees it: whether every `\end{array}` fragment closes
// an open array (a fragment containing `\begin{array}`) and none is left open at the end; and
// the deepest nesting and number of arrays, which size the tagging work.
struct ArrayNesting {
  bool proper = true;
  size_t max_depth = 0;
  size_t arrays = 0;
};

ArrayNesting MeasureArrayNesting(const std::vector<std::string_view>& nodes) {
  ArrayNesting nesting;
  size_t open = 0;
  for (std::string_view node : nodes) {
    if (node.find("\\begin{array}") != std::string_view::npos) {
      nesting.max_depth = std::max(nesting.max_depth, ++open);
    } else if (node == "\\end{array}") {
      if (open == 0) {
        nesting.proper = false;
        return nesting;
      }
      --open;
      ++nesting.arrays;
    }
  }
  nesting.proper = open == 0;
  return nesting;
}

// fix_left_right_mismatch() on the fragments: tag them, balance every cell whose counts differ,
// concatenate.
std::string BalanceFragments(const std::vector<std::string_view>& nodes) {
  std::vector<ArrayRange> arrays = FindArrays(nodes);
  std::vector<CellTag> tags = TagCells(nodes, arrays);

  // Cells in first-seen order with their fragments (cells are disjoint, so order is moot).
  std::vector<std::pair<CellTag, std::vector<size_t>>> cells;
  std::map<CellTag, size_t> cell_index;
  for (size_t i = 0; i < std::min(tags.size(), nodes.size()); ++i) {
    if (IsStructural(nodes[i])) continue;
    auto [it, inserted] = cell_index.try_emplace(tags[i], cells.size());
    if (inserted) {
      cells.push_back({tags[i], {i}});
    } else {
      cells[it->second].second.push_back(i);
    }
  }

  std::vector<std::string> out(nodes.begin(), nodes.end());
  for (const auto& [tag, members] : cells) {
    size_t left = 0;
    size_t right = 0;
    for (size_t i : members) {
      left += CountMatches(nodes[i], MatchLeft);
      right += CountMatches(nodes[i], MatchRight);
    }
    if (left != right) BalanceCell(members, nodes, &out);
  }
  std::string fixed;
  for (const std::string& node : out) fixed += node;
  return fixed;
}

}  // namespace

size_t CountLeftDelimiters(std::string_view latex) { return CountMatches(latex, MatchLeft); }

size_t CountRightDelimiters(std::string_view latex) { return CountMatches(latex, MatchRight); }

std::string FixLeftRight(std::string_view latex) {
  if (!LeftRightFixApplies(latex)) return std::string(latex);
  return BalanceFragments(ArrayFragments(latex));
}

std::string FixLeftRightGuarded(std::string_view latex) {
  if (!LeftRightFixApplies(latex)) return std::string(latex);
  std::vector<std::string_view> nodes = ArrayFragments(latex);
  ArrayNesting nesting = MeasureArrayNesting(nodes);
  if (!nesting.proper) return std::string(latex);
  // Tagging visits each fragment and each contained array once per enclosing array.
  if (nesting.max_depth > 0 &&
      nodes.size() + nesting.arrays > kMaxGuardedLeftRightWork / nesting.max_depth) {
    return std::string(latex);
  }
  return BalanceFragments(nodes);
}

std::string RemoveDoubleSubscripts(std::string_view latex) {
  std::string out;
  out.reserve(latex.size());
  size_t pos = 0;
  while (pos < latex.size()) {
    size_t end = MatchDoubleSubscript(latex, pos);
    if (end != std::string_view::npos) {
      pos = end;
    } else {
      out.push_back(latex[pos++]);
    }
  }
  return out;
}

std::string FixColonEquals(std::string_view latex) {
  return ReplaceAll(ReplaceAll(latex, "\\eqqcolon", "=:"), "\\coloneqq", ":=");
}

std::string FixSizedDelimiters(std::string_view latex) {
  // One left-to-right pass equals the client's sequence of substitutions: a match starts at a
  // size command followed by `{` or ` {`, so no two matches overlap and no replacement forms a
  // new match.
  std::string out;
  out.reserve(latex.size());
  size_t pos = 0;
  while (pos < latex.size()) {
    bool replaced = false;
    if (latex[pos] == '\\') {
      std::string_view rest = latex.substr(pos);
      for (std::string_view cmd : kSizeCommands) {
        if (!rest.starts_with(cmd)) continue;
        size_t arg = cmd.size();
        if (rest.substr(arg, 2) == " {") ++arg;
        for (const auto& [pattern, replacement] : kSizedDelimiters) {
          if (rest.substr(arg).starts_with(pattern)) {
            out.append(cmd);
            out.append(replacement);
            pos += arg + pattern.size();
            replaced = true;
            break;
          }
        }
        if (replaced) break;
      }
      if (!replaced && rest.starts_with("\\bigtimes")) {
        out.append("\\times");
        pos += std::string_view("\\bigtimes").size();
        replaced = true;
      }
    }
    if (!replaced) out.push_back(latex[pos++]);
  }
  return out;
}

std::string SpaceLessThan(std::string_view latex) { return ReplaceAll(latex, "<", "< "); }

std::string RemoveUnbalancedBraces(std::string_view latex) {
  std::vector<size_t> open;
  std::vector<bool> drop(latex.size(), false);
  for (size_t i = 0; i < latex.size(); ++i) {
    char c = latex[i];
    if (c != '{' && c != '}') continue;
    size_t backslashes = 0;
    while (backslashes < i && latex[i - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 1) continue;
    if (c == '{') {
      open.push_back(i);
    } else if (!open.empty()) {
      open.pop_back();
    } else {
      drop[i] = true;
    }
  }
  for (size_t i : open) drop[i] = true;
  std::string out;
  out.reserve(latex.size());
  for (size_t i = 0; i < latex.size(); ++i) {
    if (!drop[i]) out.push_back(latex[i]);
  }
  return out;
}

std::string FixEquation(std::string_view latex) {
  std::string s = FixLeftRight(latex);
  s = RemoveDoubleSubscripts(s);
  s = FixColonEquals(s);
  s = FixSizedDelimiters(s);
  s = SpaceLessThan(s);
  return RemoveUnbalancedBraces(s);
}

std::string TrimEquationDelimiters(std::string_view latex) {
  std::string_view s = PythonStrip(latex);
  if (s.starts_with("\\[")) s.remove_prefix(2);
  if (s.ends_with("\\]")) s.remove_suffix(2);
  return std::string(PythonStrip(s));
}

std::string FixEquationPro(std::string_view latex) {
  std::string s = FixLeftRightGuarded(TrimEquationDelimiters(latex));
  s = RemoveDoubleSubscripts(s);
  s = FixColonEquals(s);
  s = FixSizedDelimiters(s);
  s = SpaceLessThan(s);
  return RemoveUnbalancedBraces(s);
}

std::string WrapDisplayEquation(std::string_view content) {
  std::string out(PythonStrip(content));
  if (!out.starts_with("\\[")) out.insert(0, "\\[\n");
  if (!out.ends_with("\\]")) out += "\n\\]";
  return out;
}

}  // namespace mineru::pipeline
