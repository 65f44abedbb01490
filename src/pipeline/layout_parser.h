// SPDX-License-Identifier: Apache-2.0
// Step 1 of MinerU2.5's two-step extraction: the layout request's answer -> the page's regions
// (mineru-vl-utils parse_layout_output). The parser follows the robust grammar of later clients
// (0.2+), which also reads every 2509 answer: one pass over the whole text (Python `re.finditer`
// with DOTALL), regions separated by newlines, spaces or nothing:
//
//   <|box_start|>X1 Y1 X2 Y2<|box_end|><|ref_start|>LABEL<|ref_end|>[ROT]TAIL
//
// X/Y: ASCII decimal integers separated by whitespace; LABEL: word characters; ROT: an optional
// rotate token right after <|ref_end|>; TAIL: anything up to the next <|box_start|> (ignored).
// A <|box_start|> whose head does not match is skipped (with a warning) and scanning resumes at
// the next <|box_start|>, exactly as the regex scan does.
//
// Per region, in this order (mineru-vl-utils 0.2+ / 1.2.1 mineru_client.py):
//   1. Any coordinate < 0 or > 1000 -> drop; x1/x2 and y1/y2 swapped when reversed; zero width or
//      height -> drop; then divided by 1000.
//   2. Label lower-cased; `unknown` -> `image`; `inline_formula` -> drop (a Pro label); a label
//      outside the profile's type set (docs/MINERU.md 2.3) -> drop with a warning.
//   3. Angle: <|rotate_up|> 0, <|rotate_right|> 90, <|rotate_down|> 180, <|rotate_left|> 270;
//      no token -> nullopt with a warning, block kept.
//   4. (Pro) text blocks: merge_prev = "txt_contd_tgt" occurs in TAIL.
// Then over the page (later-client rule): text, equation and equation_block blocks with at
// least 90% of their own area inside some table box are dropped.
//
// Deviations from Python's `re` (documented, no 2509/Pro output is affected): \d, \s and \w
// are ASCII ([0-9], [ \t\n\v\f\r\x1c-\x1f], [A-Za-z0-9_]) except that bytes >= 0x80 count as
// word characters so a non-ASCII label is reported as unknown instead of silently skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/content_block.h"
#include "pipeline/profile.h"

namespace mineru::pipeline {

// Coverage of a text/equation/equation_block box by a table box at or above which the block is
// dropped (numerator and denominator, compared exactly on the 0..1000 grid).
inline constexpr int kTableCoverNumerator = 9;
inline constexpr int kTableCoverDenominator = 10;

// What differs between the clients (mineru-vl-utils 0.1.22 for 2509, 1.2 for Pro).
struct LayoutRules {
  // Labels of the whole Pro type set are kept (else only the 2509 set's).
  bool pro_types = false;
  // Text blocks get merge_prev = the tail holds "txt_contd_tgt" (Pro; 2509 leaves it unset).
  bool merge_prev = false;
  // The table-internal filter compares the cover ratio computed as the Pro client does, in
  // double precision on the normalised boxes ((ix2-ix1)*(iy2-iy1) / ((x2-x1)*(y2-y1)) >= 0.9),
  // instead of exactly on the integer grid.
  bool float_cover_ratio = false;
};

// The rules of a profile: 2509 = {}, pro = all three.
LayoutRules LayoutRulesFor(Profile profile);

// Parses one layout answer into blocks in the model's reading order. Never fails: anything
// unreadable is skipped, with a line per skipped or doubtful region appended to `warnings`
// (may be null). Returned blocks have no content.
std::vector<ContentBlock> ParseLayout(std::string_view output, const LayoutRules& rules,
                                      std::vector<std::string>* warnings);
// The 2509 rules.
inline std::vector<ContentBlock> ParseLayout(std::string_view output,
                                             std::vector<std::string>* warnings) {
  return ParseLayout(output, LayoutRules{}, warnings);
}

}  // namespace mineru::pipeline
