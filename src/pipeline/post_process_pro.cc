// SPDX-License-Identifier: Apache-2.0
#include "pipeline/post_process_pro.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "pipeline/equation_fixes.h"
#include "pipeline/image_analysis.h"
#include "pipeline/python_text.h"
#include "pipeline/table_html.h"
#include "pipeline/text_fixes.h"

namespace mineru::pipeline {
namespace {

void Warn(std::vector<std::string>* warnings, std::string message) {
  if (warnings != nullptr) warnings->push_back(std::move(message));
}

bool HasContent(const ContentBlock& block) {
  return block.content.has_value() && !block.content->empty();
}

// Types whose "[Non-Text]" content is left alone (step 3).
bool KeepsNonTextPlaceholder(BlockType type) {
  switch (type) {
    case BlockType::kImage:
    case BlockType::kChart:
    case BlockType::kTable:
    case BlockType::kEquation:
    case BlockType::kList:
    case BlockType::kImageBlock:
    case BlockType::kEquationBlock:
      return true;
    default:
      return false;
  }
}

void ClearPrivateFields(std::vector<ContentBlock>& blocks) {
  for (ContentBlock& b : blocks) {
    b.table_image_tokens.clear();
    b.absorbed_by_table = false;
  }
}

void DropAbsorbed(std::vector<ContentBlock>& blocks) {
  std::erase_if(blocks, [](const ContentBlock& b) { return b.absorbed_by_table; });
}

// Step 1a on one table (ProcessTableContent; a failed OTSL conversion keeps the raw text, whose
// tokens are still replaced, as the client does).
void ProcessTable(ContentBlock& block, bool eq_wrap, size_t index,
                  std::vector<std::string>* warnings) {
  std::string error;
  block.content = ProcessTableContent(*block.content, block.table_image_tokens, eq_wrap, &error);
  if (!error.empty()) {
    Warn(warnings, fmt::format("table block {}: OTSL to HTML conversion failed ({}); keeping "
                               "the raw text",
                               index, error));
  }
}

Result<std::vector<ContentBlock>> TryPostProcessPro(std::vector<ContentBlock> out,
                                                    const PostProcessOptions& options,
                                                    std::vector<std::string>* warnings) {
  // 1. Tables, then image analysis.
  for (size_t i = 0; i < out.size(); ++i) {
    ContentBlock& block = out[i];
    if (!HasContent(block)) continue;
    if (block.type == BlockType::kTable) {
      ProcessTable(block, options.table_formula_eq_wrap, i, warnings);
    } else if (block.type == BlockType::kImage || block.type == BlockType::kChart) {
      ApplyImageAnalysis(block, options.table_formula_eq_wrap);
    }
  }
  // 2. List items are text.
  for (ContentBlock& block : out) {
    if (block.type == BlockType::kListItem) {
      block.type = BlockType::kText;
      block.merge_prev = false;
    }
  }
  // 3. The [Non-Text] placeholder.
  std::vector<ContentBlock> kept;
  kept.reserve(out.size());
  for (ContentBlock& block : out) {
    if (block.content && PythonStrip(*block.content) == "[Non-Text]") {
      if (block.type == BlockType::kHeader || block.type == BlockType::kFooter) {
        block.content = std::string();
      } else if (!KeepsNonTextPlaceholder(block.type)) {
        continue;
      }
    }
    kept.push_back(std::move(block));
  }
  out = std::move(kept);
  // 4. simple_post_process stops here.
  if (options.simple_post_process) {
    DropAbsorbed(out);
    ClearPrivateFields(out);
    return out;
  }
  // 5. Equation and text chains.
  for (ContentBlock& block : out) {
    if (!HasContent(block)) continue;
    if (block.type == BlockType::kEquation) {
      block.content = FixEquationPro(*block.content);
    } else if (block.type == BlockType::kText) {
      block.content = FixTextBlock(*block.content);
    }
  }
  // 6. Equation blocks.
  if (options.handle_equation_block) {
    MINERU_ASSIGN_OR_RETURN(out, MergeEquationBlocks(std::move(out)));
  }
  // 7. Display-math wrapping.
  for (ContentBlock& block : out) {
    if (block.type == BlockType::kEquation && HasContent(block)) {
      block.content = WrapDisplayEquation(*block.content);
    }
  }
  // 8. Drops.
  std::erase_if(out, [&](const ContentBlock& block) {
    return block.type == BlockType::kEquationBlock || block.absorbed_by_table ||
           (options.abandon_list && block.type == BlockType::kList) ||
           (options.abandon_paratext && IsParatext(block.type));
  });
  // 9. Private fields.
  ClearPrivateFields(out);
  return out;
}

}  // namespace

void ApplyImageAnalysis(ContentBlock& block, bool table_formula_eq_wrap) {
  const ImageAnalysis analysis = ParseImageAnalysis(block.content.value_or(""));
  if (analysis.class_name == "pure_table") {
    block.type = BlockType::kTable;
    block.sub_type.reset();
    std::string html = PureTableToHtml(analysis.content);
    if (table_formula_eq_wrap) html = WrapTableFormulas(html);
    block.content = std::move(html);
  } else if (analysis.class_name == "pure_formula") {
    block.type = BlockType::kEquation;
    block.sub_type.reset();
    block.content = analysis.content;
  } else if (analysis.class_name == "chart") {
    block.type = BlockType::kChart;
    block.sub_type = analysis.sub_class;
    block.content = analysis.content;
  } else {
    block.type = BlockType::kImage;
    block.sub_type = analysis.class_name;
    block.content = analysis.class_name == "natural_image" || analysis.content.empty()
                        ? analysis.caption
                        : analysis.content;
  }
}

std::vector<ContentBlock> PostProcessPro(std::vector<ContentBlock> blocks,
                                         const PostProcessOptions& options,
                                         std::vector<std::string>* warnings) {
  Result<std::vector<ContentBlock>> processed = TryPostProcessPro(blocks, options, warnings);
  if (processed) return std::move(*processed);
  Warn(warnings, fmt::format("post-processing failed ({}); returning the blocks unprocessed",
                             processed.error().ToString()));
  DropAbsorbed(blocks);
  ClearPrivateFields(blocks);
  return blocks;
}

}  // namespace mineru::pipeline
