// SPDX-License-Identifier: Apache-2.0
// The Python str behaviour MinerU's merges, the client's merge prompt and its image-analysis
// fixers rely on, on UTF-8 text: repr() of a string and of a list of strings; the one-code-point
// predicates str.isdigit / str.isdecimal / str.isupper / str.isalpha / str.isprintable; and, in
// namespace pystr, str.splitlines(), str.lower(), len() in code points, the regex classes \s and
// \w (mineru-vl-utils 1.2.1 post_process/image_analysis_postprocess.py,
// chart_invalid_repetition.py, mermaid_*.py). Whitespace itself is python_text.h.
//
// The predicates follow Unicode general categories from utf8proc (Unicode 15) plus the few code
// points Python classifies by another property (listed in python_str.cc, taken from CPython 3.11's
// unicodedata); CPython builds of another Unicode version may differ on newly assigned characters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mineru::pipeline {

// str.isdecimal() (and regex \d): general category Nd.
bool IsPythonDecimal(char32_t cp);
// str.isdigit(): Nd plus the Numeric_Type=Digit characters (superscripts, circled digits, ...).
bool IsPythonDigit(char32_t cp);
// str.isupper() of one character: Lu plus Other_Uppercase (Roman numerals, circled letters, ...).
bool IsPythonUpper(char32_t cp);
// str.isalpha(): general categories Lu, Ll, Lt, Lm, Lo.
bool IsPythonAlpha(char32_t cp);
// str.isprintable() of one character: everything except categories Cc, Cf, Cs, Co, Cn, Zl, Zp
// and Zs, the ASCII space excepted.
bool IsPythonPrintable(char32_t cp);

// repr(s): single quotes, or double quotes when s contains ' and no "; backslash and the chosen
// quote escaped with a backslash; \t, \n, \r as escapes; other non-printable code points as
// \xhh, \uhhhh or \Uhhhhhhhh (lower-case hex); printable non-ASCII literally. Bytes that are not
// UTF-8 (a Python str cannot hold them) are shown as U+FFFD.
std::string PythonRepr(std::string_view s);

// repr(list_of_str): "[" + the items' repr joined by ", " + "]".
std::string PythonListRepr(const std::vector<std::string>& items);

}  // namespace mineru::pipeline

namespace mineru::pipeline::pystr {

// Every function here is total: bytes that are not UTF-8 read as one U+FFFD each and are copied
// through unchanged, so valid UTF-8 in gives valid UTF-8 out. All are linear in their input.

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

}  // namespace mineru::pipeline::pystr
