// SPDX-License-Identifier: Apache-2.0
// The Python str operations MinerU's merges and the client's merge prompt rely on, on UTF-8
// text: repr() of a string and of a list of strings, and the one-code-point predicates
// str.isdigit / str.isdecimal / str.isupper / str.isalpha / str.isprintable.
//
// The predicates follow Unicode general categories from utf8proc (Unicode 15) plus the few code
// points Python classifies by another property (listed in python_str.cc, taken from CPython 3.11's
// unicodedata); CPython builds of another Unicode version may differ on newly assigned characters.
#pragma once

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
