// SPDX-License-Identifier: Apache-2.0
#include "pipeline/magic_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "pipeline/magic_model_common.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

using magic::Block;
using magic::BlockJson;
using magic::Box;
using magic::BoxJson;
using magic::CenterDistance;
using magic::CodeContentClean;
using magic::EdgeDistance;
using magic::FixLists;
using magic::IsIn;
using magic::IsolatedFormulaClean;
using magic::ListGroup;
using magic::ListJson;
using magic::TextSpans;

// The types whose content becomes text spans under their own name.
bool IsTextLike(BlockType t) {
  using enum BlockType;
  static constexpr std::array kTextLike = {
      kText,          kTitle,       kImageCaption, kImageFootnote, kTableCaption,
      kTableFootnote, kCodeCaption, kRefText,      kPhonetic,      kHeader,
      kFooter,        kPageNumber,  kAsideText,    kPageFootnote,  kList};
  return std::find(kTextLike.begin(), kTextLike.end(), t) != kTextLike.end();
}

struct SpanContext {
  const ImagePathFn& image_path;
  std::string Path(std::string_view type, const Box& bbox) const {
    return image_path ? image_path(type, bbox) : std::string();
  }
};

// Rules 1-2 for one client block; nullopt for blocks MinerU drops (unknown, equation_block,
// invalid boxes).
std::optional<Block> ConvertBlock(const ContentBlock& cb, int index, int width, int height,
                                  const SpanContext& ctx, std::vector<std::string>* warnings) {
  std::optional<Block> shell = magic::BlockShell(cb.bbox, cb.angle, index, width, height, warnings);
  if (!shell) return std::nullopt;
  Block& b = *shell;
  // Python strings are Unicode: ill-formed UTF-8 from the model reads as U+FFFD, which also
  // keeps every string of the page serialisable.
  const std::string repaired = cb.content ? text::RepairUtf8(*cb.content) : std::string();
  const std::string_view content = repaired;
  bool split = false;
  if (IsTextLike(cb.type)) {
    b.type = BlockTypeName(cb.type);
    b.spans = TextSpans(b.bbox, content, &split);
  } else if (cb.type == BlockType::kImage) {
    b.type = "image_body";
    b.spans.push_back(Json{
        {"bbox", BoxJson(b.bbox)}, {"type", "image"}, {"image_path", ctx.Path("image", b.bbox)}});
  } else if (cb.type == BlockType::kTable) {
    b.type = "table_body";
    b.spans.push_back(Json{{"bbox", BoxJson(b.bbox)},
                           {"type", "table"},
                           {"html", content},
                           {"image_path", ctx.Path("table", b.bbox)}});
  } else if (cb.type == BlockType::kCode || cb.type == BlockType::kAlgorithm) {
    b.type = "code_body";
    const std::string code = CodeContentClean(content);
    const std::string lang = GuessCodeLanguage(code);
    b.spans = TextSpans(b.bbox, code, &split);
    std::string sub_type(BlockTypeName(cb.type));
    if (split && cb.type == BlockType::kCode) sub_type = "algorithm";
    b.line_extra = Json{{"type", sub_type}, {"guess_lang", lang}};
  } else if (cb.type == BlockType::kEquation) {
    b.type = "interline_equation";
    b.spans.push_back(Json{{"bbox", BoxJson(b.bbox)},
                           {"type", "interline_equation"},
                           {"content", IsolatedFormulaClean(content)},
                           {"image_path", ctx.Path("interline_equation", b.bbox)}});
  } else {
    return std::nullopt;  // unknown, equation_block: no MinerU group takes them
  }
  return shell;
}

// ---------------------------------------------------------------------------------------------
// Two-layer blocks (tie_up_category_by_index, get_type_blocks, fix_two_layer_blocks).

// reduct_overlap: drops every box lying inside another box of the list (two equal boxes drop
// each other).
std::vector<Block> ReduceOverlap(std::vector<Block> boxes) {
  std::vector<bool> keep(boxes.size(), true);
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = 0; j < boxes.size(); ++j) {
      if (i != j && IsIn(boxes[i].bbox, boxes[j].bbox)) keep[i] = false;
    }
  }
  std::vector<Block> out;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (keep[i]) out.push_back(std::move(boxes[i]));
  }
  return out;
}

std::vector<Block> OfType(const std::vector<Block>& blocks, std::string_view type) {
  std::vector<Block> out;
  for (const Block& b : blocks) {
    if (b.type == type) out.push_back(b);
  }
  return out;
}

struct Tie {
  Block subject;
  std::vector<Block> objects;
};

constexpr double kEdgeTieTolerance = 2.0;

// Each object goes to the subject with the smallest effective index difference: |Δindex| minus
// the number of other objects strictly between them. Between two tied subjects: the nearer edge
// when the edge distances differ by more than 2 points; else table captions take the later
// subject, footnotes the earlier one, anything else the nearer centre. More than two tied
// subjects (Python raises) -> the smallest edge distance, with a warning.
std::vector<Tie> TieUpByIndex(const std::vector<Block>& blocks, std::string_view subject_type,
                              std::string_view object_type, std::vector<std::string>* warnings) {
  std::vector<Tie> ties;
  for (Block& s : ReduceOverlap(OfType(blocks, subject_type))) ties.push_back({std::move(s), {}});
  const std::vector<Block> objects = ReduceOverlap(OfType(blocks, object_type));
  std::set<int> object_indices;
  for (const Block& o : objects) object_indices.insert(o.index);
  const auto effective_diff = [&](int a, int b) {
    const int lo = std::min(a, b);
    const int hi = std::max(a, b);
    if (lo == hi) return 0;
    const auto first = object_indices.upper_bound(lo);
    const auto last = object_indices.lower_bound(hi);
    return hi - lo - static_cast<int>(std::distance(first, last));
  };
  for (const Block& obj : objects) {
    if (ties.empty()) continue;
    int best_diff = std::numeric_limits<int>::max();
    std::vector<size_t> best;
    for (size_t i = 0; i < ties.size(); ++i) {
      const int diff = effective_diff(obj.index, ties[i].subject.index);
      if (diff < best_diff) {
        best_diff = diff;
        best = {i};
      } else if (diff == best_diff) {
        best.push_back(i);
      }
    }
    const auto edge = [&](size_t i) { return EdgeDistance(obj.bbox, ties[i].subject.bbox); };
    const auto nearest_edge = [&]() {
      return *std::min_element(best.begin(), best.end(),
                               [&](size_t a, size_t b) { return edge(a) < edge(b); });
    };
    size_t chosen = best[0];
    if (best.size() == 2) {
      const auto by_index = [&](size_t a, size_t b) {
        return ties[a].subject.index < ties[b].subject.index;
      };
      if (std::fabs(edge(best[0]) - edge(best[1])) > kEdgeTieTolerance) {
        chosen = nearest_edge();
      } else if (object_type == "table_caption") {
        chosen = *std::max_element(best.begin(), best.end(), by_index);
      } else if (object_type.ends_with("footnote")) {
        chosen = *std::min_element(best.begin(), best.end(), by_index);
      } else {
        const auto center = [&](size_t i) {
          return CenterDistance(obj.bbox, ties[i].subject.bbox);
        };
        chosen = *std::min_element(best.begin(), best.end(),
                                   [&](size_t a, size_t b) { return center(a) < center(b); });
      }
    } else if (best.size() > 2) {
      chosen = nearest_edge();
      if (warnings != nullptr) {
        warnings->push_back(
            fmt::format("middle.json: {} block {} ties with {} bodies; given to the nearest",
                        object_type, obj.index, best.size()));
      }
    }
    ties[chosen].objects.push_back(obj);
  }
  return ties;
}

struct TwoLayer {
  Block body;
  std::vector<Block> captions;
  std::vector<Block> footnotes;
};

struct Group {
  std::string type;  // image, table, code
  Block body;
  std::vector<Block> members;  // body, captions, footnotes sorted by index
  Json sub_type;               // code only
  Json guess_lang;             // code with sub_type "code" only
};

// Image and table only. Footnotes with an index below their body's move to the nearest other
// body at or before them (else become text). Captions, taken from the highest index down, must
// be consecutive, a gap holding only the body index being allowed; the highest one is always kept
// (even after the body). Footnotes, from the lowest index up, must be consecutive. Captions and
// footnotes after the first break become text.
void EnforcePlacement(std::vector<TwoLayer>* records, std::vector<Block>* leftovers) {
  std::vector<std::pair<Block, size_t>> misplaced;
  for (size_t r = 0; r < records->size(); ++r) {
    TwoLayer& rec = (*records)[r];
    std::vector<Block> valid;
    for (Block& f : rec.footnotes) {
      if (f.index >= rec.body.index) {
        valid.push_back(std::move(f));
      } else {
        misplaced.emplace_back(std::move(f), r);
      }
    }
    rec.footnotes = std::move(valid);
  }
  for (auto& [footnote, original] : misplaced) {
    std::optional<size_t> best;
    int best_distance = std::numeric_limits<int>::max();
    for (size_t r = 0; r < records->size(); ++r) {
      const int body_index = (*records)[r].body.index;
      if (body_index <= footnote.index && r != original &&
          footnote.index - body_index < best_distance) {
        best_distance = footnote.index - body_index;
        best = r;
      }
    }
    if (best) {
      (*records)[*best].footnotes.push_back(std::move(footnote));
    } else {
      leftovers->push_back(std::move(footnote));
    }
  }
  const auto by_index = [](const Block& a, const Block& b) { return a.index < b.index; };
  for (TwoLayer& rec : *records) {
    std::vector<Block>& caps = rec.captions;
    if (!caps.empty()) {
      std::stable_sort(caps.begin(), caps.end(),
                       [&](const Block& a, const Block& b) { return by_index(b, a); });
      size_t keep = 1;
      for (; keep < caps.size(); ++keep) {
        const int prev = caps[keep - 1].index;
        const int curr = caps[keep].index;
        const bool body_gap = prev - curr == 2 && curr + 1 == rec.body.index;
        if (curr != prev - 1 && !body_gap) break;
      }
      for (size_t i = keep; i < caps.size(); ++i) leftovers->push_back(std::move(caps[i]));
      caps.resize(keep);
      std::reverse(caps.begin(), caps.end());
    }
    std::vector<Block>& notes = rec.footnotes;
    if (!notes.empty()) {
      std::stable_sort(notes.begin(), notes.end(), by_index);
      size_t keep = 1;
      while (keep < notes.size() && notes[keep].index == notes[keep - 1].index + 1) ++keep;
      for (size_t i = keep; i < notes.size(); ++i) leftovers->push_back(std::move(notes[i]));
      notes.resize(keep);
    }
  }
}

// fix_two_layer_blocks for one family; blocks that end up in no group are appended to
// `leftovers` (they become text).
std::vector<Group> FixTwoLayer(const std::vector<Block>& blocks, const std::string& family,
                               std::vector<Block>* leftovers, std::vector<std::string>* warnings) {
  std::vector<Tie> with_captions =
      TieUpByIndex(blocks, family + "_body", family + "_caption", warnings);
  std::vector<Tie> with_footnotes =
      TieUpByIndex(blocks, family + "_body", family + "_footnote", warnings);
  std::vector<TwoLayer> records;
  for (size_t i = 0; i < with_captions.size(); ++i) {
    records.push_back({std::move(with_captions[i].subject), std::move(with_captions[i].objects),
                       std::move(with_footnotes[i].objects)});
  }
  std::vector<Block> not_included;
  if (family == "table" || family == "image") EnforcePlacement(&records, &not_included);

  std::set<int> placed;
  std::vector<Group> groups;
  for (TwoLayer& rec : records) {
    Group g;
    g.type = family;
    rec.body.type = family + "_body";
    placed.insert(rec.body.index);
    g.members.push_back(rec.body);
    for (Block& c : rec.captions) {
      c.type = family + "_caption";
      placed.insert(c.index);
      g.members.push_back(std::move(c));
    }
    for (Block& f : rec.footnotes) {
      f.type = family + "_footnote";
      placed.insert(f.index);
      g.members.push_back(std::move(f));
    }
    std::stable_sort(g.members.begin(), g.members.end(),
                     [](const Block& a, const Block& b) { return a.index < b.index; });
    g.body = std::move(rec.body);
    groups.push_back(std::move(g));
  }
  std::set<int> listed;
  for (const Block& b : not_included) listed.insert(b.index);
  for (const Block& b : blocks) {
    if (placed.count(b.index) == 0 && listed.count(b.index) == 0) {
      not_included.push_back(b);
      listed.insert(b.index);
    }
  }
  for (Block& b : not_included) leftovers->push_back(std::move(b));
  return groups;
}

// Code groups take sub_type (and, for code, guess_lang) from the body's line extra, which is
// then removed.
void FinishCodeGroup(Group* g) {
  for (Block& m : g->members) {
    if (m.type != "code_body" || !m.line_extra.is_object()) continue;
    g->sub_type = m.line_extra["type"];
    if (g->sub_type == "code") g->guess_lang = m.line_extra["guess_lang"];
    m.line_extra = Json();
  }
}

Json GroupJson(const Group& g) {
  Json members = Json::array();
  for (const Block& m : g.members) members.push_back(BlockJson(m));
  Json j = {{"type", g.type},
            {"bbox", BoxJson(g.body.bbox)},
            {"blocks", std::move(members)},
            {"index", g.body.index}};
  if (!g.sub_type.is_null()) j["sub_type"] = g.sub_type;
  if (!g.guess_lang.is_null()) j["guess_lang"] = g.guess_lang;
  return j;
}

}  // namespace

Json MiddlePage(const std::vector<ContentBlock>& blocks, int page_idx, int width_pt, int height_pt,
                const ImagePathFn& image_path, std::vector<std::string>* warnings) {
  const SpanContext ctx{image_path};
  std::vector<Block> images, tables, codes, equations, texts, titles, ref_texts, phonetics,
      discarded, lists;
  // Rule 3: the MinerU groups by type; other types are dropped.
  const std::vector<std::pair<std::vector<Block>*, std::vector<std::string_view>>> routes = {
      {&images, {"image_body", "image_caption", "image_footnote"}},
      {&tables, {"table_body", "table_caption", "table_footnote"}},
      {&codes, {"code_body", "code_caption"}},
      {&equations, {"interline_equation"}},
      {&texts, {"text"}},
      {&titles, {"title"}},
      {&ref_texts, {"ref_text"}},
      {&phonetics, {"phonetic"}},
      {&discarded, {"header", "footer", "page_number", "aside_text", "page_footnote"}},
      {&lists, {"list"}}};
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::optional<Block> b =
        ConvertBlock(blocks[i], static_cast<int>(i), width_pt, height_pt, ctx, warnings);
    if (!b) continue;
    for (const auto& [group, types] : routes) {
      if (std::find(types.begin(), types.end(), b->type) != types.end()) {
        group->push_back(std::move(*b));
        break;
      }
    }
  }

  const std::vector<ListGroup> list_groups = FixLists(lists, &texts, &ref_texts);
  std::vector<Block> leftovers;
  const std::vector<Group> image_groups = FixTwoLayer(images, "image", &leftovers, warnings);
  const std::vector<Group> table_groups = FixTwoLayer(tables, "table", &leftovers, warnings);
  std::vector<Group> code_groups = FixTwoLayer(codes, "code", &leftovers, warnings);
  for (Group& g : code_groups) FinishCodeGroup(&g);
  for (Block& b : leftovers) {
    b.type = "text";
    texts.push_back(std::move(b));
  }

  // para_blocks: concatenated in MinerU's order, then stably sorted by index.
  std::vector<std::pair<int, Json>> para;
  for (const auto* groups : {&image_groups, &table_groups}) {
    for (const Group& g : *groups) para.emplace_back(g.body.index, GroupJson(g));
  }
  for (const Group& g : code_groups) para.emplace_back(g.body.index, GroupJson(g));
  for (const auto* simple : {&ref_texts, &phonetics, &titles, &texts, &equations}) {
    for (const Block& b : *simple) para.emplace_back(b.index, BlockJson(b));
  }
  for (const ListGroup& l : list_groups) para.emplace_back(l.list.index, ListJson(l));
  std::stable_sort(para.begin(), para.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  Json para_blocks = Json::array();
  for (auto& [index, block] : para) para_blocks.push_back(std::move(block));
  Json discarded_blocks = Json::array();
  for (const Block& b : discarded) discarded_blocks.push_back(BlockJson(b));
  return Json{{"para_blocks", std::move(para_blocks)},
              {"discarded_blocks", std::move(discarded_blocks)},
              {"page_size", Json::array({width_pt, height_pt})},
              {"page_idx", page_idx}};
}

}  // namespace mineru::pipeline