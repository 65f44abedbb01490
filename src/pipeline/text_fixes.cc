// SPDX-License-Identifier: Apache-2.0
#include "pipeline/text_fixes.h"

#include <algorithm>
#include <array>
#include <vector>

#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

// First code point of every run of ten Nd digits, Unicode 15.0 (Python 3.12's unicodedata; 3.11
// and Unicode 14.0 lack Kawi U+11F50 and Nag Mundari U+1E4F0), ascending.
constexpr std::array<char32_t, 68> kDigitZeros = {
    0x0030,  0x0660,  0x06F0,  0x07C0,  0x0966,  0x09E6,  0x0A66,  0x0AE6,  0x0B66,  0x0BE6,
    0x0C66,  0x0CE6,  0x0D66,  0x0DE6,  0x0E50,  0x0ED0,  0x0F20,  0x1040,  0x1090,  0x17E0,
    0x1810,  0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,
    0xA8D0,  0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,  0x104A0, 0x10D30, 0x11066,
    0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
    0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8,
    0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950, 0x1FBF0,
};
static_assert(std::is_sorted(kDigitZeros.begin(), kDigitZeros.end()) && kDigitZeros.back() != 0);

constexpr std::string_view kInlineOpen = "\\(";
constexpr std::string_view kInlineClose = "\\)";
constexpr std::string_view kDisplayOpen = "\\[";
constexpr std::string_view kDisplayClose = "\\]";

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// `[–\d\-,\s]+` matches all of `inner`.
bool IsCitationLike(std::string_view inner) {
  if (inner.empty()) return false;
  for (size_t pos = 0; pos < inner.size();) {
    char32_t cp = 0;
    size_t n = text::WellFormedLength(inner, pos, &cp);
    if (n == 0) return false;
    if (cp != 0x2013 && cp != '-' && cp != ',' && !IsPythonDecimalDigit(cp) && !IsPythonSpace(cp)) {
      return false;
    }
    pos += n;
  }
  return true;
}

// Calls on_match(open, close) for each `OPEN X CLOSE` of `text` left to right, X at least
// min_inner bytes long (0 for `.*?`, 1 for `.+?`; OPEN and CLOSE are ASCII, so a byte count is a
// character count here), and on_text(piece) for the text between and around them.
template <class OnText, class OnMatch>
void ScanDelimited(std::string_view text, std::string_view open, std::string_view close,
                   size_t min_inner, OnText on_text, OnMatch on_match) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find(open, pos);
    if (start == std::string_view::npos) break;
    size_t end = text.find(close, start + open.size() + min_inner);
    if (end == std::string_view::npos) break;
    on_text(text.substr(pos, start - pos));
    on_match(text.substr(start, end + close.size() - start),
             text.substr(start + open.size(), end - start - open.size()));
    pos = end + close.size();
  }
  on_text(text.substr(std::min(pos, text.size())));
}

// fix_macro_spacing() for one macro: `MACRO([a-zA-Z])(?![a-zA-Z])` -> `MACRO letter` unless
// MACRO+letter is a known command.
std::string SpaceAfterMacro(std::string_view s, std::string_view macro) {
  constexpr std::array<std::string_view, 3> kKnown = {"\\top", "\\int", "\\inf"};
  std::string out;
  out.reserve(s.size() + 8);
  size_t pos = 0;
  while (pos < s.size()) {
    size_t letter = pos + macro.size();
    if (s[pos] == '\\' && s.compare(pos, macro.size(), macro) == 0 && letter < s.size() &&
        IsAsciiLetter(s[letter]) && !(letter + 1 < s.size() && IsAsciiLetter(s[letter + 1]))) {
      std::string_view with_letter = s.substr(pos, macro.size() + 1);
      out.append(macro);
      if (std::find(kKnown.begin(), kKnown.end(), with_letter) == kKnown.end()) out.push_back(' ');
      out.push_back(s[letter]);
      pos = letter + 1;
    } else {
      out.push_back(s[pos++]);
    }
  }
  return out;
}

std::string FixMacros(std::string_view inner) {
  constexpr std::array<std::string_view, 5> kMacros = {"\\cong", "\\to", "\\times", "\\subset",
                                                       "\\in"};
  std::string s(inner);
  for (std::string_view macro : kMacros) s = SpaceAfterMacro(s, macro);
  return s;
}

// process_match() of the underscore fix for one `\(inner\)`.
void AppendUnderscoresMoved(std::string_view match, std::string_view inner, std::string* out) {
  // re.split(r'(_{3,})', inner): text pieces and (greedy, so maximal) underscore runs.
  std::vector<std::string_view> parts;
  bool has_run = false;
  size_t text_start = 0;
  size_t pos = 0;
  while (pos < inner.size()) {
    if (inner[pos] != '_') {
      ++pos;
      continue;
    }
    size_t run_end = inner.find_first_not_of('_', pos);
    if (run_end == std::string_view::npos) run_end = inner.size();
    if (run_end - pos >= 3) {
      parts.push_back(inner.substr(text_start, pos - text_start));
      parts.push_back(inner.substr(pos, run_end - pos));
      has_run = true;
      text_start = run_end;
    }
    pos = run_end;
  }
  if (!has_run) {
    out->append(match);
    return;
  }
  parts.push_back(inner.substr(text_start));
  bool first = true;
  for (size_t i = 0; i < parts.size(); ++i) {
    bool is_run = i % 2 == 1;
    if (!is_run && PythonStrip(parts[i]).empty()) continue;
    if (!first) out->push_back(' ');
    first = false;
    if (is_run) {
      out->append(parts[i]);
    } else {
      out->append(kInlineOpen);
      out->append(parts[i]);
      out->append(kInlineClose);
    }
  }
}

}  // namespace

bool IsPythonDecimalDigit(char32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  // The run starting at or below cp.
  auto it = std::upper_bound(kDigitZeros.begin(), kDigitZeros.end(), cp);
  if (it == kDigitZeros.begin()) return false;
  return cp - *(it - 1) < 10;
}

std::string DisplayToInline(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ScanDelimited(
      text, kDisplayOpen, kDisplayClose, 0, [&](std::string_view piece) { out.append(piece); },
      [&](std::string_view, std::string_view inner) {
        bool keep = IsCitationLike(inner);
        out.append(keep ? kDisplayOpen : kInlineOpen);
        out.append(inner);
        out.append(keep ? kDisplayClose : kInlineClose);
      });
  return out;
}

std::string FixMacroSpacing(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  ScanDelimited(
      text, kInlineOpen, kInlineClose, 0, [&](std::string_view piece) { out.append(piece); },
      [&](std::string_view, std::string_view inner) {
        out.append(kInlineOpen);
        out.append(FixMacros(inner));
        out.append(kInlineClose);
      });
  return out;
}

std::string MoveUnderscoresOutside(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  ScanDelimited(
      text, kInlineOpen, kInlineClose, 1, [&](std::string_view piece) { out.append(piece); },
      [&](std::string_view match, std::string_view inner) {
        AppendUnderscoresMoved(match, inner, &out);
      });
  return out;
}

std::string FixTextBlock(std::string_view text) {
  return MoveUnderscoresOutside(FixMacroSpacing(DisplayToInline(text)));
}

}  // namespace mineru::pipeline
