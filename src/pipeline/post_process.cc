// SPDX-License-Identifier: Apache-2.0
#include "pipeline/post_process.h"

#include <algorithm>
#include <utility>

#include "pipeline/equation_fixes.h"
#include "pipeline/otsl_to_html.h"

namespace mineru::pipeline {
namespace {

void Warn(std::vector<std::string>* warnings, std::string message) {
  if (warnings != nullptr) warnings->push_back(std::move(message));
}

bool HasContent(const ContentBlock& block) {
  return block.content.has_value() && !block.content->empty();
}

// Share of `inner`'s area inside `outer` (equation_block.py _bbox_cover_ratio); 0 for an empty
// inner box.
double CoverRatio(const std::array<double, 4>& outer, const std::array<double, 4>& inner) {
  double x1 = std::max(outer[0], inner[0]);
  double y1 = std::max(outer[1], inner[1]);
  double x2 = std::min(outer[2], inner[2]);
  double y2 = std::min(outer[3], inner[3]);
  double intersection = std::max(0.0, x2 - x1) * std::max(0.0, y2 - y1);
  double area = (inner[2] - inner[0]) * (inner[3] - inner[1]);
  if (area == 0) return 0.0;
  return intersection / area;
}

// `\tag\s*{X}` at s[pos] with X free of `}`: returns its end and X, or npos.
size_t MatchTag(std::string_view s, size_t pos, std::string_view* label) {
  constexpr std::string_view kTag = "\\tag";
  if (s.substr(pos, kTag.size()) != kTag) return std::string_view::npos;
  size_t i = pos + kTag.size();
  while (size_t n = PythonSpaceLength(s, i)) i += n;
  if (i >= s.size() || s[i] != '{') return std::string_view::npos;
  size_t close = s.find('}', i + 1);
  if (close == std::string_view::npos) return std::string_view::npos;
  *label = s.substr(i + 1, close - i - 1);
  return close + 1;
}

size_t CountTags(std::string_view s) {
  size_t count = 0;
  std::string_view label;
  for (size_t pos = 0; pos < s.size();) {
    size_t end = MatchTag(s, pos, &label);
    if (end == std::string_view::npos) {
      ++pos;
    } else {
      ++count;
      pos = end;
    }
  }
  return count;
}

// Every `\tag{X}` -> `(X)`.
std::string TagsToParentheses(std::string_view s) {
  std::string out;
  std::string_view label;
  for (size_t pos = 0; pos < s.size();) {
    size_t end = MatchTag(s, pos, &label);
    if (end == std::string_view::npos) {
      out.push_back(s[pos++]);
    } else {
      out += "(";
      out += label;
      out += ")";
      pos = end;
    }
  }
  return out;
}

// Step 4 content: "\begin{array}{l} " + each equation + " \\ " + "\end{array}".
std::string CombineEquations(const std::vector<std::string_view>& equations) {
  size_t tags = 0;
  for (std::string_view e : equations) tags += CountTags(e);
  std::string out = "\\begin{array}{l} ";
  for (std::string_view e : equations) {
    out += tags > 1 ? TagsToParentheses(e) : std::string(e);
    out += " \\\\ ";
  }
  out += "\\end{array}";
  return out;
}

}  // namespace

Result<std::vector<ContentBlock>> MergeEquationBlocks(std::vector<ContentBlock> blocks) {
  std::vector<size_t> equations;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].type == BlockType::kEquation) equations.push_back(i);
  }
  std::vector<std::vector<size_t>> groups(blocks.size());
  std::vector<bool> grouped(blocks.size(), false);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].type != BlockType::kEquationBlock) continue;
    std::vector<size_t> covered;
    for (size_t e : equations) {
      if (CoverRatio(blocks[i].bbox, blocks[e].bbox) > kEquationBlockCoverRatio)
        covered.push_back(e);
    }
    if (covered.size() < 2) continue;
    for (size_t e : covered) {
      if (!blocks[e].content.has_value()) {
        return Fail(ErrorCode::kInvalidArgument,
                    "equation block {} inside equation_block {} has no content", e, i);
      }
      grouped[e] = true;
    }
    groups[i] = std::move(covered);
  }
  std::vector<ContentBlock> out;
  out.reserve(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (grouped[i]) continue;
    if (groups[i].empty()) {
      out.push_back(std::move(blocks[i]));
      continue;
    }
    std::vector<std::string_view> contents;
    for (size_t e : groups[i]) contents.push_back(*blocks[e].content);
    ContentBlock merged;
    merged.type = BlockType::kEquation;
    merged.bbox = blocks[i].bbox;
    merged.angle = blocks[i].angle;
    merged.content = CombineEquations(contents);
    out.push_back(std::move(merged));
  }
  return out;
}

bool IsParatext(BlockType type) {
  switch (type) {
    case BlockType::kHeader:
    case BlockType::kFooter:
    case BlockType::kPageNumber:
    case BlockType::kAsideText:
    case BlockType::kPageFootnote:
    case BlockType::kUnknown:
      return true;
    default:
      return false;
  }
}

Result<std::vector<ContentBlock>> TryPostProcess(const std::vector<ContentBlock>& blocks,
                                                 const PostProcessOptions& options,
                                                 std::vector<std::string>* warnings) {
  std::vector<ContentBlock> out = blocks;

  // 1. Tables.
  for (size_t i = 0; i < out.size(); ++i) {
    ContentBlock& block = out[i];
    if (block.type != BlockType::kTable || !HasContent(block)) continue;
    const std::string& content = *block.content;
    if (content.starts_with("<table") && content.ends_with("</table>")) continue;
    Result<std::string> html = ConvertOtslToHtml(content);
    if (html) {
      block.content = std::move(*html);
    } else {
      Warn(warnings, fmt::format("table block {}: OTSL to HTML conversion failed ({}); keeping "
                                 "the raw text",
                                 i, html.error().ToString()));
    }
  }
  // 2. simple_post_process stops after the tables.
  if (options.simple_post_process) return out;

  // 3. Equation repairs.
  for (ContentBlock& block : out) {
    if (block.type == BlockType::kEquation && HasContent(block)) {
      block.content = FixEquation(*block.content);
    }
  }
  // 4. Equation blocks.
  if (options.handle_equation_block) {
    MINERU_ASSIGN_OR_RETURN(out, MergeEquationBlocks(std::move(out)));
  }
  // 5. Display-math wrapping.
  for (ContentBlock& block : out) {
    if (block.type == BlockType::kEquation && HasContent(block)) {
      block.content = WrapDisplayEquation(*block.content);
    }
  }
  // 6. Drops.
  std::erase_if(out, [&](const ContentBlock& block) {
    return block.type == BlockType::kEquationBlock ||
           (options.abandon_list && block.type == BlockType::kList) ||
           (options.abandon_paratext && IsParatext(block.type));
  });
  return out;
}

std::vector<ContentBlock> PostProcess(std::vector<ContentBlock> blocks,
                                      const PostProcessOptions& options,
                                      std::vector<std::string>* warnings) {
  Result<std::vector<ContentBlock>> processed = TryPostProcess(blocks, options, warnings);
  if (processed) return std::move(*processed);
  // 7. Any failure: the blocks as they came in.
  Warn(warnings, fmt::format("post-processing failed ({}); returning the blocks unprocessed",
                             processed.error().ToString()));
  return blocks;
}

}  // namespace mineru::pipeline
