// SPDX-License-Identifier: Apache-2.0
#include "pipeline/html_text.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

// Python html._invalid_charrefs: what a numeric reference to one of these values means.
struct CharRef {
  uint32_t value;
  char32_t replacement;
};
constexpr std::array<CharRef, 34> kInvalidCharRefs = {{
    {0x00, 0xFFFD}, {0x0D, 0x0D},   {0x80, 0x20AC}, {0x81, 0x81},   {0x82, 0x201A}, {0x83, 0x0192},
    {0x84, 0x201E}, {0x85, 0x2026}, {0x86, 0x2020}, {0x87, 0x2021}, {0x88, 0x02C6}, {0x89, 0x2030},
    {0x8A, 0x0160}, {0x8B, 0x2039}, {0x8C, 0x0152}, {0x8D, 0x8D},   {0x8E, 0x017D}, {0x8F, 0x8F},
    {0x90, 0x90},   {0x91, 0x2018}, {0x92, 0x2019}, {0x93, 0x201C}, {0x94, 0x201D}, {0x95, 0x2022},
    {0x96, 0x2013}, {0x97, 0x2014}, {0x98, 0x02DC}, {0x99, 0x2122}, {0x9A, 0x0161}, {0x9B, 0x203A},
    {0x9C, 0x0153}, {0x9D, 0x9D},   {0x9E, 0x017E}, {0x9F, 0x0178},
}};

// Python html._invalid_codepoints: references to these resolve to nothing.
bool IsInvalidCodePoint(uint32_t v) {
  if ((v >= 0x01 && v <= 0x08) || v == 0x0B || (v >= 0x0E && v <= 0x1F)) return true;
  if (v >= 0x7F && v <= 0x9F) return true;
  if (v >= 0xFDD0 && v <= 0xFDEF) return true;
  return (v & 0xFFFE) == 0xFFFE && v <= 0x10FFFF;  // U+xFFFE and U+xFFFF of every plane
}

// The known subset of Python's html5 table (see the header).
struct NamedRef {
  std::string_view name;  // as Python's table spells it, with or without the ';'
  char32_t value;
};
constexpr std::array<NamedRef, 21> kNamedRefs = {{
    {"amp;", '&'},   {"amp", '&'},    {"AMP;", '&'},   {"AMP", '&'},  {"lt;", '<'},   {"lt", '<'},
    {"LT;", '<'},    {"LT", '<'},     {"Lt;", 0x226A}, {"gt;", '>'},  {"gt", '>'},    {"GT;", '>'},
    {"GT", '>'},     {"Gt;", 0x226B}, {"quot;", '"'},  {"quot", '"'}, {"QUOT;", '"'}, {"QUOT", '"'},
    {"apos;", '\''}, {"nbsp;", 0xA0}, {"nbsp", 0xA0},
}};

const NamedRef* FindNamed(std::string_view name) {
  for (const NamedRef& ref : kNamedRefs) {
    if (ref.name == name) return &ref;
  }
  return nullptr;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// Python's resolution of a numeric reference to `value` (saturated at 0x110000, which already
// means "too large").
void AppendNumericRef(uint32_t value, std::string* out) {
  for (const CharRef& ref : kInvalidCharRefs) {
    if (ref.value == value) {
      text::AppendUtf8(ref.replacement, out);
      return;
    }
  }
  if ((value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) {
    text::AppendUtf8(text::kReplacementCharacter, out);
    return;
  }
  if (IsInvalidCodePoint(value)) return;
  text::AppendUtf8(static_cast<char32_t>(value), out);
}

// A character that may be part of a reference name ([^\t\n\f <&#;]).
bool IsNameByte(char c) {
  return c != '\t' && c != '\n' && c != '\f' && c != ' ' && c != '<' && c != '&' && c != '#' &&
         c != ';';
}

// Tries to resolve the reference starting at text[amp] == '&'. Returns the bytes consumed after
// the '&' (0: not a reference, the '&' stays) and appends the resolution to `out`.
size_t ResolveReference(std::string_view text, size_t amp, std::string* out) {
  size_t pos = amp + 1;
  if (pos < text.size() && text[pos] == '#') {
    size_t start = pos + 1;
    uint32_t value = 0;
    size_t end = start;
    if (start < text.size() && (text[start] == 'x' || text[start] == 'X')) {
      end = start + 1;
      while (end < text.size() && IsHexDigit(text[end])) {
        value = value >= 0x110000 ? value : value * 16 + HexValue(text[end]);
        ++end;
      }
      if (end == start + 1) return 0;
    } else {
      while (end < text.size() && IsDigit(text[end])) {
        value = value >= 0x110000 ? value : value * 10 + (text[end] - '0');
        ++end;
      }
      if (end == start) return 0;
    }
    if (value > 0x110000) value = 0x110000;
    if (end < text.size() && text[end] == ';') ++end;
    AppendNumericRef(value, out);
    return end - amp - 1;
  }
  // A name: 1–32 characters, then an optional ';'.
  size_t end = pos;
  size_t chars = 0;
  while (end < text.size() && chars < 32 && IsNameByte(text[end])) {
    size_t next = end;
    char32_t cp = 0;
    const size_t n = text::WellFormedLength(text, end, &cp);
    next += n == 0 ? 1 : n;
    end = next;
    ++chars;
  }
  if (chars == 0) return 0;
  if (end < text.size() && text[end] == ';') ++end;
  const std::string_view name = text.substr(pos, end - pos);
  if (const NamedRef* ref = FindNamed(name)) {
    text::AppendUtf8(ref->value, out);
    return end - amp - 1;
  }
  // The longest known prefix of at least two characters, shorter than the whole name; all known
  // names are ASCII, so byte lengths are character lengths here.
  for (size_t len = name.size() - 1; len >= 2 && len < name.size(); --len) {
    if (const NamedRef* ref = FindNamed(name.substr(0, len))) {
      text::AppendUtf8(ref->value, out);
      out->append(name.substr(len));
      return end - amp - 1;
    }
  }
  out->push_back('&');
  out->append(name);
  return end - amp - 1;
}

}  // namespace

void AppendHtmlEscaped(std::string_view text, std::string* out, bool quote) {
  for (char c : text) {
    switch (c) {
      case '&':
        out->append("&amp;");
        break;
      case '<':
        out->append("&lt;");
        break;
      case '>':
        out->append("&gt;");
        break;
      case '"':
        quote ? out->append("&quot;") : out->append(1, c);
        break;
      case '\'':
        quote ? out->append("&#x27;") : out->append(1, c);
        break;
      default:
        out->push_back(c);
    }
  }
}

std::string HtmlEscapeNoQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendHtmlEscaped(text, &out, /*quote=*/false);
  return out;
}

std::string HtmlUnescape(std::string_view text) {
  if (text.find('&') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t amp = text.find('&', pos);
    if (amp == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, amp - pos));
    const size_t consumed = ResolveReference(text, amp, &out);
    if (consumed == 0) out.push_back('&');
    pos = amp + 1 + consumed;
  }
  return out;
}

std::string FormatEmbeddedTableHtml(std::string_view html, const MarkdownOptions& options) {
  // src="(?!data:)([^"]+)" → src="<dir>/\1".
  std::string prefixed;
  if (!html.empty() && !options.image_dir.empty()) {
    constexpr std::string_view kSrc = "src=\"";
    size_t pos = 0;
    while (pos < html.size()) {
      const size_t at = html.find(kSrc, pos);
      if (at == std::string_view::npos) break;
      const size_t value = at + kSrc.size();
      const size_t close = html.find('"', value);
      if (close == std::string_view::npos) break;  // no later src="… can close either
      if (close == value || html.substr(value, 5) == "data:") {
        // Not a match here; the next one cannot start inside `src="`.
        prefixed.append(html.substr(pos, value - pos));
        pos = value;
        continue;
      }
      prefixed.append(html.substr(pos, value - pos));
      prefixed.append(options.image_dir);
      prefixed.push_back('/');
      prefixed.append(html.substr(value, close + 1 - value));
      pos = close + 1;
    }
    prefixed.append(html.substr(std::min(pos, html.size())));
  } else {
    prefixed.assign(html);
  }
  // <eq>(.*?)</eq> (DOTALL) → " <left>unescape(\1)<right> ".
  constexpr std::string_view kOpen = "<eq>";
  constexpr std::string_view kClose = "</eq>";
  std::string out;
  out.reserve(prefixed.size());
  const std::string_view source = prefixed;
  size_t pos = 0;
  while (pos < source.size()) {
    const size_t open = source.find(kOpen, pos);
    if (open == std::string_view::npos) break;
    const size_t close = source.find(kClose, open + kOpen.size());
    if (close == std::string_view::npos) break;
    out.append(source.substr(pos, open - pos));
    out.push_back(' ');
    out.append(options.inline_left);
    out.append(HtmlUnescape(source.substr(open + kOpen.size(), close - open - kOpen.size())));
    out.append(options.inline_right);
    out.push_back(' ');
    pos = close + kClose.size();
  }
  out.append(source.substr(std::min(pos, source.size())));
  return out;
}

}  // namespace mineru::pipeline
