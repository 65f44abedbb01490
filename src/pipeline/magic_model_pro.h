// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's "MagicModel" for the VLM backend, the pro profile (MinerU 3.4.4
// mineru/backend/vlm/vlm_magic_model.py, model_output_to_middle_json.py,
// mineru/utils/visual_magic_model_utils.py, mineru/backend/utils/html_image_utils.py,
// mineru/utils/boxbase.py, cut_image.py): one page's post-processed mineru-vl-utils 1.2.1 blocks
// -> one middle.json page before the document-wide merges
//
//   {"preproc_blocks": [...], "discarded_blocks": [...], "page_size": [W, H], "page_idx": i}
//
// (the document stage copies preproc_blocks into para_blocks and runs the truncated-paragraph
// and cross-page table merges). What is as in MinerU 2.7.6 (magic_model.h): the integer point
// boxes and `index`, the single line per block, code cleaning and language, equation cleaning,
// the \[x\] -> [x] rewrite and the \( \) inline-equation split, lists, the discarded types and
// the ordering of preproc_blocks by index. What MinerU 3.4.4 changes, in the order applied:
//   1. Types and spans. Text-like types keep their name with a `text` span, "" for missing
//      content; title content has every newline and the whitespace after it replaced by one
//      space, then is trimmed. image_caption, table_caption, code_caption -> generic `caption`;
//      image_footnote, table_footnote -> generic `footnote`; image -> image_body {image span,
//      `content` = the analysis text when present}; image_block -> image_block_body {image
//      span}; chart -> chart_body {chart span, `content` when present}; table -> table_body
//      {table span, `html`}; code/algorithm -> code_body; equation -> interline_equation. The
//      block keeps `sub_type` (image/chart, when non-empty), `cell_merge` (table, when present)
//      and `merge_prev` (text, when present). Every other type (doc_title, paragraph_title,
//      formula_number, index, list_item, unknown, equation_block, and the raw `caption` and
//      `footnote`) keeps its name and goes through the text path with span type "unknown"
//      (formula pieces still become text / inline_equation spans): raw caption/footnote act as
//      generic captions/footnotes; the others only take part as geometry and are then dropped.
//   2. Crops: every span of type image, table, chart or interline_equation gets `image_path`
//      from `image_path` (called once per span in block order, image/chart bodies absorbed by
//      an image_block included, "" when nothing is written). Table HTML: every
//      src="data:image/..." whose image `inline_image` writes becomes src="<file name>"
//      (inline_table_images.h).
//   3. Caption fall-backs (caption_fallbacks.h).
//   4. Lists (>= 80% containment, as 2.7.6), then visual groups (visual_groups.h): image, table,
//      chart and code groups with their captions and footnotes; captions and footnotes no body
//      takes become `text` blocks.
//   5. preproc_blocks = image, table, chart, code, ref_text, phonetic, title, text,
//      interline_equation and list blocks by index; discarded_blocks (header, footer,
//      page_number, aside_text, page_footnote) in block order.
//
// Deviations (documented): missing content reads as "" where Python writes null (table html,
// "unknown" spans) or crashes (equations); ill-formed UTF-8 reads as U+FFFD; a bbox that is not
// finite or lies beyond 1e9 points is skipped with a warning (Python's int() raises on NaN and
// skips the block the same way); the code language comes from GuessCodeLanguage (a stand-in for
// magika); inline table images follow DecodeInlineTableImage's rules when the caller decodes
// with it (no WMF/EMF conversion).
#pragma once

#include <string>
#include <vector>

#include "base/json.h"
#include "pipeline/content_block.h"
#include "pipeline/inline_table_images.h"
#include "pipeline/magic_model.h"

namespace mineru::pipeline {

// One MinerU 3.4.4 middle.json page for a page of width_pt x height_pt points (truncated to
// int, as MinerU does with pdfium's page size). `image_path` and `inline_image` may be empty
// (every image_path is then "", table HTML is left as it is). Never fails: blocks that cannot
// be converted are skipped with a warning (warnings may be null).
Json MiddlePagePro(const std::vector<ContentBlock>& blocks, int page_idx, int width_pt,
                   int height_pt, const ImagePathFn& image_path, const InlineImageFn& inline_image,
                   std::vector<std::string>* warnings);

}  // namespace mineru::pipeline
