// SPDX-License-Identifier: Apache-2.0
#include "pipeline/visual_groups.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace mineru::pipeline::magic {
namespace {

// VISUAL_MAIN_TYPES: a body type -> its group type ("" for anything else).
std::string_view GroupTypeOf(std::string_view body_type) {
  if (body_type == "image_body" || body_type == "image_block_body") return "image";
  if (body_type == "table_body") return "table";
  if (body_type == "chart_body") return "chart";
  if (body_type == "code_body") return "code";
  return "";
}

bool IsChild(std::string_view type) { return type == "caption" || type == "footnote"; }

// bbox_area: negative extents count as 0.
int64_t ClampedArea(const Box& b) {
  return std::max<int64_t>(0, int64_t{b[2]} - b[0]) * std::max<int64_t>(0, int64_t{b[3]} - b[1]);
}

// are_bboxes_overlapping: a two-dimensional intersection of positive area.
bool Overlap2D(const Box& a, const Box& b) {
  return !(a[2] <= b[0] || a[0] >= b[2] || a[3] <= b[1] || a[1] >= b[3]);
}

// vertical_gap_between_blocks: (top, bottom) of the free band between two vertically separated
// boxes; nullopt when they overlap vertically.
std::optional<std::pair<int, int>> VerticalGap(const Box& a, const Box& b) {
  if (a[3] <= b[1]) return std::make_pair(a[3], b[1]);
  if (b[3] <= a[1]) return std::make_pair(b[3], a[1]);
  return std::nullopt;
}

// relative_bbox.
Json RelativeBox(const Box& child, const Box& parent) {
  const double w = std::max(parent[2] - parent[0], 1);
  const double h = std::max(parent[3] - parent[1], 1);
  return Json::array({ClampRound3((child[0] - static_cast<double>(parent[0])) / w),
                      ClampRound3((child[1] - static_cast<double>(parent[1])) / h),
                      ClampRound3((child[2] - static_cast<double>(parent[0])) / w),
                      ClampRound3((child[3] - static_cast<double>(parent[1])) / h)});
}

struct Absorption {
  std::set<int> absorbed;             // indices of the absorbed image/chart bodies
  std::map<int, Json> sub_images_of;  // image_block index -> its sub_images
};

// absorb_image_block_members.
Absorption AbsorbImageBlockMembers(const std::vector<Block>& blocks) {
  std::vector<const Block*> parents;
  for (const Block& b : blocks) {
    if (b.type == "image_block_body") parents.push_back(&b);
  }
  Absorption out;
  if (parents.empty()) return out;
  constexpr double kMemberRatio = 0.9;
  for (const Block& member : blocks) {  // index order, so every sub_images list is too
    if (member.type != "image_body" && member.type != "chart_body") continue;
    const Block* best = nullptr;
    std::tuple<double, int64_t, int> best_key;
    for (const Block* parent : parents) {
      const double ratio = OverlapRatioOfFirst(member.bbox, parent->bbox);
      if (ratio < kMemberRatio) continue;
      const std::tuple<double, int64_t, int> key = {-ratio, ClampedArea(parent->bbox),
                                                    parent->index};
      if (best == nullptr || key < best_key) {
        best = parent;
        best_key = key;
      }
    }
    if (best == nullptr) continue;
    out.absorbed.insert(member.index);
    Json& list = out.sub_images_of[best->index];
    if (list.is_null()) list = Json::array();
    list.push_back(Json{{"type", member.type == "chart_body" ? "chart" : "image"},
                        {"bbox", RelativeBox(member.bbox, best->bbox)}});
  }
  return out;
}

// is_visual_neighbor's test of the blocks between child and body that are not of an allowed
// type: each must lie outside their vertical gap and overlap neither of them.
bool OutsideVisualGap(const std::vector<const Block*>& in_between, const Block& child,
                      const Block& body) {
  if (in_between.empty()) return true;
  const std::optional<std::pair<int, int>> gap = VerticalGap(child.bbox, body.bbox);
  if (!gap) return false;
  for (const Block* b : in_between) {
    if (Overlap2D(b->bbox, child.bbox) || Overlap2D(b->bbox, body.bbox)) return false;
    if (b->bbox[1] < gap->second && b->bbox[3] > gap->first) return false;
  }
  return true;
}

struct Candidate {
  size_t pos;    // position in the relation sequence
  int distance;  // effective index distance
};

// The nearest body in one direction that passes is_visual_neighbor. Along one direction the
// effective distance grows by at least one at every body passed, so the nearest passing body
// is that direction's only candidate at its smallest distance; there are thus at most two tied
// candidates in all, one per side. Cost: the bodies passed times the blocks in the way (MinerU
// compares every child with every body over every block between them).
std::optional<Candidate> NearestNeighbourBody(const std::vector<const Block*>& seq, size_t child,
                                              bool forward) {
  const Block& c = *seq[child];
  const bool is_caption = c.type == "caption";
  std::vector<const Block*> in_the_way;  // blocks passed that are not of an allowed type
  int same_kind = 0;
  for (size_t p = child;;) {
    if (forward ? ++p >= seq.size() : p-- == 0) break;
    const Block& b = *seq[p];
    if (!GroupTypeOf(b.type).empty() && OutsideVisualGap(in_the_way, c, b)) {
      const int apart = static_cast<int>(p > child ? p - child : child - p);
      return Candidate{p, apart - same_kind};
    }
    if (b.type == c.type) ++same_kind;
    const bool allowed = b.type == "caption" || (!is_caption && b.type == "footnote");
    if (allowed) continue;
    // A block overlapping the child is in the way of every body further on.
    if (Overlap2D(b.bbox, c.bbox)) return std::nullopt;
    in_the_way.push_back(&b);
  }
  return std::nullopt;
}

// find_best_visual_parent.
std::optional<size_t> BestParent(const std::vector<const Block*>& seq, size_t child) {
  const Block& c = *seq[child];
  std::vector<Candidate> candidates;
  // Footnotes take no body with a higher index (the sequence is in index order).
  if (c.type == "caption") {
    if (auto after = NearestNeighbourBody(seq, child, true)) candidates.push_back(*after);
  }
  if (auto before = NearestNeighbourBody(seq, child, false)) candidates.push_back(*before);
  if (candidates.empty()) return std::nullopt;
  int best = candidates[0].distance;
  for (const Candidate& k : candidates) best = std::min(best, k.distance);
  std::erase_if(candidates, [&](const Candidate& k) { return k.distance != best; });
  if (candidates.size() == 1) return candidates[0].pos;

  const auto index = [&](const Candidate& k) { return seq[k.pos]->index; };
  const auto edge = [&](const Candidate& k) { return EdgeDistance(c.bbox, seq[k.pos]->bbox); };
  double min_edge = edge(candidates[0]), max_edge = min_edge;
  for (const Candidate& k : candidates) {
    min_edge = std::min(min_edge, edge(k));
    max_edge = std::max(max_edge, edge(k));
  }
  const auto pick = [&](auto less) {
    return std::min_element(candidates.begin(), candidates.end(), less)->pos;
  };
  if (max_edge - min_edge > 2) {
    return pick([&](const Candidate& a, const Candidate& b) {
      return std::make_pair(edge(a), index(a)) < std::make_pair(edge(b), index(b));
    });
  }
  const bool all_tables = std::all_of(candidates.begin(), candidates.end(), [&](const auto& k) {
    return seq[k.pos]->type == "table_body";
  });
  if (c.type == "caption" && all_tables) {
    return pick([&](const Candidate& a, const Candidate& b) { return index(a) > index(b); });
  }
  if (c.type == "footnote") {
    return pick([&](const Candidate& a, const Candidate& b) { return index(a) < index(b); });
  }
  const auto center = [&](const Candidate& k) { return CenterDistance(c.bbox, seq[k.pos]->bbox); };
  return pick([&](const Candidate& a, const Candidate& b) {
    return std::make_pair(center(a), index(a)) < std::make_pair(center(b), index(b));
  });
}

}  // namespace

double ClampRound3(double v) {
  if (std::isnan(v)) return 0.0;  // unreachable for finite boxes; keeps the JSON a number
  v = std::min(std::max(v, 0.0), 1.0);
  // glibc formats the exact binary value and rounds half to even, as CPython's round() does.
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", v);
  return std::strtod(text, nullptr);
}

VisualRegrouping RegroupVisualBlocks(const std::vector<Block>& blocks,
                                     const std::set<int>& filled_lists) {
  const Absorption absorption = AbsorbImageBlockMembers(blocks);
  // The relation sequence: every block but the absorbed ones and the lists without children.
  std::vector<const Block*> seq;
  for (const Block& b : blocks) {
    if (absorption.absorbed.count(b.index) > 0) continue;
    if (b.type == "list" && filled_lists.count(b.index) == 0) continue;
    seq.push_back(&b);
  }
  std::map<size_t, std::vector<const Block*>> children_of;  // body position -> children
  VisualRegrouping out;
  for (size_t p = 0; p < seq.size(); ++p) {
    if (!IsChild(seq[p]->type)) continue;
    if (const std::optional<size_t> parent = BestParent(seq, p)) {
      children_of[*parent].push_back(seq[p]);
    } else {
      out.unmatched.push_back(*seq[p]);
    }
  }
  for (size_t p = 0; p < seq.size(); ++p) {
    const Block& main = *seq[p];
    const std::string_view group_type = GroupTypeOf(main.type);
    if (group_type.empty()) continue;
    VisualGroup g;
    g.type = std::string(group_type);
    g.body = main;
    g.body.type = g.type + "_body";
    if (g.body.fields.is_object()) {
      if (g.type == "image" || g.type == "chart") {
        const auto sub_type = g.body.fields.find("sub_type");
        if (sub_type != g.body.fields.end() && sub_type->is_string() &&
            !sub_type->get_ref<const std::string&>().empty()) {
          g.fields["sub_type"] = *sub_type;
        }
      }
      if (g.type == "table") {
        const auto cell_merge = g.body.fields.find("cell_merge");
        if (cell_merge != g.body.fields.end() && cell_merge->is_array() && !cell_merge->empty()) {
          g.fields["cell_merge"] = *cell_merge;
        }
      }
      g.body.fields.erase("sub_type");  // the group carries it, the body does not
    }
    if (const auto it = absorption.sub_images_of.find(main.index);
        g.type == "image" && it != absorption.sub_images_of.end()) {
      g.fields["sub_images"] = it->second;
    }
    g.blocks.push_back(g.body);
    for (const Block* child : children_of[p]) {
      Block member = *child;
      member.type = g.type + (child->type == "caption" ? "_caption" : "_footnote");
      g.blocks.push_back(std::move(member));
    }
    std::stable_sort(g.blocks.begin(), g.blocks.end(),
                     [](const Block& a, const Block& b) { return a.index < b.index; });
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace mineru::pipeline::magic
