// SPDX-License-Identifier: Apache-2.0
#include "pipeline/layout_pdf.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/middle_json.h"

namespace mineru::pipeline {
namespace {

using pdf::LayoutPaint;
using pdf::LayoutRgb;
using Rect = std::array<double, 4>;

// The filled and outlined kinds, in MinerU's drawing order.
enum Kind {
  kCodeBody,
  kCodeCaption,
  kCodeFootnote,
  kDiscarded,
  kTableBody,
  kTableCaption,
  kTableFootnote,
  kImageBody,
  kImageCaption,
  kImageFootnote,
  kTitle,
  kText,
  kInterlineEquation,
  kList,
  kListItem,
  kIndex,
  kKindCount,
};

struct KindStyle {
  LayoutRgb rgb;
  LayoutPaint paint;
};

constexpr std::array<KindStyle, kKindCount> kStyles = {{
    {kLayoutCodeBodyRgb, LayoutPaint::kFill},
    {kLayoutCodeCaptionRgb, LayoutPaint::kFill},
    {kLayoutCodeFootnoteRgb, LayoutPaint::kFill},
    {kLayoutDiscardedRgb, LayoutPaint::kFill},
    {kLayoutTableBodyRgb, LayoutPaint::kFill},
    {kLayoutTableCaptionRgb, LayoutPaint::kFill},
    {kLayoutTableFootnoteRgb, LayoutPaint::kFill},
    {kLayoutImageBodyRgb, LayoutPaint::kFill},
    {kLayoutImageCaptionRgb, LayoutPaint::kFill},
    {kLayoutImageFootnoteRgb, LayoutPaint::kFill},
    {kLayoutTitleRgb, LayoutPaint::kFill},
    {kLayoutTextRgb, LayoutPaint::kFill},
    {kLayoutInterlineEquationRgb, LayoutPaint::kFill},
    {kLayoutListRgb, LayoutPaint::kFill},
    {kLayoutListRgb, LayoutPaint::kStroke},
    {kLayoutListRgb, LayoutPaint::kFill},
}};

// A block's "bbox" when it is four numbers within the plan's bound, corners ordered.
std::optional<Rect> BoxOf(const Json& block) {
  const Json& bbox = ArrayAt(block, "bbox");
  if (bbox.size() != 4) return std::nullopt;
  Rect r;
  for (size_t i = 0; i < 4; ++i) {
    if (!bbox[i].is_number()) return std::nullopt;
    r[i] = bbox[i].get<double>();
    if (!std::isfinite(r[i]) || std::fabs(r[i]) > pdf::kMaxLayoutCoordinate) return std::nullopt;
  }
  return Rect{std::min(r[0], r[2]), std::min(r[1], r[3]), std::max(r[0], r[2]),
              std::max(r[1], r[3])};
}

// Python's truth value of block.get(key, False).
bool Truthy(const Json& block, const char* key) {
  if (!block.is_object()) return false;
  auto it = block.find(key);
  if (it == block.end()) return false;
  const Json& v = *it;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
  return false;
}

bool CrossPage(const Json& block) { return Truthy(block, "cross_page"); }

// MinerU 2.7.6 numbers a table's sub-blocks in this order (a stable sort); other types, which
// that version never puts into a table, come last.
int TableNumberRank(const std::string& type) {
  if (type == "table_caption") return 1;
  if (type == "table_body") return 2;
  if (type == "table_footnote") return 3;
  return 4;
}

class PageBuilder {
 public:
  explicit PageBuilder(Profile profile) : pro_(profile == Profile::kPro) {}

  pdf::LayoutPagePlan Build(const Json& page, int page_index) {
    for (const Json& block : ArrayAt(page, "discarded_blocks")) Add(kDiscarded, block);
    for (const Json& block : ArrayAt(page, "para_blocks")) {
      AddBoxes(block);
      AddNumbers(block);
    }
    pdf::LayoutPagePlan plan;
    plan.page_index = page_index;
    for (int kind = 0; kind < kKindCount; ++kind) {
      for (const Rect& rect : boxes_[kind]) {
        if (plan.boxes.size() == pdf::kMaxLayoutBoxesPerPage) break;
        plan.boxes.push_back({rect, kStyles[kind].rgb, kStyles[kind].paint});
      }
    }
    plan.numbers = std::move(numbers_);
    if (plan.numbers.size() > pdf::kMaxLayoutNumbersPerPage) {
      plan.numbers.resize(pdf::kMaxLayoutNumbersPerPage);
    }
    return plan;
  }

 private:
  void Add(Kind kind, const Json& block) {
    if (auto rect = BoxOf(block)) boxes_[kind].push_back(*rect);
  }

  void Number(const Json& block) {
    if (auto rect = BoxOf(block)) {
      numbers_.push_back({*rect, static_cast<uint32_t>(numbers_.size() + 1)});
    }
  }

  // Sub-blocks of a group whose type is one of `types`, each to the kind beside it.
  void AddChildren(const Json& group, std::initializer_list<std::pair<const char*, Kind>> types,
                   bool skip_cross_page_footnotes = false) {
    for (const Json& child : ArrayAt(group, "blocks")) {
      const std::string type = StringAt(child, "type");
      for (const auto& [name, kind] : types) {
        if (type != name) continue;
        if (skip_cross_page_footnotes && kind == kTableFootnote && CrossPage(child)) break;
        Add(kind, child);
        break;
      }
    }
  }

  void AddBoxes(const Json& block) {
    const std::string type = StringAt(block, "type");
    if (type == "table") {
      AddChildren(block,
                  {{"table_body", kTableBody},
                   {"table_caption", kTableCaption},
                   {"table_footnote", kTableFootnote}},
                  /*skip_cross_page_footnotes=*/true);
    } else if (type == "image") {
      AddChildren(block, {{"image_body", kImageBody},
                          {"image_caption", kImageCaption},
                          {"image_footnote", kImageFootnote}});
    } else if (type == "code") {
      if (pro_) {
        AddChildren(block, {{"code_body", kCodeBody},
                            {"code_caption", kCodeCaption},
                            {"code_footnote", kCodeFootnote}});
      } else {
        AddChildren(block, {{"code_body", kCodeBody}, {"code_caption", kCodeCaption}});
      }
    } else if (pro_ && type == "chart") {
      AddChildren(block, {{"chart_body", kImageBody},
                          {"chart_caption", kImageCaption},
                          {"chart_footnote", kImageFootnote}});
    } else if (pro_ && type == "seal") {
      Add(kImageBody, block);
    } else if (type == "title") {
      Add(kTitle, block);
    } else if (type == "text" || type == "ref_text" || (pro_ && type == "abstract")) {
      Add(kText, block);
    } else if (type == "interline_equation") {
      Add(kInterlineEquation, block);
    } else if (type == "list") {
      Add(kList, block);
      for (const Json& item : ArrayAt(block, "blocks")) Add(kListItem, item);
    } else if (type == "index") {
      Add(kIndex, block);
    }
  }

  void AddNumbers(const Json& block) {
    const std::string type = StringAt(block, "type");
    const bool whole = type == "text" || type == "ref_text" || type == "title" ||
                       type == "interline_equation" || type == "list" || type == "index" ||
                       (pro_ && (type == "abstract" || type == "seal"));
    if (whole) {
      Number(block);
      return;
    }
    const Json& children = ArrayAt(block, "blocks");
    if (pro_) {
      if (type == "image" || type == "chart" || type == "code" || type == "table") {
        for (const Json& child : children) {
          if (!CrossPage(child)) Number(child);
        }
      }
      return;
    }
    if (type == "image" || type == "code") {
      for (const Json& child : children) Number(child);
    } else if (type == "table") {
      std::vector<const Json*> sorted;
      sorted.reserve(children.size());
      for (const Json& child : children) sorted.push_back(&child);
      std::stable_sort(sorted.begin(), sorted.end(), [](const Json* a, const Json* b) {
        return TableNumberRank(StringAt(*a, "type")) < TableNumberRank(StringAt(*b, "type"));
      });
      for (const Json* child : sorted) {
        if (!CrossPage(*child)) Number(*child);
      }
    }
  }

  bool pro_;
  std::array<std::vector<Rect>, kKindCount> boxes_;
  std::vector<pdf::LayoutNumber> numbers_;
};

}  // namespace

pdf::LayoutPagePlan BuildLayoutPagePlan(const Json& page, Profile profile, int page_index) {
  return PageBuilder(profile).Build(page, page_index);
}

pdf::LayoutPlan BuildLayoutPlan(const Json& pdf_info, Profile profile, int first_page) {
  pdf::LayoutPlan plan;
  if (!pdf_info.is_array()) return plan;
  plan.pages.reserve(pdf_info.size());
  int index = first_page;
  for (const Json& page : pdf_info)
    plan.pages.push_back(BuildLayoutPagePlan(page, profile, index++));
  return plan;
}

}  // namespace mineru::pipeline
