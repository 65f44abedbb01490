// SPDX-License-Identifier: Apache-2.0
// The LaTeX repairs MinerU2.5's client applies to every recognised equation before it is wrapped
// in \[ ... \]. Each repair is its own function. FixEquation() is the chain of mineru-vl-utils
// 0.1.22 (post_process/equation_*.py; the 2509 profile), FixEquationPro() the chain of
// mineru-vl-utils 1.2.1 (post_process/__init__.py _process_equation; the pro profile), which adds
// a delimiter trim in front and guards the left/right fix against broken array nesting. All of
// them are total: any byte string is accepted, nothing aborts, and valid UTF-8 stays valid UTF-8
// (every edit happens at ASCII bytes or whole code points).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pipeline/python_text.h"

namespace mineru::pipeline {

// Number of \left and \right delimiters the client's counting regexes find (non-overlapping,
// left to right). Left: \left followed by \lbrace \lVert \lvert \rvert \rVert \vert \Vert \lfloor
// \lbrack \langle | \| [ ] ( \{ \} or '.'. Right: \right followed by \rbrace \lVert \lvert \rvert
// \rVert \vert \Vert \rfloor \rbrack \rangle | \| ] [ ) \} \{, or by any one character other than
// a newline (the client's pattern ends in an unescaped `\right.`, so "\rightarrow" counts too).
size_t CountLeftDelimiters(std::string_view latex);
size_t CountRightDelimiters(std::string_view latex);

// equation_left_right.py. When the \left and \right counts differ and the \begin{array} and
// \end{array} counts are equal: the equation is trimmed and split at `&`,
// `\\`, `\begin{array}{...}` (letters and whitespace in the column spec only) and `\end{array}`;
// each fragment is trimmed and tagged with its innermost array cell (fragments outside every
// array share one cell; with no array at all only the first fragment takes part, as in the
// client). Within each cell whose counts differ, the delimiters are paired with a stack across
// its fragments; an unmatched `\left X` gets " \right." appended right after it, an unmatched
// `\right X` gets "\left. " prepended, and whitespace-only text between delimiters is dropped.
// The fragments are then concatenated without separators. Otherwise the input is unchanged.
std::string FixLeftRight(std::string_view latex);

// equation_double_subscript.py: removes every match of `_\s*{G}\s*_\s*{G}` where G is a run of
// non-brace characters and brace groups one level deep.
std::string RemoveDoubleSubscripts(std::string_view latex);

// equation_fix_eqqcolon.py: `\eqqcolon` -> `=:`, then `\coloneqq` -> `:=`.
std::string FixColonEquals(std::string_view latex);

// equation_big.py: for each size command \big \bigl \bigr \bigm \bigg \biggl \biggr
// \biggm \Big \Bigl \Bigr \Bigm \Bigg \Biggl \Biggr \Biggm, `\cmd{D}` and `\cmd {D}` (one space)
// become `\cmdD` for D in ( ) \{ \} | \| [ ], and `\cmd\langle ` / `\cmd\rangle ` (trailing space)
// for D = \langle / \rangle; then `\bigtimes` -> `\times`.
// `\cmdD` is written for every command; the client's own rules for [ and ] after \biggl \biggm
// \Biggl \Biggm write `\[` / `\]` instead (a backslash its regex template keeps).
std::string FixSizedDelimiters(std::string_view latex);

// equation_leq.py: every `<` becomes `< `.
std::string SpaceLessThan(std::string_view latex);

// equation_unbalanced_braces.py: deletes every `{` and `}` that is not escaped (not
// preceded by an odd number of backslashes) and has no partner in a stack matching of the
// unescaped braces.
std::string RemoveUnbalancedBraces(std::string_view latex);

// The 0.1.22 chain: FixLeftRight, RemoveDoubleSubscripts, FixColonEquals, FixSizedDelimiters,
// SpaceLessThan, RemoveUnbalancedBraces.
std::string FixEquation(std::string_view latex);

// --- mineru-vl-utils 1.2.1 ---

// equation_delimeters.try_fix_equation_delimeters: trim (Python whitespace), drop a leading `\[`
// and a trailing `\]` (each on its own, exact two-byte prefix / suffix), trim again.
std::string TrimEquationDelimiters(std::string_view latex);

// equation_left_right.try_match_equation_left_right as of 1.2.1: FixLeftRight(), except that
// the input comes back unchanged when the array nesting of its fragments is broken: walking the
// fragments, an `\end{array}` with no open array (a fragment containing `\begin{array}`), or
// arrays still open at the end (0.1.22 raised an IndexError for the former). As a resource
// bound, a formula whose nesting depth x (fragments + arrays) exceeds kMaxGuardedLeftRightWork
// also comes back unchanged: the client's cell tagging visits every fragment once per enclosing
// array, so its work grows with that product (2^24 is e.g. a million fragments in arrays nested
// 16 deep; a real formula stays far below).
inline constexpr size_t kMaxGuardedLeftRightWork = size_t{1} << 24;
std::string FixLeftRightGuarded(std::string_view latex);

// The 1.2.1 chain: TrimEquationDelimiters, FixLeftRightGuarded, then RemoveDoubleSubscripts ..
// RemoveUnbalancedBraces as in FixEquation(). The caller wraps the result (WrapDisplayEquation).
std::string FixEquationPro(std::string_view latex);

// post_process._add_equation_brackets (both versions): trim; prefix "\[" + newline unless the
// result starts with `\[`; suffix newline + "\]" unless it ends with `\]`.
std::string WrapDisplayEquation(std::string_view content);

}  // namespace mineru::pipeline
