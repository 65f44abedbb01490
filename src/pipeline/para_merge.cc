// SPDX-License-Identifier: Apache-2.0
#include "pipeline/para_merge.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/middle_json.h"
#include "pipeline/python_str.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

using Box = std::array<double, 4>;

Json* MutableArrayAt(Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return nullptr;
  return &*it;
}

// Python truthiness of a JSON value (a missing key reads as null).
bool Truthy(const Json& object, const char* key) {
  if (!object.is_object()) return false;
  auto it = object.find(key);
  if (it == object.end()) return false;
  const Json& v = *it;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  if (v.is_number_unsigned()) return v.get<uint64_t>() != 0;
  if (v.is_number_float()) return v.get<double>() != 0;
  if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
  return false;
}

std::optional<Box> BoxOf(const Json& object) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find("bbox");
  if (it == object.end() || !it->is_array() || it->size() < 4) return std::nullopt;
  Box box{};
  for (size_t i = 0; i < 4; ++i) {
    if (!(*it)[i].is_number()) return std::nullopt;
    box[i] = (*it)[i].get<double>();
    if (!std::isfinite(box[i])) return std::nullopt;
  }
  return box;
}

// MinerU _block_has_lines: some line has spans.
bool BlockHasLines(const Json& block) {
  for (const Json& line : ArrayAt(block, "lines")) {
    if (!ArrayAt(line, "spans").empty()) return true;
  }
  return false;
}

// A line appended from another page: every one of its (at least one) spans is cross_page.
bool IsCrossPageLine(const Json& line) {
  const Json& spans = ArrayAt(line, "spans");
  if (spans.empty()) return false;
  return std::all_of(spans.begin(), spans.end(),
                     [](const Json& span) { return Truthy(span, "cross_page"); });
}

// MinerU _resolve_local_metric_lines: the lines that measure the block's geometry.
std::vector<const Json*> MetricLines(const Json& block) {
  std::vector<const Json*> all;
  std::vector<const Json*> local;
  for (const Json& line : ArrayAt(block, "lines")) {
    all.push_back(&line);
    if (!IsCrossPageLine(line)) local.push_back(&line);
  }
  return local.empty() ? all : local;
}

// MinerU _build_bbox_fs over non-empty `lines`; nullopt when a line has no usable box.
std::optional<Box> LinesBox(const std::vector<const Json*>& lines) {
  std::optional<Box> out;
  for (const Json* line : lines) {
    std::optional<Box> box = BoxOf(*line);
    if (!box) return std::nullopt;
    if (!out) {
      out = box;
      continue;
    }
    (*out)[0] = std::min((*out)[0], (*box)[0]);
    (*out)[1] = std::min((*out)[1], (*box)[1]);
    (*out)[2] = std::max((*out)[2], (*box)[2]);
    (*out)[3] = std::max((*out)[3], (*box)[3]);
  }
  return out;
}

std::string SpanContent(const Json& span) { return StringAt(span, "content"); }

std::string FirstNonEmptyContent(const Json& block) {
  for (const Json& line : ArrayAt(block, "lines")) {
    for (const Json& span : ArrayAt(line, "spans")) {
      std::string content = SpanContent(span);
      if (!content.empty()) return content;
    }
  }
  return {};
}

std::string LastNonEmptyContent(const Json& block) {
  const Json& lines = ArrayAt(block, "lines");
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    const Json& spans = ArrayAt(*line, "spans");
    for (auto span = spans.rbegin(); span != spans.rend(); ++span) {
      std::string content = SpanContent(*span);
      if (!content.empty()) return content;
    }
  }
  return {};
}

// MinerU LINE_STOP_FLAG: a paragraph ending with one of these is complete.
bool EndsWithStopFlag(std::string_view s) {
  static constexpr std::array<std::string_view, 14> kStopFlags = {
      ".",      "!",  "?",      "\u3002", "\uFF01", "\uFF1F", ")",
      "\uFF09", "\"", "\u201D", ":",      "\uFF1A", ";",      "\uFF1B",
  };
  return std::any_of(kStopFlags.begin(), kStopFlags.end(),
                     [s](std::string_view flag) { return s.ends_with(flag); });
}

// Python content[0].isdigit() or content[0].isupper().
bool StartsWithDigitOrUpper(std::string_view s) {
  char32_t cp = 0;
  if (s.empty() || text::WellFormedLength(s, 0, &cp) == 0) return false;
  return IsPythonDigit(cp) || IsPythonUpper(cp);
}

// MinerU can_auto_merge_text_blocks(current, previous, allow_single_line_blocks=True) for
// horizontal text.
bool CanMergeTextBlocks(const Json& current, const Json& previous) {
  if (ArrayAt(current, "lines").empty() || ArrayAt(previous, "lines").empty()) return false;
  const std::vector<const Json*> current_lines = MetricLines(current);
  const std::vector<const Json*> previous_lines = MetricLines(previous);
  std::optional<Box> first_line = BoxOf(*current_lines.front());
  std::optional<Box> last_line = BoxOf(*previous_lines.back());
  if (!first_line || !last_line) return false;
  const double first_height = (*first_line)[3] - (*first_line)[1];
  const double last_height = (*last_line)[3] - (*last_line)[1];
  if (!(first_height > 0) || !(last_height > 0)) return false;
  std::optional<Box> current_box = LinesBox(current_lines);
  std::optional<Box> previous_box = LinesBox(previous_lines);
  if (!current_box || !previous_box) return false;
  // B's first line starts at its left edge; P's last line runs to its right edge.
  if (std::fabs((*current_box)[0] - (*first_line)[0]) >= first_height / 2) return false;
  if (std::fabs((*previous_box)[2] - (*last_line)[2]) >= last_height) return false;
  const std::string first_content = FirstNonEmptyContent(current);
  const std::string last_content = LastNonEmptyContent(previous);
  if (first_content.empty() || last_content.empty()) return false;
  if (EndsWithStopFlag(last_content)) return false;
  if (StartsWithDigitOrUpper(first_content)) return false;
  const double current_width = (*current_box)[2] - (*current_box)[0];
  const double previous_width = (*previous_box)[2] - (*previous_box)[0];
  const double narrower = std::min(current_width, previous_width);
  if (!(narrower > 0) || std::fabs(current_width - previous_width) >= narrower) return false;
  // A column break: B's top is above P's bottom.
  std::optional<Box> current_block = BoxOf(current);
  std::optional<Box> previous_block = BoxOf(previous);
  return current_block && previous_block && (*current_block)[1] < (*previous_block)[3];
}

struct OrderedBlock {
  Json page_idx;
  Json* block = nullptr;
};

bool IsTextBarrier(std::string_view type) {
  return type == "title" || type == "doc_title" || type == "paragraph_title" ||
         type == "interline_equation" || type == "list";
}
bool IsTextTransparent(std::string_view type) {
  return type == "image" || type == "table" || type == "chart" || type == "code";
}

// MinerU _find_previous_merge_prev_text_block.
Json* PreviousTextOnPage(const std::vector<OrderedBlock>& blocks, size_t current) {
  for (size_t i = current; i-- > 0;) {
    if (blocks[i].page_idx != blocks[current].page_idx) return nullptr;
    const std::string type = StringAt(*blocks[i].block, "type");
    if (IsTextBarrier(type)) return nullptr;
    if (type == "text") return blocks[i].block;
    if (!IsTextTransparent(type)) return nullptr;
  }
  return nullptr;
}

void MergeText(Json& current, Json& previous) {
  Json* to = MutableArrayAt(previous, "lines");
  Json* from = MutableArrayAt(current, "lines");
  if (to == nullptr || from == nullptr) return;
  for (Json& line : *from) to->push_back(std::move(line));
  current["lines"] = Json::array();
  current["lines_deleted"] = true;
}

bool IsRefTextList(const Json& block) {
  return StringAt(block, "type") == "list" && StringAt(block, "sub_type") == "ref_text";
}

// MinerU iter_block_spans: every span of the block's lines and of its sub-blocks, marked.
void MarkSpansCrossPage(Json& block) {
  std::vector<Json*> pending = {&block};
  while (!pending.empty()) {
    Json* node = pending.back();
    pending.pop_back();
    if (Json* lines = MutableArrayAt(*node, "lines")) {
      for (Json& line : *lines) {
        if (Json* spans = MutableArrayAt(line, "spans")) {
          for (Json& span : *spans) {
            if (span.is_object()) span["cross_page"] = true;
          }
        }
      }
    }
    if (Json* subs = MutableArrayAt(*node, "blocks")) {
      for (Json& sub : *subs) pending.push_back(&sub);
    }
  }
}

// MinerU _merge_current_ref_text_list_block.
void MergeRefTextList(const std::vector<OrderedBlock>& blocks, size_t current) {
  if (current == 0) return;
  Json& list = *blocks[current].block;
  Json& previous = *blocks[current - 1].block;
  if (!IsRefTextList(list) || !IsRefTextList(previous)) return;
  Json* children = MutableArrayAt(list, "blocks");
  if (children == nullptr) return;
  if (!previous.contains("blocks")) previous["blocks"] = Json::array();
  Json* to = MutableArrayAt(previous, "blocks");
  if (to == nullptr) return;
  if (blocks[current].page_idx != blocks[current - 1].page_idx) MarkSpansCrossPage(list);
  for (Json& child : *children) to->push_back(std::move(child));
  list["blocks"] = Json::array();
  list["lines_deleted"] = true;
}

}  // namespace

void MergeTruncatedParagraphs(Json& pdf_info) {
  if (!pdf_info.is_array()) return;
  std::vector<OrderedBlock> blocks;
  for (Json& page : pdf_info) {
    Json* para = MutableArrayAt(page, "para_blocks");
    if (para == nullptr) continue;
    Json page_idx = page.contains("page_idx") ? page["page_idx"] : Json();
    for (Json& block : *para) {
      if (block.is_object()) blocks.push_back({page_idx, &block});
    }
  }
  for (size_t i = blocks.size(); i-- > 0;) {
    Json& block = *blocks[i].block;
    const std::string type = StringAt(block, "type");
    if (type == "text") {
      if (!BlockHasLines(block) || !Truthy(block, "merge_prev")) continue;
      Json* previous = PreviousTextOnPage(blocks, i);
      if (previous != nullptr && CanMergeTextBlocks(block, *previous)) MergeText(block, *previous);
    } else if (type == "list") {
      if (!ArrayAt(block, "blocks").empty()) MergeRefTextList(blocks, i);
    }
  }
}

}  // namespace mineru::pipeline
