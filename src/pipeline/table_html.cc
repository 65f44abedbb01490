// SPDX-License-Identifier: Apache-2.0
#include "pipeline/table_html.h"

#include <array>

#include "pipeline/html_text.h"
#include "pipeline/otsl_to_html.h"
#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

constexpr std::array<std::string_view, 6> kOtslTokens = {"<nl>",   "<fcel>", "<ecel>",
                                                         "<lcel>", "<ucel>", "<xcel>"};

// Byte length of the code point at s[pos] (1 for a byte that is not UTF-8).
size_t CodePointLength(std::string_view s, size_t pos) {
  char32_t cp = 0;
  size_t n = text::WellFormedLength(s, pos, &cp);
  return n == 0 ? 1 : n;
}

size_t SkipPythonSpaces(std::string_view s, size_t pos) {
  while (size_t n = PythonSpaceLength(s, pos)) pos += n;
  return pos;
}

// Byte length of the line boundary str.splitlines() sees at s[pos], 0 for none.
size_t LineBoundaryLength(std::string_view s, size_t pos) {
  switch (static_cast<unsigned char>(s[pos])) {
    case '\r':
      return pos + 1 < s.size() && s[pos + 1] == '\n' ? 2 : 1;
    case '\n':
    case '\v':
    case '\f':
    case 0x1C:
    case 0x1D:
    case 0x1E:
      return 1;
    default:
      break;
  }
  std::string_view rest = s.substr(pos);
  if (rest.starts_with("\xC2\x85")) return 2;                                          // U+0085
  if (rest.starts_with("\xE2\x80\xA8") || rest.starts_with("\xE2\x80\xA9")) return 3;  // U+2028/9
  return 0;
}

// str.splitlines() without keepends.
std::vector<std::string_view> SplitPythonLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    if (size_t n = LineBoundaryLength(s, pos)) {
      lines.push_back(s.substr(start, pos - start));
      pos += n;
      start = pos;
    } else {
      ++pos;
    }
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

// The stripped line less one leading and one trailing `|`, in that order (so "|" becomes "").
std::string_view StripOuterPipes(std::string_view line) {
  std::string_view s = PythonStrip(line);
  if (s.starts_with('|')) s.remove_prefix(1);
  if (s.ends_with('|')) s.remove_suffix(1);
  return s;
}

// _count_markdown_table_columns: every `|` separates, escaped or not.
size_t CountColumns(std::string_view line) {
  std::string_view s = StripOuterPipes(line);
  size_t pipes = 0;
  for (char c : s) pipes += c == '|';
  return pipes + 1;
}

// _is_markdown_table_row_candidate.
bool IsRowCandidate(std::string_view line) {
  std::string_view s = PythonStrip(line);
  return !s.empty() && s.find('|') != std::string_view::npos && CountColumns(s) >= 2;
}

// `\s*:?-{3,}:?\s*` at s[pos]; returns its end or npos. No backtracking is needed: the pieces
// match disjoint characters in a fixed order.
size_t MatchSeparatorCell(std::string_view s, size_t pos) {
  pos = SkipPythonSpaces(s, pos);
  if (pos < s.size() && s[pos] == ':') ++pos;
  size_t dashes = 0;
  while (pos < s.size() && s[pos] == '-') {
    ++pos;
    ++dashes;
  }
  if (dashes < 3) return std::string_view::npos;
  if (pos < s.size() && s[pos] == ':') ++pos;
  return SkipPythonSpaces(s, pos);
}

// _is_markdown_table_separator_line: `^\s*\|?` cell `(\|` cell`)+\|?\s*$`. A `|` that does not
// start a further cell can only be the optional closing one.
bool IsSeparatorLine(std::string_view s) {
  size_t pos = SkipPythonSpaces(s, 0);
  if (pos < s.size() && s[pos] == '|') ++pos;
  pos = MatchSeparatorCell(s, pos);
  if (pos == std::string_view::npos) return false;
  size_t groups = 0;
  while (pos < s.size() && s[pos] == '|') {
    size_t end = MatchSeparatorCell(s, pos + 1);
    if (end == std::string_view::npos) break;
    pos = end;
    ++groups;
  }
  if (groups == 0) return false;
  if (pos < s.size() && s[pos] == '|') ++pos;
  return SkipPythonSpaces(s, pos) == s.size();
}

// _split_markdown_table_row: `\|` is a literal `|`, other backslashes stay (a trailing one too).
// Bytes suffice: `\` and `|` are ASCII and never part of a multi-byte sequence.
std::vector<std::string> SplitRow(std::string_view line) {
  std::string_view s = StripOuterPipes(line);
  std::vector<std::string> cells;
  std::string current;
  bool escaped = false;
  auto finish_cell = [&] {
    cells.emplace_back(PythonStrip(current));
    current.clear();
  };
  for (char c : s) {
    if (escaped) {
      if (c != '|') current.push_back('\\');
      current.push_back(c);
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '|') {
      finish_cell();
    } else {
      current.push_back(c);
    }
  }
  if (escaped) current.push_back('\\');
  finish_cell();
  return cells;
}

// Calls on_text(piece) for the text around each match of `OPEN(.+?)CLOSE` (across lines) and
// on_match(inner) for each match's inner text.
template <class OnText, class OnMatch>
void ScanNonEmptyDelimited(std::string_view s, std::string_view open, std::string_view close,
                           OnText on_text, OnMatch on_match) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t start = s.find(open, pos);
    if (start == std::string_view::npos) break;
    // At least one character between. A one-byte step is enough: CLOSE starts with an ASCII
    // byte, which never lies inside a multi-byte sequence.
    size_t inner_start = start + open.size();
    size_t end = s.find(close, inner_start + 1);
    if (end == std::string_view::npos) break;
    on_text(s.substr(pos, start - pos));
    on_match(s.substr(inner_start, end - inner_start));
    pos = end + close.size();
  }
  on_text(s.substr(std::min(pos, s.size())));
}

// _wrap_formula() for one pattern on text outside <eq> segments.
std::string WrapDelimited(std::string_view s, std::string_view open, std::string_view close) {
  std::string out;
  out.reserve(s.size());
  ScanNonEmptyDelimited(
      s, open, close, [&](std::string_view piece) { out.append(piece); },
      [&](std::string_view inner) {
        out.append("<eq>");
        out.append(PythonStrip(inner));
        out.append("</eq>");
      });
  return out;
}

// `\[\s*INNER\s*\]` at s[pos] (s[pos] is '['); returns its end or npos. `\s*` is greedy: the
// regex tries the whole whitespace run first and gives back characters one at a time. Giving
// back can only help when INNER itself starts with whitespace; the closing `\s*\]` never needs
// it (`]` is not whitespace). Linear in the run: an INNER that ends inside the run is followed by
// whitespace up to the run's end.
size_t MatchImageToken(std::string_view s, size_t pos, std::string_view inner) {
  const size_t run_end = SkipPythonSpaces(s, pos + 1);
  auto match_from = [&](size_t i) {
    if (s.compare(i, inner.size(), inner) != 0) return std::string_view::npos;
    const size_t after = i + inner.size();
    const size_t j = after <= run_end ? run_end : SkipPythonSpaces(s, after);
    return j < s.size() && s[j] == ']' ? j + 1 : std::string_view::npos;
  };
  if (PythonSpaceLength(inner, 0) == 0) return match_from(run_end);
  std::vector<size_t> starts = {pos + 1};  // after 0, 1, 2, ... whitespace characters
  while (starts.back() < run_end)
    starts.push_back(starts.back() + PythonSpaceLength(s, starts.back()));
  for (auto it = starts.rbegin(); it != starts.rend(); ++it) {
    if (size_t end = match_from(*it); end != std::string_view::npos) return end;
  }
  return std::string_view::npos;
}

// token[1:-1]: the token less its first and last character (code point).
std::string_view TokenInner(std::string_view token) {
  if (token.empty()) return token;
  const size_t first_end = CodePointLength(token, 0);
  size_t last_start = 0;
  for (size_t pos = 0; pos < token.size(); pos += CodePointLength(token, pos)) last_start = pos;
  if (last_start < first_end) return {};
  return token.substr(first_end, last_start - first_end);
}

std::string ReplaceOneToken(std::string_view html, std::string_view inner, std::string_view uri) {
  std::string out;
  out.reserve(html.size());
  size_t pos = 0;
  while (pos < html.size()) {
    size_t bracket = html.find('[', pos);
    if (bracket == std::string_view::npos) break;
    size_t end = MatchImageToken(html, bracket, inner);
    out.append(html.substr(pos, bracket - pos));
    if (end == std::string_view::npos) {
      out.push_back('[');
      pos = bracket + 1;
      continue;
    }
    out.append("<img src=\"");
    out.append(uri);
    out.append("\"/>");
    pos = end;
  }
  out.append(html.substr(std::min(pos, html.size())));
  return out;
}

bool StartsWithIgnoringAsciiCase(std::string_view s, std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower_prefix[i]) return false;
  }
  return true;
}

bool EndsWithIgnoringAsciiCase(std::string_view s, std::string_view lower_suffix) {
  return s.size() >= lower_suffix.size() &&
         StartsWithIgnoringAsciiCase(s.substr(s.size() - lower_suffix.size()), lower_suffix);
}

}  // namespace

bool IsHtmlTable(std::string_view content) {
  return content.starts_with("<table") && content.ends_with("</table>");
}

Result<std::string> TableContentToHtml(std::string_view content) {
  if (IsHtmlTable(content)) return std::string(content);
  return ConvertOtslToHtml(content);
}

std::string ReplaceTableImageTokens(
    std::string_view html,
    const std::vector<std::pair<std::string, std::string>>& token_to_data_uri) {
  std::string out(html);
  if (out.empty()) return out;
  for (const auto& [token, uri] : token_to_data_uri) {
    out = ReplaceOneToken(out, TokenInner(token), uri);
  }
  return out;
}

std::string WrapTableFormulas(std::string_view html) {
  constexpr std::string_view kEqOpen = "<eq>";
  constexpr std::string_view kEqClose = "</eq>";
  std::string out;
  out.reserve(html.size() + 16);
  auto wrap = [&](std::string_view piece) {
    if (piece.empty()) return;
    out.append(WrapDelimited(WrapDelimited(piece, "\\(", "\\)"), "\\[", "\\]"));
  };
  // `(<eq>.*?</eq>)` segments; an <eq> without a later </eq> is plain text, and so is the rest.
  size_t pos = 0;
  while (pos < html.size()) {
    size_t start = html.find(kEqOpen, pos);
    if (start == std::string_view::npos) break;
    size_t end = html.find(kEqClose, start + kEqOpen.size());
    if (end == std::string_view::npos) break;
    wrap(html.substr(pos, start - pos));
    out.append(html.substr(start, end + kEqClose.size() - start));
    pos = end + kEqClose.size();
  }
  wrap(html.substr(std::min(pos, html.size())));
  return out;
}

std::optional<std::string> MarkdownTableToHtml(std::string_view content) {
  std::string_view trimmed = PythonStrip(content);
  if (trimmed.empty()) return std::nullopt;
  std::vector<std::string_view> lines = SplitPythonLines(trimmed);
  if (lines.size() < 2) return std::nullopt;
  for (std::string_view& line : lines) {
    line = PythonStrip(line);
    if (line.empty()) return std::nullopt;
  }
  if (!IsRowCandidate(lines[0]) || !IsSeparatorLine(lines[1])) return std::nullopt;
  std::vector<std::string> header = SplitRow(lines[0]);
  if (header.size() < 2 || SplitRow(lines[1]).size() != header.size()) return std::nullopt;

  std::string html = "<table><tr>";
  for (const std::string& cell : header) {
    html += "<th>";
    AppendHtmlEscaped(cell, &html);
    html += "</th>";
  }
  html += "</tr>";
  for (size_t i = 2; i < lines.size(); ++i) {
    if (!IsRowCandidate(lines[i])) return std::nullopt;
    std::vector<std::string> cells = SplitRow(lines[i]);
    if (cells.size() != header.size()) return std::nullopt;
    html += "<tr>";
    for (const std::string& cell : cells) {
      html += "<td>";
      AppendHtmlEscaped(cell, &html);
      html += "</td>";
    }
    html += "</tr>";
  }
  html += "</table>";
  return html;
}

std::string PureTableToHtml(std::string_view content) {
  std::string_view trimmed = PythonStrip(content);
  if (trimmed.empty()) return "";
  // ASCII case folding equals Python's str.lower() here: no other code point lowers to a
  // string containing one of the letters of "<table" / "</table>".
  if (StartsWithIgnoringAsciiCase(trimmed, "<table") &&
      EndsWithIgnoringAsciiCase(trimmed, "</table>")) {
    return std::string(trimmed);
  }
  if (std::optional<std::string> html = MarkdownTableToHtml(content)) return std::move(*html);
  bool has_otsl_token = false;
  for (std::string_view token : kOtslTokens) {
    has_otsl_token = has_otsl_token || content.find(token) != std::string_view::npos;
  }
  if (!has_otsl_token) return "";
  Result<std::string> html = TableContentToHtml(content);
  if (!html || PythonStrip(*html).empty()) return "";
  return std::move(*html);
}

std::string ProcessTableContent(
    std::string_view content,
    const std::vector<std::pair<std::string, std::string>>& token_to_data_uri, bool wrap_formulas,
    std::string* conversion_error) {
  Result<std::string> converted = TableContentToHtml(content);
  if (!converted && conversion_error != nullptr) *conversion_error = converted.error().ToString();
  std::string html = converted ? std::move(*converted) : std::string(content);
  html = ReplaceTableImageTokens(html, token_to_data_uri);
  return wrap_formulas ? WrapTableFormulas(html) : html;
}

}  // namespace mineru::pipeline
