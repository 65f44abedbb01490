// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's Markdown of a document's middle.json pages (mineru/backend/vlm/
// vlm_middle_json_mkcontent.py @3.4.4 union_make in mode mm_markdown, with
// mineru/backend/utils/markdown_utils.py), and the code-body rendering content_list.json shares.
//
// What differs from the MinerU 2.7.6 writer (markdown.h):
//   * paragraph text by MergeParaTextPro: the five inline Markdown characters escaped outside
//     code bodies, a leading block marker of a `text` block escaped, no separator space at the
//     end of a paragraph;
//   * image, table, chart and code groups render their sub-blocks in index order as segments —
//     captions and footnotes as lines, an image/chart body as its link followed by a
//     <details><summary>…</summary> block when the span carries analysis content, a table body
//     as its rewritten HTML (FormatEmbeddedTableHtml) or its link, a code body as a fence or, for
//     algorithms, a <div class="mineru-algorithm"> — joined by "\n\n" when either neighbour is
//     an HTML block, else by "  \n";
//   * blocks emptied by MinerU's merges (paragraphs and tables with lines_deleted) produce
//     nothing.
//
// Works on either generation of middle.json (2.7.6 pages simply have no charts or analysis
// content). Nothing here throws: a field of the wrong type or shape counts as absent, and a
// block or page that is not an object is skipped.
#pragma once

#include <string>

#include "base/json.h"
#include "pipeline/paragraph_text.h"

namespace mineru::pipeline {

// The whole document's Markdown: every page's para_blocks in order, one string per block
// (stripped), empty ones skipped, joined with "\n\n"; discarded blocks never appear.
std::string MakeMarkdownPro(const Json& pdf_info, const MarkdownOptions& options = {});

// A code group's body as MinerU 3.4.4 renders it in Markdown and content_list.json: sub_type
// "code" → "```<guess_lang or txt>\n<text>\n```"; "algorithm" → RenderAlgorithmHtml of the
// body's lines. Deviation: any other sub_type (MinerU raises) renders the body's plain text.
// *is_html (may be null) tells whether the result is an HTML block.
std::string RenderCodeBody(const Json& group, const Json& body, const MarkdownOptions& options,
                           bool* is_html);

// MinerU 3.4.4 render_algorithm_html_from_lines: the text spans HTML-escaped as they are, inline
// equations (non-blank) as <inline_left>escaped<inline_right> with a space inserted between two
// formulas that would otherwise touch, wrapped in
// <div class="mineru-algorithm" style="white-space: pre-wrap; font-family:monospace;">\n…\n</div>;
// "" when the body is blank.
std::string RenderAlgorithmHtml(const Json& body, const MarkdownOptions& options);

}  // namespace mineru::pipeline
