// SPDX-License-Identifier: Apache-2.0
// MinerU's "MagicModel" for the VLM backend (MinerU 2.7.6
// vlm_magic_model.py, model_output_to_middle_json.py, magic_model_utils.py, boxbase.py): one
// page's post-processed client blocks -> one middle.json PageInfo object
//
//   {"para_blocks": [...], "discarded_blocks": [...], "page_size": [W, H], "page_idx": i}
//
// The rules, in the order applied (docs/MINERU.md 3.1):
//   1. bbox -> integer points (int(x1*W), int(y1*H), int(x2*W), int(y2*H)), swapped if reversed;
//      `index` = position in the client's block list (dropped blocks keep their number).
//   2. Types and spans: text-like types keep their name with a `text` span; image -> image_body
//      {image span}; table -> table_body {table span, html}; code/algorithm -> code_body (fences
//      stripped, language guessed, sub_type = the layout type); equation -> interline_equation
//      (\[ \] stripped); text-like and code content: \[x\] -> [x] when the \[ and \] counts are
//      equal and non-zero, then \( \) split into text / inline_equation spans when their counts
//      are equal and non-zero (which also turns code into algorithm). One line per block, all
//      spans with the block's bbox. unknown and equation_block blocks are dropped.
//   3. Groups: image/table/code families, interline_equation, text, title, ref_text, phonetic,
//      discarded (header, footer, page_number, aside_text, page_footnote), list.
//   4. Lists: each text/ref_text block >= 80% inside a list box joins the first such list; empty
//      lists vanish; sub_type = most frequent child type (first seen wins a tie).
//   5. Two-layer "tie up by index" for image, table, code (see magic_model.cc for every rule);
//      captions/footnotes that do not fit become `text` blocks.
//   6. Spans of type image, table and interline_equation get `image_path` from `image_path`
//      (called once per such span, in block order; "" when no file is written).
//   7. para_blocks = image, table, code, ref_text, phonetic, title, text, interline_equation and
//      list blocks sorted by index; discarded_blocks in block order.
//
// Deviations (documented): a block whose content is missing gets "" where Python writes null
// (text spans, table html) or crashes (equations); ill-formed UTF-8 in content reads as U+FFFD
// (Python strings are always Unicode), so the page always serialises; a bbox that is not finite
// or lies beyond 1e9 points is skipped with a warning (Python's int() would raise on NaN and be
// caught the same way); three or more bodies tied for a caption (Python raises) go to the one
// with the smallest edge distance, with a warning; the code language comes from
// GuessCodeLanguage, a keyword heuristic standing in for magika.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "pipeline/code_language.h"
#include "pipeline/content_block.h"

namespace mineru::pipeline {

// Saves the crop of a span and returns its path relative to the output's image folder, or ""
// when nothing was written. span_type: "image", "table" or "interline_equation" (and "chart" for
// MiddlePagePro); bbox_pt: the span's integer box in PDF points.
using ImagePathFn =
    std::function<std::string(std::string_view span_type, const std::array<int, 4>& bbox_pt)>;

// One middle.json PageInfo for a page of width_pt x height_pt points (already truncated to int,
// as MinerU does with pdfium's page size). `image_path` may be empty (every image_path is then
// ""). Never fails: blocks that cannot be converted are skipped with a warning (warnings may be
// null).
Json MiddlePage(const std::vector<ContentBlock>& blocks, int page_idx, int width_pt, int height_pt,
                const ImagePathFn& image_path, std::vector<std::string>* warnings);

}  // namespace mineru::pipeline
