// SPDX-License-Identifier: Apache-2.0
#include "pipeline/python_text.h"

#include "text/utf8.h"

namespace mineru::pipeline {

bool IsPythonSpace(char32_t cp) {
  if (cp >= 0x09 && cp <= 0x0D) return true;
  if (cp >= 0x1C && cp <= 0x20) return true;
  if (cp < 0x85) return false;
  if (cp == 0x85 || cp == 0xA0 || cp == 0x1680) return true;
  if (cp >= 0x2000 && cp <= 0x200A) return true;
  return cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

size_t PythonSpaceLength(std::string_view s, size_t pos) {
  if (pos >= s.size()) return 0;
  auto byte = static_cast<unsigned char>(s[pos]);
  if (byte < 0x80) return IsPythonSpace(byte) ? 1 : 0;
  char32_t cp = 0;
  size_t n = text::WellFormedLength(s, pos, &cp);
  return n > 0 && IsPythonSpace(cp) ? n : 0;
}

std::string_view PythonStrip(std::string_view s) {
  size_t begin = 0;
  while (size_t n = PythonSpaceLength(s, begin)) begin += n;
  size_t end = s.size();
  while (end > begin) {
    // Step back over one code point (continuation bytes are 10xxxxxx).
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (PythonSpaceLength(s, start) != end - start) break;
    end = start;
  }
  return s.substr(begin, end - begin);
}

}  // namespace mineru::pipeline
