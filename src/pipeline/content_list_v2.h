// SPDX-License-Identifier: Apache-2.0
// MinerU's content_list_v2.json from middle.json's pdf_info, by MinerU 3.4.4's rules
// (mineru/backend/vlm/vlm_middle_json_mkcontent.py @3.4.4 make_blocks_to_content_list_v2,
// merge_para_with_text_v2). It reads both generations of middle.json: MinerU 2.7.6 pages
// (para_blocks and discarded_blocks only; code groups with guess_lang) and MinerU 3.4.4 pages
// (charts, analysis content, sub_type, blocks emptied by merges).
//
// Shape: one inner list per page, in pdf_info order, holding the page's para_blocks then its
// discarded blocks as items {"type", "content": {...}, "bbox": [0–1000 ints], "sub_type"?} (no
// page_idx). Inline content is an array of spans {"type": "text" | "equation_inline" |
// "phonetic", "content"}:
//   * spans whose content is blank are skipped; adjacent text spans are merged;
//   * text is full-width letters/digits converted but neither escaped nor trimmed;
//   * a text span gets a separator space only when a later span of the paragraph still has
//     visible text or an inline formula (CJK: and it is not the last span of its line), added to
//     the untrimmed content, so "We study " before a formula becomes "We study  ";
//   * the line-end hyphen rule drops the last character of the untrimmed span.
//
// Items by block type:
//   title (level ≥ 1)        title {title_content, level}; level 0 → paragraph
//   text, phonetic           paragraph {paragraph_content}
//   interline_equation       equation_interline {math_content, math_type "latex",
//                                                image_source {path}}
//   image / chart            image / chart {image_source {path}, content, <kind>_caption,
//                                           <kind>_footnote} plus sub_type when set
//   table                    table {image_source, table_caption, table_footnote, html,
//                                   table_type, table_nest_level}
//   code                     code {code_caption, code_content, code_language} or, for sub_type
//                            algorithm, algorithm {algorithm_caption, algorithm_content}
//   ref_text                 list {list_type "reference_list", list_items: [one item]}
//   list                     list {list_type text_list | reference_list, list_items}
//   header, footer, page_number, aside_text, page_footnote
//                            page_header, page_footer, page_number, page_aside_text,
//                            page_footnote {<type>_content}
// Image paths: image and chart use "<dir>/<file>" or "" without a file; tables and equations
// always "<dir>/<file>" (so "images/" without one, as MinerU writes it).
//
// Deviations (MinerU raises on these): a code group whose sub_type is neither code nor algorithm
// becomes a code item; a list whose sub_type is neither text nor ref_text becomes a text_list.
// Blocks of a type MinerU does not list are skipped (MinerU would emit an item holding only a
// bbox). Nothing here throws; a page that is not an object yields an empty inner list.
#pragma once

#include "base/json.h"
#include "pipeline/paragraph_text.h"

namespace mineru::pipeline {

// options: image_dir and the inline delimiters of the table HTML rewrite are used; the rest is
// not consulted (as in MinerU).
Json MakeContentListV2(const Json& pdf_info, const MarkdownOptions& options = {});

}  // namespace mineru::pipeline
