// SPDX-License-Identifier: Apache-2.0
// mineru-vl-utils 1.2.1 post_process/json2markdown.py json2md: the client's own plain Markdown
// of one page's result blocks (MinerU does not use it; it writes its Markdown from middle.json).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/content_block.h"

namespace mineru::pipeline {

// Whether `text` holds a CJK ideograph the client's merge test looks for: U+4E00..9FFF or
// U+3400..4DBF (bytes that are not UTF-8 never count).
bool ContainsCjkIdeograph(std::string_view text);

// The non-empty contents in block order, joined by "\n\n", except that a block with merge_prev
// true is appended to the most recent `text` block emitted so far (intervening non-text blocks do
// not reset it): directly when its content contains a CJK ideograph, else after one space. A
// merge_prev block before any text block is emitted on its own; blocks without content or with
// empty content are skipped. Contents are copied verbatim (no escaping, no image references).
std::string Json2Markdown(const std::vector<ContentBlock>& blocks);

}  // namespace mineru::pipeline
