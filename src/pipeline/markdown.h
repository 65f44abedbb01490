// SPDX-License-Identifier: Apache-2.0
// MinerU's Markdown rendering of a document's middle.json pages (MinerU 2.7.6
// vlm_middle_json_mkcontent.py union_make in mode mm_markdown). The paragraph text rule
// (MergeParaText) that content_list.json and the cross-page table merge share lives in
// paragraph_text.h, included here.
//
// Input is the `pdf_info` array of middle.json (docs/MINERU.md 3.2). Nothing here throws: a field
// of the wrong type or shape counts as absent, and a block or page that is not an object is
// skipped.
#pragma once

#include <string>

#include "base/json.h"
#include "pipeline/paragraph_text.h"

namespace mineru::pipeline {

// The whole document's Markdown: every page's para_blocks in order, one string per block, empty
// ones skipped, joined with "\n\n"; discarded blocks never appear (docs/MINERU.md 3.3).
std::string MakeMarkdown(const Json& pdf_info, const MarkdownOptions& options = {});

}  // namespace mineru::pipeline
