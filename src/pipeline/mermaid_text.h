// SPDX-License-Identifier: Apache-2.0
// Character classes and small scanners shared by the Mermaid fixers (mermaid_fixes.cc,
// mermaid_repetition.cc, mermaid_strict.cc): the client's node-id class [A-Za-z0-9_\u4e00-\u9fa5\-]
// and Python whitespace runs, on UTF-8 text.
#pragma once

#include <cstddef>
#include <string_view>

#include "pipeline/python_str.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline::mermaid {

inline bool IsAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

inline bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// [A-Za-z0-9_\u4e00-\u9fa5\-]
inline bool IsIdCodePoint(char32_t cp) {
  if (cp < 0x80) return IsAsciiAlnum(static_cast<char>(cp)) || cp == '_' || cp == '-';
  return cp >= 0x4E00 && cp <= 0x9FA5;
}

// Length of the id character at s[pos], 0 when there is none (or pos is past the end).
inline size_t IdCharLength(std::string_view s, size_t pos) {
  if (pos >= s.size()) return 0;
  size_t len = 0;
  return IsIdCodePoint(pystr::CodePointAt(s, pos, &len)) ? len : 0;
}

// End of the run of id characters starting at pos (pos itself when there is none).
inline size_t IdRunEnd(std::string_view s, size_t pos) {
  while (size_t n = IdCharLength(s, pos)) pos += n;
  return pos;
}

// End of the run of Python whitespace starting at pos.
inline size_t SkipSpace(std::string_view s, size_t pos) {
  while (size_t n = PythonSpaceLength(s, pos)) pos += n;
  return pos;
}

// ^[A-Za-z_][A-Za-z0-9_]*$
inline bool IsValidId(std::string_view s) {
  if (s.empty() || !(IsAsciiLetter(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!IsAsciiAlnum(c) && c != '_') return false;
  }
  return true;
}

// `<\s*-\s*-\s*>` at s[i] (i < s.size()): the end of the match, 0 for none. Deterministic:
// whitespace never is '-' or '>'.
inline size_t MatchBidirectionalArrow(std::string_view s, size_t i) {
  if (s[i] != '<') return 0;
  size_t j = SkipSpace(s, i + 1);
  if (j >= s.size() || s[j] != '-') return 0;
  j = SkipSpace(s, j + 1);
  if (j >= s.size() || s[j] != '-') return 0;
  j = SkipSpace(s, j + 1);
  if (j >= s.size() || s[j] != '>') return 0;
  return j + 1;
}

}  // namespace mineru::pipeline::mermaid
