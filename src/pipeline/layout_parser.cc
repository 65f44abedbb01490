// SPDX-License-Identifier: Apache-2.0
#include "pipeline/layout_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

namespace mineru::pipeline {
namespace {

constexpr std::string_view kBoxStart = "<|box_start|>";
constexpr std::string_view kBoxEnd = "<|box_end|>";
constexpr std::string_view kRefStart = "<|ref_start|>";
constexpr std::string_view kRefEnd = "<|ref_end|>";

struct RotateToken {
  std::string_view token;
  int angle;
};
constexpr std::array<RotateToken, 4> kRotateTokens = {{
    {"<|rotate_up|>", 0},
    {"<|rotate_right|>", 90},
    {"<|rotate_down|>", 180},
    {"<|rotate_left|>", 270},
}};

// Coordinates above this are all "out of range"; parsing saturates here so any digit run is safe.
constexpr int64_t kGridMax = 1000;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Python's \s on ASCII (str.isspace): \t \n \v \f \r, \x1c-\x1f and space.
bool IsSpace(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= 0x09 && u <= 0x0d) || (u >= 0x1c && u <= 0x1f);
}

// \w: ASCII letters, digits, underscore; bytes of multi-byte UTF-8 sequences count as word
// characters (Python's \w accepts Unicode letters).
bool IsWord(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || IsDigit(c) || c == '_' || u >= 0x80;
}

char ToLowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// The head of one region, as the regex's groups see it.
struct RegionHead {
  std::array<int64_t, 4> coords = {0, 0, 0, 0};  // saturated at kGridMax + 1
  std::string label;                             // as written (not lower-cased)
  std::optional<int> angle;
  size_t end = 0;  // offset just past the head (where TAIL begins)
};

// A cursor over the answer that matches the head's pieces one at a time.
class HeadMatcher {
 public:
  HeadMatcher(std::string_view text, size_t pos) : text_(text), pos_(pos) {}

  bool Literal(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  // \d+ as a non-negative integer, saturated just above the grid.
  bool Number(int64_t* value) {
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) {
      v = std::min<int64_t>(v * 10 + (text_[pos_] - '0'), kGridMax + 1);
      ++pos_;
    }
    *value = v;
    return pos_ > start;
  }

  // \s+
  bool Spaces() {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
    return pos_ > start;
  }

  // (\w+?) followed by <|ref_end|>: '<' is not a word character, so the lazy group ends exactly
  // where the word characters end.
  bool Label(std::string* label) {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsWord(text_[pos_])) ++pos_;
    if (pos_ == start) return false;
    label->assign(text_.substr(start, pos_ - start));
    return true;
  }

  size_t pos() const { return pos_; }

  std::optional<int> Rotate() {
    for (const RotateToken& rotate : kRotateTokens) {
      if (Literal(rotate.token)) return rotate.angle;
    }
    return std::nullopt;
  }

 private:
  std::string_view text_;
  size_t pos_;
};

// Matches the head of a region at `pos` (where <|box_start|> begins).
std::optional<RegionHead> MatchHead(std::string_view text, size_t pos) {
  HeadMatcher m(text, pos);
  RegionHead head;
  if (!m.Literal(kBoxStart)) return std::nullopt;
  for (int i = 0; i < 4; ++i) {
    if (i > 0 && !m.Spaces()) return std::nullopt;
    if (!m.Number(&head.coords[i])) return std::nullopt;
  }
  if (!m.Literal(kBoxEnd) || !m.Literal(kRefStart) || !m.Label(&head.label) ||
      !m.Literal(kRefEnd)) {
    return std::nullopt;
  }
  head.angle = m.Rotate();
  head.end = m.pos();
  return head;
}

// A kept region with its integer grid box (x1 < x2, y1 < y2, all in 0..1000).
struct GridBlock {
  ContentBlock block;
  std::array<int64_t, 4> grid;
};

// Rule 1 of docs/MINERU.md 2.2: range check, swap, non-empty. nullopt = drop.
std::optional<std::array<int64_t, 4>> ConvertBox(std::array<int64_t, 4> c) {
  for (int64_t v : c) {
    if (v < 0 || v > kGridMax) return std::nullopt;
  }
  if (c[2] < c[0]) std::swap(c[0], c[2]);
  if (c[3] < c[1]) std::swap(c[1], c[3]);
  if (c[0] == c[2] || c[1] == c[3]) return std::nullopt;
  return c;
}

// True when at least 9/10 of `inner`'s area lies inside `outer` (exact integer arithmetic).
bool CoveredByTable(const std::array<int64_t, 4>& inner, const std::array<int64_t, 4>& outer) {
  const int64_t x1 = std::max(inner[0], outer[0]);
  const int64_t y1 = std::max(inner[1], outer[1]);
  const int64_t x2 = std::min(inner[2], outer[2]);
  const int64_t y2 = std::min(inner[3], outer[3]);
  if (x2 <= x1 || y2 <= y1) return false;
  const int64_t intersection = (x2 - x1) * (y2 - y1);
  const int64_t area = (inner[2] - inner[0]) * (inner[3] - inner[1]);
  return intersection * kTableCoverDenominator >= area * kTableCoverNumerator;
}

// The Pro client's cover ratio (_calculate_overlap style) in double precision on the normalised
// boxes: 0 without intersection or for an empty inner box.
bool CoveredByTableFloat(const std::array<double, 4>& inner, const std::array<double, 4>& outer) {
  const double x1 = std::max(inner[0], outer[0]);
  const double y1 = std::max(inner[1], outer[1]);
  const double x2 = std::min(inner[2], outer[2]);
  const double y2 = std::min(inner[3], outer[3]);
  if (x2 <= x1 || y2 <= y1) return false;
  const double area = (inner[2] - inner[0]) * (inner[3] - inner[1]);
  if (!(area > 0)) return false;
  return (x2 - x1) * (y2 - y1) / area >= 0.9;
}

bool DroppedUnderTable(BlockType type) {
  return type == BlockType::kText || type == BlockType::kEquation ||
         type == BlockType::kEquationBlock;
}

void Warn(std::vector<std::string>* warnings, std::string message) {
  if (warnings != nullptr) warnings->push_back(std::move(message));
}

// A short, printable excerpt of the region for warnings.
std::string Excerpt(std::string_view text, size_t pos) {
  constexpr size_t kMax = 80;
  std::string out;
  for (char c : text.substr(pos, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  if (text.size() - pos > kMax) out += "...";
  return out;
}

}  // namespace

LayoutRules LayoutRulesFor(Profile profile) {
  if (profile == Profile::k2509) return {};
  return LayoutRules{.pro_types = true, .merge_prev = true, .float_cover_ratio = true};
}

std::vector<ContentBlock> ParseLayout(std::string_view output, const LayoutRules& rules,
                                      std::vector<std::string>* warnings) {
  std::vector<GridBlock> kept;
  // Every match of the region regex starts at a <|box_start|>, and a match's tail stops at the
  // next one, so trying each occurrence in turn reproduces finditer exactly.
  for (size_t pos = output.find(kBoxStart); pos != std::string_view::npos;
       pos = output.find(kBoxStart, pos + 1)) {
    const std::optional<RegionHead> head = MatchHead(output, pos);
    if (!head) {
      Warn(warnings, fmt::format("layout: malformed region skipped at offset {}: {}", pos,
                                 Excerpt(output, pos)));
      continue;
    }
    const std::optional<std::array<int64_t, 4>> grid = ConvertBox(head->coords);
    if (!grid) {
      Warn(warnings,
           fmt::format("layout: invalid bbox dropped at offset {}: {}", pos, Excerpt(output, pos)));
      continue;
    }
    std::string label = head->label;
    std::transform(label.begin(), label.end(), label.begin(), ToLowerAscii);
    if (label == "unknown") label = "image";
    if (label == "inline_formula") continue;
    std::optional<BlockType> type = ParseBlockType(label);
    if (type && !rules.pro_types && !Is2509BlockType(*type)) type.reset();
    if (!type) {
      Warn(warnings, fmt::format("layout: unknown block type '{}' dropped at offset {}",
                                 Excerpt(label, 0), pos));
      continue;
    }
    if (!head->angle) {
      Warn(warnings,
           fmt::format("layout: no angle found at offset {}: {}", pos, Excerpt(output, pos)));
    }
    GridBlock g;
    g.grid = *grid;
    g.block.type = *type;
    for (int i = 0; i < 4; ++i) g.block.bbox[i] = static_cast<double>(g.grid[i]) / 1000.0;
    g.block.angle = head->angle;
    if (rules.merge_prev && *type == BlockType::kText) {
      const size_t next = output.find(kBoxStart, head->end);
      const std::string_view tail = output.substr(
          head->end, next == std::string_view::npos ? std::string_view::npos : next - head->end);
      g.block.merge_prev = tail.find("txt_contd_tgt") != std::string_view::npos;
    }
    kept.push_back(std::move(g));
  }

  // Tables first, so the filter costs blocks x tables, not blocks squared.
  std::vector<const GridBlock*> tables;
  for (const GridBlock& g : kept) {
    if (g.block.type == BlockType::kTable) tables.push_back(&g);
  }
  std::vector<ContentBlock> blocks;
  blocks.reserve(kept.size());
  for (const GridBlock& g : kept) {
    if (DroppedUnderTable(g.block.type)) {
      const bool covered = std::any_of(tables.begin(), tables.end(), [&](const GridBlock* t) {
        return rules.float_cover_ratio ? CoveredByTableFloat(g.block.bbox, t->block.bbox)
                                       : CoveredByTable(g.grid, t->grid);
      });
      if (covered) continue;
    }
    blocks.push_back(g.block);
  }
  return blocks;
}

}  // namespace mineru::pipeline
