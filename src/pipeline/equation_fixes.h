// SPDX-License-Identifier: Apache-2.0
// The LaTeX repairs MinerU2.5's client applies to every recognised equation before it is wrapped
// in \[ ... \] (spec/mineru.md section 2.7 step 3, client post_process/equation_*.py@0.1.22).
// Each repair is its own function; FixEquation() applies them in the spec's order a..f. All of
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

// 2.7 step 3a, equation_left_right.py. When the \left and \right counts differ and the
// \begin{array} and \end{array} counts are equal: the equation is trimmed and split at `&`,
// `\\`, `\begin{array}{...}` (letters and whitespace in the column spec only) and `\end{array}`;
// each fragment is trimmed and tagged with its innermost array cell (fragments outside every
// array share one cell; with no array at all only the first fragment takes part, as in the
// client). Within each cell whose counts differ, the delimiters are paired with a stack across
// its fragments; an unmatched `\left X` gets " \right." appended right after it, an unmatched
// `\right X` gets "\left. " prepended, and whitespace-only text between delimiters is dropped.
// The fragments are then concatenated without separators. Otherwise the input is unchanged.
std::string FixLeftRight(std::string_view latex);

// 2.7 step 3b, equation_double_subscript.py: removes every match of
// `_\s*{G}\s*_\s*{G}` where G is a run of non-brace characters and brace groups one level deep.
std::string RemoveDoubleSubscripts(std::string_view latex);

// 2.7 step 3c, equation_fix_eqqcolon.py: `\eqqcolon` -> `=:`, then `\coloneqq` -> `:=`.
std::string FixColonEquals(std::string_view latex);

// 2.7 step 3d, equation_big.py: for each size command \big \bigl \bigr \bigm \bigg \biggl \biggr
// \biggm \Big \Bigl \Bigr \Bigm \Bigg \Biggl \Biggr \Biggm, `\cmd{D}` and `\cmd {D}` (one space)
// become `\cmdD` for D in ( ) \{ \} | \| [ ], and `\cmd\langle ` / `\cmd\rangle ` (trailing space)
// for D = \langle / \rangle; then `\bigtimes` -> `\times`.
// The spec's `\cmdD` is followed for every command; the client's own rules for [ and ] after
// \biggl \biggm \Biggl \Biggm write `\[` / `\]` instead (a backslash its regex template keeps).
std::string FixSizedDelimiters(std::string_view latex);

// 2.7 step 3e, equation_leq.py: every `<` becomes `< `.
std::string SpaceLessThan(std::string_view latex);

// 2.7 step 3f, equation_unbalanced_braces.py: deletes every `{` and `}` that is not escaped (not
// preceded by an odd number of backslashes) and has no partner in a stack matching of the
// unescaped braces.
std::string RemoveUnbalancedBraces(std::string_view latex);

// Steps 3a..3f in the spec's order.
std::string FixEquation(std::string_view latex);

}  // namespace mineru::pipeline
