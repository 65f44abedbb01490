// SPDX-License-Identifier: Apache-2.0
// Python's idea of whitespace on UTF-8 text, which the client's and MinerU's string handling
// (str.strip, str.isspace, regex \s) follows and our reimplementation must match.
#pragma once

#include <cstddef>
#include <string_view>

namespace mineru::pipeline {

// Python's str.isspace() for one code point (what the client's str.strip() and regex \s test):
// U+0009..000D, U+001C..001F, U+0020, U+0085, U+00A0, U+1680, U+2000..200A, U+2028, U+2029,
// U+202F, U+205F, U+3000.
bool IsPythonSpace(char32_t cp);

// Byte length of the Python-whitespace code point starting at s[pos]; 0 when there is none
// (also for bytes that are not UTF-8).
size_t PythonSpaceLength(std::string_view s, size_t pos);

// Python's str.strip() without arguments: s less leading and trailing Python whitespace.
std::string_view PythonStrip(std::string_view s);

}  // namespace mineru::pipeline
