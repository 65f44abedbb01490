// SPDX-License-Identifier: Apache-2.0
// The repairs mineru-vl-utils 1.2.1 applies to the content of every `text` block (only that type:
// titles, captions and list items are left alone), in the order FixTextBlock() runs them:
//   post_process/text_display2inline.py, text_inline_spacing.py, text_move_underscores_outside.py.
//
// The client writes them as Python `re` substitutions; these are linear scanners with the same
// matches. Shared semantics:
//  * `\(X\)` and `\[X\]` are found like the non-greedy DOTALL patterns `\\\((.*?)\\\)`: the
//    opening pair is the first one from the scan position, the closing pair the first one after
//    it (X may span lines). An opening pair without a closing one after it is plain text, and so
//    is everything after it (no later opening pair can find a closing one either).
//  * "Whitespace" is Python's str.isspace() (python_text.h), "digit" Python's Unicode `\d`.
//  * Every function is total: any byte string is accepted, nothing throws, the output is linear
//    in the input, and bytes that are not UTF-8 pass through unchanged (edits happen only at
//    ASCII delimiters, so valid UTF-8 stays valid).
#pragma once

#include <string>
#include <string_view>

namespace mineru::pipeline {

// Python's Unicode `\d` (general category Nd) as of Unicode 15.0 (Python 3.12): the 68 runs of
// ten decimal digits, ASCII 0-9 and fullwidth U+FF10..FF19 among them.
bool IsPythonDecimalDigit(char32_t cp);

// text_display2inline.try_convert_display_to_inline: every `\[X\]` becomes `\(X\)`, except when
// X is non-empty and consists only of U+2013 (en dash), U+002D (hyphen-minus), U+002C (comma),
// decimal digits and whitespace (a citation such as `\[3–5\]`, kept as `\[X\]`). X is not
// trimmed. Other dashes (U+2010, U+2012, U+2014, U+2212) and invalid UTF-8 make X a formula.
std::string DisplayToInline(std::string_view text);

// text_inline_spacing.try_fix_macro_spacing_in_markdown: inside each `\(X\)` (X may be empty)
// and for each macro in the order \cong, \to, \times, \subset, \in: where the macro is followed by
// exactly one ASCII letter that is not itself followed by an ASCII letter, a space goes between
// them (`\toB` -> `\to B`), except for `\top`, `\int` and `\inf`. Text outside `\(...\)` is
// untouched.
std::string FixMacroSpacing(std::string_view text);

// text_move_underscores_outside.try_move_underscores_outside: for each `\(X\)` with X non-empty,
// X is split at runs of three or more `_`. Without such a run the match stays; otherwise it
// becomes the runs (bare) and the other pieces that are not all whitespace (as `\(piece\)`,
// untrimmed), joined by single spaces: `\( a ___ b \)` -> `\( a \) ___ \( b \)`.
std::string MoveUnderscoresOutside(std::string_view text);

// The chain for `text` blocks: DisplayToInline, FixMacroSpacing, MoveUnderscoresOutside.
std::string FixTextBlock(std::string_view text);

}  // namespace mineru::pipeline
