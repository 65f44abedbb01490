// SPDX-License-Identifier: Apache-2.0
#include "pipeline/caption_fallbacks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline::magic {
namespace {

// Coordinates are within +-1e9 points (ToPoints), so every difference and sum below fits in a
// double exactly; heights are clamped to at least 1 as MinerU does.
double Height(const Block& b) { return std::max(static_cast<double>(b.bbox[3] - b.bbox[1]), 1.0); }

bool IsIgnoredForRelations(const Block& b) {
  return b.type == "header" || b.type == "footer" || b.type == "page_number" ||
         b.type == "page_footnote" || b.type == "aside_text";
}

bool IsVisualBody(const Block& b) {
  return b.type == "image_body" || b.type == "image_block_body" || b.type == "table_body" ||
         b.type == "chart_body" || b.type == "code_body";
}

bool IsFragmentType(const Block& b) { return b.type == "text" || b.type == "footnote"; }

void MakeCaption(Block* b) {
  b->type = "caption";
  // A caption fragment no longer takes part in the truncated-paragraph merge.
  if (b->fields.is_object()) b->fields.erase("merge_prev");
}

// The span contents of the block's line joined (text and formula spans alike).
std::string BlockText(const Block& b) {
  std::string out;
  if (!b.spans.is_array()) return out;
  for (const Json& span : b.spans) {
    if (!span.is_object()) continue;
    auto it = span.find("content");
    if (it != span.end() && it->is_string()) out += it->get_ref<const std::string&>();
  }
  return out;
}

// is_inline_caption_fragment.
bool IsInlineCaptionFragment(const Block& caption, const Block& text, const Block& visual) {
  const Box& c = caption.bbox;
  const Box& t = text.bbox;
  const double caption_height = Height(caption);
  const double text_height = Height(text);
  const double min_height = std::max(std::min(caption_height, text_height), 1.0);
  const double max_height = std::max(caption_height, text_height);
  const double overlap =
      static_cast<double>(std::min(c[3], t[3])) - static_cast<double>(std::max(c[1], t[1]));
  const double center_dy = std::fabs((static_cast<double>(c[1]) + c[3]) / 2.0 -
                                     (static_cast<double>(t[1]) + t[3]) / 2.0);
  const bool same_line = overlap / min_height >= 0.6 || center_dy <= max_height * 0.5;
  if (!same_line) return false;
  const double gap =
      static_cast<double>(visual.bbox[1]) - static_cast<double>(std::max(c[3], t[3]));
  return gap >= 0 && gap <= std::max(12.0, max_height * 1.5);
}

// is_horizontally_near_table.
bool IsHorizontallyNear(const Block& b, const Block& table) {
  const double width = std::max(static_cast<double>(table.bbox[2] - table.bbox[0]), 1.0);
  const double tolerance = std::max(12.0, width * 0.03);
  return !(b.bbox[2] < table.bbox[0] - tolerance || b.bbox[0] > table.bbox[2] + tolerance);
}

// stacked_caption_max_gap.
double StackedMaxGap(double height) { return std::max(12.0, height * 1.5); }

// find_stacked_table_caption_cluster: positions into `blocks`, top to bottom.
std::vector<size_t> StackedCaptionCluster(const std::vector<Block>& blocks, size_t table_pos) {
  const Block& table = blocks[table_pos];
  std::vector<size_t> above;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    if (i == table_pos) continue;
    if (b.type != "caption" && b.type != "text" && b.type != "footnote") continue;
    if (b.bbox[3] > table.bbox[1] || !IsHorizontallyNear(b, table)) continue;
    above.push_back(i);
  }
  // Lowest first: by (top, index) descending.
  std::sort(above.begin(), above.end(), [&](size_t a, size_t b) {
    if (blocks[a].bbox[1] != blocks[b].bbox[1]) return blocks[a].bbox[1] > blocks[b].bbox[1];
    return blocks[a].index > blocks[b].index;
  });
  std::vector<size_t> cluster;
  double next_top = table.bbox[1];
  double max_child_height = 1;
  for (size_t i : above) {
    const Block& b = blocks[i];
    const double height = Height(b);
    const double gap = next_top - b.bbox[3];
    if (!(gap >= 0 && gap <= StackedMaxGap(std::max(max_child_height, height)))) break;
    cluster.push_back(i);
    next_top = b.bbox[1];
    max_child_height = std::max(max_child_height, height);
  }
  std::reverse(cluster.begin(), cluster.end());
  return cluster;
}

// fallback_stacked_table_caption_fragments.
void FallbackStackedTableCaptions(std::vector<Block>* blocks) {
  for (size_t t = 0; t < blocks->size(); ++t) {
    if ((*blocks)[t].type != "table_body") continue;
    const std::vector<size_t> cluster = StackedCaptionCluster(*blocks, t);
    std::optional<size_t> last_caption;
    for (size_t k = 0; k < cluster.size(); ++k) {
      if ((*blocks)[cluster[k]].type == "caption") last_caption = k;
    }
    if (!last_caption) continue;
    for (size_t k = *last_caption + 1; k < cluster.size(); ++k) {
      Block& b = (*blocks)[cluster[k]];
      if (IsFragmentType(b)) MakeCaption(&b);
    }
  }
}

// fallback_inline_caption_fragments (which runs the stacked rule at its end).
void FallbackInlineCaptionFragments(std::vector<Block>* blocks) {
  std::vector<Block>& bs = *blocks;
  const size_t n = bs.size();
  if (n < 3) return;
  // The fall-backs never change an ignored block's type, so the effective neighbours of every
  // position are fixed; their types are read as they are at the time of the test.
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> previous(n, kNone), next(n, kNone);
  for (size_t i = 0, last = kNone; i < n; ++i) {
    previous[i] = last;
    if (!IsIgnoredForRelations(bs[i])) last = i;
  }
  for (size_t i = n, last = kNone; i-- > 0;) {
    next[i] = last;
    if (!IsIgnoredForRelations(bs[i])) last = i;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!IsFragmentType(bs[i]) || previous[i] == kNone || next[i] == kNone) continue;
    const Block& caption = bs[previous[i]];
    const Block& visual = bs[next[i]];
    if (caption.type != "caption" || !IsVisualBody(visual)) continue;
    if (IsInlineCaptionFragment(caption, bs[i], visual)) MakeCaption(&bs[i]);
  }
  FallbackStackedTableCaptions(blocks);
}

// fallback_leading_table_continuation_captions.
void FallbackLeadingContinuationCaptions(std::vector<Block>* blocks) {
  std::vector<size_t> effective;
  for (size_t i = 0; i < blocks->size(); ++i) {
    if (!IsIgnoredForRelations((*blocks)[i])) effective.push_back(i);
  }
  if (effective.size() < 2) return;
  size_t cursor = 0;
  while (cursor < effective.size()) {
    const Block& b = (*blocks)[effective[cursor]];
    if (!IsFragmentType(b) || !IsTableContinuationText(BlockText(b))) break;
    ++cursor;
  }
  if (cursor == 0 || cursor >= effective.size()) return;
  const Block& table = (*blocks)[effective[cursor]];
  if (table.type != "table_body") return;
  double next_top = table.bbox[1];
  double max_child_height = 1;
  for (size_t k = cursor; k-- > 0;) {
    const Block& b = (*blocks)[effective[k]];
    if (!IsHorizontallyNear(b, table)) return;
    const double height = Height(b);
    const double gap = next_top - b.bbox[3];
    const double max_gap = StackedMaxGap(std::max(max_child_height, height));
    const double max_overlap = std::max(2.0, height * 0.3);
    if (gap > max_gap || gap < -max_overlap) return;
    next_top = b.bbox[1];
    max_child_height = std::max(max_child_height, height);
  }
  for (size_t k = 0; k < cursor; ++k) MakeCaption(&(*blocks)[effective[k]]);
}

}  // namespace

void ApplyCaptionFallbacks(std::vector<Block>* blocks) {
  FallbackInlineCaptionFragments(blocks);
  FallbackLeadingContinuationCaptions(blocks);
}

}  // namespace mineru::pipeline::magic
