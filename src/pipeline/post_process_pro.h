// SPDX-License-Identifier: Apache-2.0
// Post-processing of one page's recognised blocks as the Pro client does it (mineru-vl-utils
// 1.2.1 post_process/__init__.py), in this order:
//
//   1. "simple" steps, run even with simple_post_process:
//      a. table blocks with content: OTSL -> HTML (kept as is when it starts with "<table" and
//         ends with "</table>"; a failed conversion keeps the raw text), the masked images put
//         back (ReplaceTableImageTokens), formulas wrapped as <eq> (table_formula_eq_wrap);
//      b. image and chart blocks with content: image analysis (ParseImageAnalysis) re-types them:
//         pure_table -> table (PureTableToHtml, then <eq> wrapping), pure_formula -> equation,
//         chart -> chart with sub_type = the sub-class, anything else -> image with sub_type =
//         the class and content = the caption for natural_image or empty content, else the
//         content;
//   2. list_item blocks become text (merge_prev false);
//   3. "[Non-Text]" (trimmed) content: header and footer keep the block with content "";
//      image, chart, table, equation, list, image_block and equation_block keep it as it is;
//      every other type loses the block;
//   4. with simple_post_process: absorbed images dropped, private fields cleared, done;
//   5. equations: FixEquationPro; text blocks (type text only): FixTextBlock;
//   6. equation_block merging (handle_equation_block), as the 2509 client;
//   7. every equation with content wrapped in \[ \];
//   8. equation_block, absorbed images, lists (abandon_list) and paratext (abandon_paratext)
//      dropped;
//   9. the private fields (table_image_tokens, absorbed_by_table) cleared.
// If a step fails, the blocks come back unprocessed less the absorbed images, private fields
// cleared, with a warning.
#pragma once

#include <string>
#include <vector>

#include "pipeline/content_block.h"
#include "pipeline/post_process.h"

namespace mineru::pipeline {

// `options` as for the 2509 client, plus table_formula_eq_wrap (MinerU 3.4.4 turns it on).
std::vector<ContentBlock> PostProcessPro(std::vector<ContentBlock> blocks,
                                         const PostProcessOptions& options,
                                         std::vector<std::string>* warnings);

// Step 1b on one image or chart block with content (exposed for tests).
void ApplyImageAnalysis(ContentBlock& block, bool table_formula_eq_wrap);

}  // namespace mineru::pipeline
