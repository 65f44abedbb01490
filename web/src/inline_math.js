// SPDX-License-Identifier: Apache-2.0
// Formulas inside a line of text: $$...$$ (display) and $...$ (inline). One definition for the
// Markdown tokenizer (markdown.js) and for the text of raw HTML that Markdown never tokenizes:
// MinerU 3.4.4 writes a table's <eq> formulas as " $...$ " into the table's HTML and an
// algorithm's formulas as $...$ into a <div class="mineru-algorithm">.
//
// The opening $ is not followed by a space and the closing one neither preceded by one nor
// followed by a digit, so "$5 and $10" stays text. Each attempt stops at the next unescaped $,
// so scanning a text is linear in its length.

const DISPLAY = /\$\$((?:\\.|[^\\$])+?)\$\$/y;
const INLINE = /\$(?![\s$])((?:\\.|[^\\$\n])+?)(?<!\s)\$(?!\d)/y;

// The formula starting at src[at] ({raw, text, display}), or null.
export function matchMathAt(src, at = 0) {
  DISPLAY.lastIndex = at;
  let m = DISPLAY.exec(src);
  if (m) return { raw: m[0], text: m[1].trim(), display: true };
  INLINE.lastIndex = at;
  m = INLINE.exec(src);
  if (m) return { raw: m[0], text: m[1], display: false };
  return null;
}

// Splits text into pieces: strings, and {tex, display} for each formula. A $ preceded by an odd
// number of backslashes is a literal dollar.
export function splitInlineMath(text) {
  const pieces = [];
  let plainFrom = 0;
  let i = text.indexOf('$');
  while (i >= 0) {
    let backslashes = 0;
    while (i - backslashes > 0 && text[i - backslashes - 1] === '\\') backslashes++;
    const m = backslashes % 2 === 0 ? matchMathAt(text, i) : null;
    if (m) {
      if (i > plainFrom) pieces.push(text.slice(plainFrom, i));
      pieces.push({ tex: m.text, display: m.display });
      plainFrom = i + m.raw.length;
      i = text.indexOf('$', plainFrom);
    } else {
      i = text.indexOf('$', i + 1);
    }
  }
  if (plainFrom < text.length) pieces.push(text.slice(plainFrom));
  return pieces;
}
