// SPDX-License-Identifier: Apache-2.0
// More of Python's str behaviour on UTF-8 text, for the image-analysis fixers (mineru-vl-utils
// 1.2.1 post_process/image_analysis_postprocess.py, chart_invalid_repetition.py and the
// mermaid_*.py files), which lean on str.splitlines(), str.lower(), len() in code points, the
// regex classes \s and \w and repr() in their messages. Whitespace itself is python_text.h.
//
// Every function is total: bytes that are not UTF-8 read as one U+FFFD each and are copied
// through unchanged, so valid UTF-8 in gives valid UTF-8 out. All are linear in their input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mineru::pipeline::pystr {

// The code point at s[pos] (pos < s.size()) and its byte length; an ill-formed byte reads as
// U+FFFD of length 1.
char32_t CodePointAt(std::string_view s, size_t pos, size_t* length);

// len(s): the number of code points (an ill-formed byte counts as one).
size_t Length(std::string_view s);

// The first `n` code points of s (s[:n]).
std::string_view Prefix(std::string_view s, size_t n);

// str.splitlines(): \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, U+0085, U+2028 and U+2029 end a
// line; a trailing line break does not start an empty line; "" gives no lines.
std::vector<std::string_view> SplitLines(std::string_view s);

// str.lower(): the Unicode simple lowercase mapping of every code point, plus U+0130 -> "i̇"
// (its SpecialCasing full mapping). The context-dependent final sigma is not applied (capital
// sigma always becomes U+03C3); nothing in these fixers compares Greek word endings.
std::string Lower(std::string_view s);
void AppendLower(std::string_view s, std::string* out);

// ASCII-only lowering (what the fixers need where only ASCII letters can matter).
std::string AsciiLower(std::string_view s);

// Python's regex \w on str patterns: '_' and the code points str.isalnum() accepts (Unicode
// letters L*, and numbers Nd, Nl, No).
bool IsWordChar(char32_t cp);

// re.sub(r"\s+", " ", s): every run of Python whitespace becomes one space.
std::string CollapseWhitespace(std::string_view s);

// str.count(needle) for a non-empty needle (non-overlapping, left to right).
size_t Count(std::string_view s, std::string_view needle);

// repr(s) for a str: single quotes unless s contains ' and no ", backslash and the quote
// escaped, \t \n \r, other non-printable code points (categories Cc Cf Cs Co Cn Zl Zp, and Zs
// other than the space) as \xhh, \uhhhh or \Uhhhhhhhh.
std::string Repr(std::string_view s);

}  // namespace mineru::pipeline::pystr
