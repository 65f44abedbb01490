// SPDX-License-Identifier: Apache-2.0
// Post-processing of one page's recognised blocks (mineru-vl-utils 0.1.22
// post_process/__init__.py and equation_block.py@0.1.22): tables to HTML, equation repairs,
// equation_block merging, \[ \] wrapping and the optional drops.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/content_block.h"

namespace mineru::pipeline {

struct PostProcessOptions {
  // Only step 1 (tables) runs; MinerU uses false.
  bool simple_post_process = false;
  // Step 4 merging; MinerU uses true. equation_block blocks are removed either way.
  bool handle_equation_block = true;
  // Step 6: drop `list` blocks; MinerU uses false.
  bool abandon_list = false;
  // Step 6: drop header, footer, page_number, aside_text, page_footnote, unknown; MinerU: false.
  bool abandon_paratext = false;
  // Pro client only (PostProcessPro): \( \) and \[ \] inside table HTML become <eq>...</eq>
  // (enable_table_formula_eq_wrap; MinerU 3.4.4 turns it on). The 2509 client has no such step.
  bool table_formula_eq_wrap = false;
};

// An equation_block merges the equations whose box lies more than this share inside it.
inline constexpr double kEquationBlockCoverRatio = 0.9;

// Steps 1-6 in order:
//  1. table blocks with non-empty content: kept when it starts with "<table" and ends with
//     "</table>", else converted by ConvertOtslToHtml(); a failed conversion keeps the raw text
//     and adds a warning. With simple_post_process the blocks are returned here.
//  3. equation blocks with non-empty content: FixEquation().
//  4. (handle_equation_block) for each equation_block, the equations whose area lies more than
//     90% inside its box (intersection / equation area > 0.9; zero-area equations never) are
//     its group; a group of two or more becomes one equation at the equation_block's place,
//     with its bbox and angle and content "\begin{array}{l} e1 \\ e2 \\ ... \end{array}" (each
//     ei followed by " \\ "); when the group holds more than one `\tag{X}` in total, every
//     `\tag{X}` (also `\tag {X}`) becomes `(X)`. Grouped equations are removed.
//  5. every equation with non-empty content is trimmed and wrapped: "\[\n" prefixed unless it
//     starts with "\[", "\n\]" appended unless it ends with "\]".
//  6. equation_block blocks are removed, then the optional list / paratext drops.
// Errors (kInvalidArgument): an equation without content in a group of two or more (the
// client fails there too). The caller's blocks are never modified.
Result<std::vector<ContentBlock>> TryPostProcess(const std::vector<ContentBlock>& blocks,
                                                 const PostProcessOptions& options,
                                                 std::vector<std::string>* warnings);

// Step 4 alone (do_handle_equation_block): the grouped equations merged, equation_block blocks
// kept (step 6 removes them). Fails as TryPostProcess does.
Result<std::vector<ContentBlock>> MergeEquationBlocks(std::vector<ContentBlock> blocks);

// The paratext types abandon_paratext drops: header, footer, page_number, aside_text,
// page_footnote, unknown.
bool IsParatext(BlockType type);

// TryPostProcess(); on failure (step 7) a warning is added and `blocks` come back unprocessed.
// `warnings` may be null.
std::vector<ContentBlock> PostProcess(std::vector<ContentBlock> blocks,
                                      const PostProcessOptions& options,
                                      std::vector<std::string>* warnings);

}  // namespace mineru::pipeline
