// SPDX-License-Identifier: Apache-2.0
// Which pages of a document to render: a command-line page list ("1-3,7,10-", 1-based like
// every page number a person types or reads) or MinerU's start_page_id / end_page_id (0-based,
// end inclusive). Pages are always rendered in document order, each once.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::pdf {

// 1-based, inclusive; last == 0 means "to the last page".
struct PageSpan {
  int first = 1;
  int last = 0;
};

// Parses "N", "N-M" and "N-" items separated by commas. An empty spec selects every page.
// kInvalidArgument (naming the bad item) for anything else, page 0, or M < N.
Result<std::vector<PageSpan>> ParsePageList(std::string_view spec);

// The 0-based page indices the spans select in a document of page_count pages, ascending and
// without repeats. kInvalidArgument naming the first page past the end: a person who asks
// for page 7 of a 3-page document made a mistake worth reporting.
Result<std::vector<int>> SelectPages(const std::vector<PageSpan>& spans, int page_count);

// MinerU's rule (load_images_from_pdf / get_end_page_id): end_page_id < 0 or past the end
// means the last page; start past end selects nothing.
std::vector<int> SelectPageRange(int start_page_id, int end_page_id, int page_count);

}  // namespace mineru::pdf
