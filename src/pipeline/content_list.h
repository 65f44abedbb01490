// SPDX-License-Identifier: Apache-2.0
// MinerU's flat content_list.json (MinerU 2.7.6 mineru/backend/vlm/vlm_middle_json_mkcontent.py
// make_blocks_to_content_list) from middle.json's pdf_info, and model.json (what MinerU 2.7.6's
// vlm backend dumps: the client's raw blocks per page).
//
// Nothing here throws: fields of the wrong type or shape count as absent; blocks and pages that
// are not objects are skipped.
#pragma once

#include <vector>

#include "base/json.h"
#include "pipeline/markdown.h"

namespace mineru::pipeline {

// docs/MINERU.md 3.4: one item per block over all pages, per page the para_blocks (reading order)
// then the discarded blocks. Every item has "type", "page_idx" and, when the block's bbox and the
// page's page_size are usable, "bbox" scaled to 0–1000 with int() truncation. Text uses
// MergeParaText (docs/MINERU.md 3.3) with options' delimiters and formula recognition always on;
// image paths are "<options.image_dir>/<image_path>". Blocks of a type the table of
// docs/MINERU.md 3.4 does not list are skipped (MinerU would emit an item holding only bbox and
// page_idx).
Json MakeContentList(const Json& pdf_info, const MarkdownOptions& options = {});

// docs/MINERU.md 3.5: the array (pages) of arrays (blocks) of {type, bbox, angle, content} exactly
// as the client produced them. Each page is a Json array of block objects; a page that is not an
// array becomes an empty page, and a block that is not an object with a string "type" and a "bbox"
// of four numbers is dropped. Kept blocks carry exactly those four keys, a missing or mistyped
// angle (int) or content (string) as null.
Json MakeModelJson(const std::vector<Json>& pages);

}  // namespace mineru::pipeline
