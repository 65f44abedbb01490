// SPDX-License-Identifier: Apache-2.0
#include "pipeline/json2md.h"

#include <cstddef>
#include <optional>

#include "text/utf8.h"

namespace mineru::pipeline {

bool ContainsCjkIdeograph(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    size_t n = text::WellFormedLength(text, pos, &cp);
    if (n == 0) {
      ++pos;
      continue;
    }
    if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF)) return true;
    pos += n;
  }
  return false;
}

std::string Json2Markdown(const std::vector<ContentBlock>& blocks) {
  std::vector<std::string> parts;
  // Index in `parts` of the last text block emitted on its own; merge_prev blocks join it.
  std::optional<size_t> anchor;
  for (const ContentBlock& block : blocks) {
    if (!block.content.has_value() || block.content->empty()) continue;
    const std::string& content = *block.content;
    if (block.merge_prev.value_or(false) && anchor.has_value()) {
      std::string& target = parts[*anchor];
      if (!ContainsCjkIdeograph(content)) target.push_back(' ');
      target += content;
      continue;
    }
    parts.push_back(content);
    if (block.type == BlockType::kText) anchor = parts.size() - 1;
  }
  std::string markdown;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) markdown += "\n\n";
    markdown += parts[i];
  }
  return markdown;
}

}  // namespace mineru::pipeline
