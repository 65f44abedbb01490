// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/page_selection.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace mineru::pdf {
namespace {

// A positive page number, all of the text; 0 when it is not one.
int ParsePageNumber(std::string_view text) {
  int value = 0;
  if (text.empty() || text.front() == '+' || text.front() == '-') return 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return 0;
  return value;
}

}  // namespace

Result<std::vector<PageSpan>> ParsePageList(std::string_view spec) {
  std::vector<PageSpan> spans;
  if (spec.empty()) {
    spans.push_back(PageSpan{1, 0});
    return spans;
  }
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view item = spec.substr(start, comma - start);
    const size_t dash = item.find('-');
    PageSpan span;
    if (dash == std::string_view::npos) {
      span.first = span.last = ParsePageNumber(item);
    } else {
      span.first = ParsePageNumber(item.substr(0, dash));
      const std::string_view tail = item.substr(dash + 1);
      span.last = tail.empty() ? 0 : ParsePageNumber(tail);
      if (!tail.empty() && span.last == 0) span.first = 0;  // reported below
    }
    if (span.first == 0) {
      return Fail(ErrorCode::kInvalidArgument,
                  "page list '{}': '{}' is not a page number N, a range N-M or N- (pages count "
                  "from 1)",
                  spec, item);
    }
    if (span.last != 0 && span.last < span.first) {
      return Fail(ErrorCode::kInvalidArgument, "page list '{}': range '{}' ends before it starts",
                  spec, item);
    }
    spans.push_back(span);
    start = comma + 1;
  }
  return spans;
}

Result<std::vector<int>> SelectPages(const std::vector<PageSpan>& spans, int page_count) {
  std::vector<int> pages;
  for (const PageSpan& span : spans) {
    const int last = span.last == 0 ? page_count : span.last;
    if (span.first > page_count || last > page_count) {
      return Fail(ErrorCode::kInvalidArgument, "page {} is past the end of the document ({} {})",
                  std::max(span.first, std::min(last, page_count + 1)), page_count,
                  page_count == 1 ? "page" : "pages");
    }
    for (int page = span.first; page <= last; ++page) pages.push_back(page - 1);
  }
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  return pages;
}

std::vector<int> SelectPageRange(int start_page_id, int end_page_id, int page_count) {
  if (end_page_id < 0 || end_page_id > page_count - 1) end_page_id = page_count - 1;
  std::vector<int> pages;
  for (int page = std::max(start_page_id, 0); page <= end_page_id; ++page) pages.push_back(page);
  return pages;
}

}  // namespace mineru::pdf
