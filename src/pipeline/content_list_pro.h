// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's flat content_list.json from middle.json's pdf_info
// (mineru/backend/vlm/vlm_middle_json_mkcontent.py @3.4.4 make_blocks_to_content_list).
//
// What differs from the MinerU 2.7.6 writer (content_list.h):
//   * all text goes through MergeParaTextPro (Markdown-escaped; `text` items also get a leading
//     block marker escaped, list items not);
//   * image items add "content" (the analysis text or "") and "sub_type" when set; img_path is
//     "" when no crop exists;
//   * new chart items {type, img_path, content, chart_caption, chart_footnote, sub_type?};
//   * table_body is the rewritten HTML (FormatEmbeddedTableHtml);
//   * code items: code_body is RenderCodeBody's fence or algorithm <div>; no guess_lang.
// Blocks emptied by MinerU's merges keep their items, as MinerU writes them: an absorbed
// paragraph is {"type": "text", "text": ""}, an absorbed table has img_path "", empty caption and
// footnote lists and no table_body.
//
// Nothing here throws: fields of the wrong type or shape count as absent; blocks and pages that
// are not objects are skipped.
#pragma once

#include "base/json.h"
#include "pipeline/paragraph_text.h"

namespace mineru::pipeline {

// One item per block over all pages, per page the para_blocks (reading order) then the discarded
// blocks. Every item has "type", "page_idx" and, when the block's bbox and the page's page_size
// are usable, "bbox" scaled to 0–1000 with int() truncation. Formulas are always LaTeX here
// (options.formula_enabled and table_enabled are not consulted, as in MinerU); image paths are
// "<options.image_dir>/<image_path>". Blocks of a type MinerU does not list are skipped (MinerU
// would emit an item holding only bbox and page_idx).
Json MakeContentListPro(const Json& pdf_info, const MarkdownOptions& options = {});

}  // namespace mineru::pipeline
