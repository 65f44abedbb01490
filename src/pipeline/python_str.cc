// SPDX-License-Identifier: Apache-2.0
#include "pipeline/python_str.h"

#include <utf8proc.h>

#include <array>
#include <utility>

#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

utf8proc_category_t Category(char32_t cp) {
  if (cp > 0x10FFFF) return UTF8PROC_CATEGORY_CN;
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

using Range = std::pair<char32_t, char32_t>;  // inclusive

template <size_t N>
bool InRanges(const std::array<Range, N>& ranges, char32_t cp) {
  for (const Range& r : ranges) {
    if (cp >= r.first && cp <= r.second) return true;
  }
  return false;
}

// Numeric_Type=Digit characters outside Nd: what str.isdigit() accepts beyond str.isdecimal()
// (CPython 3.11 unicodedata).
constexpr std::array<Range, 20> kDigitNotDecimal = {{
    {0xB2, 0xB3},       {0xB9, 0xB9},       {0x1369, 0x1371},   {0x19DA, 0x19DA},
    {0x2070, 0x2070},   {0x2074, 0x2079},   {0x2080, 0x2089},   {0x2460, 0x2468},
    {0x2474, 0x247C},   {0x2488, 0x2490},   {0x24EA, 0x24EA},   {0x24F5, 0x24FD},
    {0x24FF, 0x24FF},   {0x2776, 0x277E},   {0x2780, 0x2788},   {0x278A, 0x2792},
    {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A},
}};

// Other_Uppercase characters outside Lu: what str.isupper() accepts beyond category Lu.
constexpr std::array<Range, 5> kUpperNotLu = {{
    {0x2160, 0x216F},
    {0x24B6, 0x24CF},
    {0x1F130, 0x1F149},
    {0x1F150, 0x1F169},
    {0x1F170, 0x1F189},
}};

void AppendHex(char32_t value, int digits, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
    out->push_back(kHex[(value >> shift) & 0xF]);
  }
}

}  // namespace

bool IsPythonDecimal(char32_t cp) { return Category(cp) == UTF8PROC_CATEGORY_ND; }

bool IsPythonDigit(char32_t cp) { return IsPythonDecimal(cp) || InRanges(kDigitNotDecimal, cp); }

bool IsPythonUpper(char32_t cp) {
  return Category(cp) == UTF8PROC_CATEGORY_LU || InRanges(kUpperNotLu, cp);
}

bool IsPythonAlpha(char32_t cp) {
  const utf8proc_category_t c = Category(cp);
  return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
         c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_LO;
}

bool IsPythonPrintable(char32_t cp) {
  if (cp == ' ') return true;
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

std::string PythonRepr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back(quote);
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    size_t n = text::WellFormedLength(s, pos, &cp);
    if (n == 0) {
      cp = text::kReplacementCharacter;
      n = text::MaximalSubpartLength(s, pos);
    }
    pos += n;
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x80 ? (cp < 0x20 || cp == 0x7F) : !IsPythonPrintable(cp)) {
      if (cp < 0x100) {
        out += "\\x";
        AppendHex(cp, 2, &out);
      } else if (cp < 0x10000) {
        out += "\\u";
        AppendHex(cp, 4, &out);
      } else {
        out += "\\U";
        AppendHex(cp, 8, &out);
      }
    } else {
      text::AppendUtf8(cp, &out);
    }
  }
  out.push_back(quote);
  return out;
}

std::string PythonListRepr(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += PythonRepr(items[i]);
  }
  out += "]";
  return out;
}

}  // namespace mineru::pipeline

namespace mineru::pipeline::pystr {
namespace {

utf8proc_category_t Category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

bool IsLineBreak(char32_t cp) {
  return (cp >= 0x0A && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 || cp == 0x2028 ||
         cp == 0x2029;
}

}  // namespace

char32_t CodePointAt(std::string_view s, size_t pos, size_t* length) {
  const auto byte = static_cast<unsigned char>(s[pos]);
  if (byte < 0x80) {
    *length = 1;
    return byte;
  }
  char32_t cp = 0;
  *length = text::WellFormedLength(s, pos, &cp);
  if (*length > 0) return cp;
  *length = 1;
  return text::kReplacementCharacter;
}

size_t Length(std::string_view s) {
  size_t count = 0;
  for (size_t i = 0, n = 0; i < s.size(); i += n, ++count) CodePointAt(s, i, &n);
  return count;
}

std::string_view Prefix(std::string_view s, size_t n) {
  size_t i = 0;
  for (size_t taken = 0, len = 0; i < s.size() && taken < n; i += len, ++taken) {
    CodePointAt(s, i, &len);
  }
  return s.substr(0, i);
}

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 0;
    const char32_t cp = CodePointAt(s, i, &len);
    if (!IsLineBreak(cp)) {
      i += len;
      continue;
    }
    lines.push_back(s.substr(start, i - start));
    i += (cp == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ? 2 : len;
    start = i;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

std::string Lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  AppendLower(s, &out);
  return out;
}

void AppendLower(std::string_view s, std::string* out) {
  for (size_t i = 0, len = 0; i < s.size(); i += len) {
    const auto byte = static_cast<unsigned char>(s[i]);
    if (byte < 0x80) {
      out->push_back(byte >= 'A' && byte <= 'Z' ? static_cast<char>(byte + 32) : s[i]);
      len = 1;
      continue;
    }
    char32_t cp = 0;
    len = text::WellFormedLength(s, i, &cp);
    if (len == 0) {  // not UTF-8: copied through
      len = 1;
      out->push_back(s[i]);
    } else if (cp == 0x130) {
      out->append("i\xCC\x87");  // U+0069 U+0307
    } else {
      text::AppendUtf8(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))),
                       out);
    }
  }
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

bool IsWordChar(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           cp == '_';
  }
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

std::string CollapseWhitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (size_t n = PythonSpaceLength(s, i)) {
      while (n > 0) {
        i += n;
        n = PythonSpaceLength(s, i);
      }
      out.push_back(' ');
      continue;
    }
    out.push_back(s[i++]);
  }
  return out;
}

size_t Count(std::string_view s, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = s.find(needle); pos != std::string_view::npos;
       pos = s.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace mineru::pipeline::pystr
