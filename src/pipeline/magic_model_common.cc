// SPDX-License-Identifier: Apache-2.0
#include "pipeline/magic_model_common.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline::magic {
namespace {

// ---------------------------------------------------------------------------------------------
// Python string helpers (str.strip, str.splitlines, str.count) on UTF-8 text.

// The code point at s[i] and its byte length (an ill-formed byte reads as U+FFFD, length 1).
char32_t CodePointAt(std::string_view s, size_t i, size_t* len) {
  char32_t cp = 0;
  *len = text::WellFormedLength(s, i, &cp);
  if (*len > 0) return cp;
  *len = 1;
  return text::kReplacementCharacter;
}

bool IsBlank(std::string_view s) { return PythonStrip(s).empty(); }

// str.splitlines(): \n, \r, \r\n, \v, \f, \x1c-\x1e, U+0085, U+2028, U+2029 end a line; a
// trailing line break does not start an empty line.
std::vector<std::string_view> PySplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 0;
    const char32_t c = CodePointAt(s, i, &len);
    const bool brk = (c >= 0x0a && c <= 0x0d) || (c >= 0x1c && c <= 0x1e) || c == 0x85 ||
                     c == 0x2028 || c == 0x2029;
    if (!brk) {
      i += len;
      continue;
    }
    lines.push_back(s.substr(start, i - start));
    i += (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ? 2 : len;
    start = i;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

// str.count(needle) for a non-empty needle (non-overlapping).
size_t PyCount(std::string_view s, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = s.find(needle); pos != std::string_view::npos;
       pos = s.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

// The end of a non-DOTALL lazy group `(.{min,}?)` starting at `from` and followed by `close`:
// the first k >= from + min_len with s[k..] starting with `close` and no '\n' in s[from, k).
// On failure *stop is where the search gave up (the first '\n' at or after `from`, or the
// end): `close` occurs nowhere in [from + min_len, *stop), so a group opened later but before
// *stop cannot close either, and callers skip there (linear, not quadratic, in the content).
std::optional<size_t> LazyUntil(std::string_view s, size_t from, size_t min_len,
                                std::string_view close, size_t* stop) {
  for (size_t k = from;; ++k) {
    if (k >= from + min_len && s.substr(k, close.size()) == close) return k;
    if (k >= s.size() || s[k] == '\n') {
      *stop = k;
      return std::nullopt;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Content cleaning.

std::string IsolatedFormulaClean(std::string_view latex) {
  if (latex.substr(0, 2) == "\\[") latex.remove_prefix(2);
  if (latex.size() >= 2 && latex.substr(latex.size() - 2) == "\\]") latex.remove_suffix(2);
  return std::string(PythonStrip(latex));
}

std::string CodeContentClean(std::string_view content) {
  const std::vector<std::string_view> lines = PySplitLines(content);
  size_t start = 0;
  size_t end = lines.size();
  if (!lines.empty() && lines[0].substr(0, 3) == "```") start = 1;
  if (!lines.empty() && end > start && PythonStrip(lines[end - 1]) == "```") --end;
  if (start >= end) return "";
  std::string joined;
  for (size_t i = start; i < end; ++i) {
    if (i > start) joined += '\n';
    joined += lines[i];
  }
  return std::string(PythonStrip(joined));
}

std::string CleanContent(std::string_view content) {
  const size_t opens = PyCount(content, "\\[");
  if (opens == 0 || opens != PyCount(content, "\\]")) return std::string(content);
  std::string out;
  size_t i = 0;
  while (i < content.size()) {
    if (content.substr(i, 2) == "\\[") {
      size_t stop = 0;
      if (const std::optional<size_t> k = LazyUntil(content, i + 2, 0, "\\]", &stop)) {
        out += '[';
        out += content.substr(i + 2, *k - i - 2);
        out += ']';
        i = *k + 2;
      } else {
        // No \[ before `stop` can close (see LazyUntil): copied as it is.
        out += content.substr(i, std::min(stop, content.size()) - i);
        i = std::min(stop, content.size());
      }
      continue;
    }
    out += content[i++];
  }
  return out;
}

Json BoxJson(const Box& b) { return Json::array({b[0], b[1], b[2], b[3]}); }

Json TextSpan(const Box& bbox, std::string_view type, std::string_view content) {
  return Json{{"bbox", BoxJson(bbox)}, {"type", type}, {"content", content}};
}

Json InlineSpans(const Box& bbox, std::string_view content, std::string_view plain_type,
                 bool* split) {
  const size_t opens = PyCount(content, "\\(");
  *split = opens > 0 && opens == PyCount(content, "\\)");
  if (!*split) return Json::array({TextSpan(bbox, plain_type, content)});
  // re.finditer(r'\\\((.+?)\\\)', content): formulas on one line, at least one character.
  Json spans = Json::array();
  const std::string_view s = content;
  size_t last_end = 0;
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = s.find("\\(", i);
    if (start == std::string_view::npos) break;
    size_t stop = 0;
    const std::optional<size_t> close = LazyUntil(s, start + 2, 1, "\\)", &stop);
    if (!close) {
      i = std::max(start + 1, stop);  // no \( before `stop` can close (see LazyUntil)
      continue;
    }
    if (start > last_end && !IsBlank(s.substr(last_end, start - last_end))) {
      spans.push_back(TextSpan(bbox, "text", s.substr(last_end, start - last_end)));
    }
    spans.push_back(
        TextSpan(bbox, "inline_equation", PythonStrip(s.substr(start + 2, *close - start - 2))));
    last_end = *close + 2;
    i = last_end;
  }
  if (last_end < s.size() && !IsBlank(s.substr(last_end))) {
    spans.push_back(TextSpan(bbox, "text", s.substr(last_end)));
  }
  return spans;
}

Json TextSpans(const Box& bbox, std::string_view raw, bool* split) {
  const std::string content = raw.empty() ? std::string() : CleanContent(raw);
  return InlineSpans(bbox, content, "text", split);
}

// ---------------------------------------------------------------------------------------------
// Blocks.

Json BlockJson(const Block& b) {
  Json line = {{"bbox", BoxJson(b.bbox)}, {"spans", b.spans}};
  if (!b.line_extra.is_null()) line["extra"] = b.line_extra;
  Json j = {{"bbox", BoxJson(b.bbox)},
            {"type", b.type},
            {"angle", b.angle ? Json(*b.angle) : Json(nullptr)},
            {"lines", Json::array({std::move(line)})},
            {"index", b.index}};
  if (b.fields.is_object()) {
    for (auto it = b.fields.begin(); it != b.fields.end(); ++it) j[it.key()] = it.value();
  }
  return j;
}

std::optional<int> ToPoints(double v, int size) {
  const double x = v * static_cast<double>(size);
  if (!std::isfinite(x) || std::fabs(x) > 1e9) return std::nullopt;
  return static_cast<int>(x);  // truncation toward zero, like int()
}

std::optional<Block> BlockShell(const std::array<double, 4>& fractions, std::optional<int> angle,
                                int index, int width, int height,
                                std::vector<std::string>* warnings) {
  const std::optional<Box> bbox = ToPointBox(fractions, width, height);
  if (!bbox) {
    if (warnings != nullptr) {
      warnings->push_back("middle.json: block " + std::to_string(index) +
                          " has an invalid bbox; skipped");
    }
    return std::nullopt;
  }
  Block b;
  b.bbox = *bbox;
  b.angle = angle;
  b.index = index;
  return b;
}

std::optional<Box> ToPointBox(const std::array<double, 4>& fractions, int width, int height) {
  const std::array<std::optional<int>, 4> pts = {
      ToPoints(fractions[0], width), ToPoints(fractions[1], height), ToPoints(fractions[2], width),
      ToPoints(fractions[3], height)};
  if (!pts[0] || !pts[1] || !pts[2] || !pts[3]) return std::nullopt;
  Box b = {*pts[0], *pts[1], *pts[2], *pts[3]};
  if (b[2] < b[0]) std::swap(b[0], b[2]);
  if (b[3] < b[1]) std::swap(b[1], b[3]);
  return b;
}

// ---------------------------------------------------------------------------------------------
// Geometry (mineru/utils/boxbase.py).

int64_t Area(const Box& b) {
  return static_cast<int64_t>(b[2] - b[0]) * static_cast<int64_t>(b[3] - b[1]);
}

double OverlapRatioOfFirst(const Box& a, const Box& b) {
  const int x1 = std::max(a[0], b[0]);
  const int y1 = std::max(a[1], b[1]);
  const int x2 = std::min(a[2], b[2]);
  const int y2 = std::min(a[3], b[3]);
  if (x2 < x1 || y2 < y1) return 0.0;
  const int64_t area = Area(a);
  if (area == 0) return 0.0;
  return static_cast<double>(static_cast<int64_t>(x2 - x1) * (y2 - y1)) / static_cast<double>(area);
}

bool IsIn(const Box& a, const Box& b) {
  return a[0] >= b[0] && a[1] >= b[1] && a[2] <= b[2] && a[3] <= b[3];
}

double EdgeDistance(const Box& a, const Box& b) {
  const auto dist = [](double x1, double y1, double x2, double y2) {
    return std::sqrt((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2));
  };
  const bool left = b[2] < a[0];
  const bool right = a[2] < b[0];
  const bool bottom = b[3] < a[1];
  const bool top = a[3] < b[1];
  if (top && left) return dist(a[0], a[3], b[2], b[1]);
  if (left && bottom) return dist(a[0], a[1], b[2], b[3]);
  if (bottom && right) return dist(a[2], a[1], b[0], b[3]);
  if (right && top) return dist(a[2], a[3], b[0], b[1]);
  if (left) return a[0] - b[2];
  if (right) return b[0] - a[2];
  if (bottom) return a[1] - b[3];
  if (top) return b[1] - a[3];
  return 0.0;
}

double CenterDistance(const Box& a, const Box& b) {
  const double dx = (a[0] + a[2]) / 2.0 - (b[0] + b[2]) / 2.0;
  const double dy = (a[1] + a[3]) / 2.0 - (b[1] + b[3]) / 2.0;
  return std::sqrt(dx * dx + dy * dy);
}

// ---------------------------------------------------------------------------------------------
// Lists.

namespace {

constexpr double kListMemberRatio = 0.8;

}  // namespace

std::vector<ListGroup> FixLists(const std::vector<Block>& lists, std::vector<Block>* texts,
                                std::vector<Block>* ref_texts) {
  std::vector<ListGroup> groups;
  for (const Block& l : lists) groups.push_back({l, {}});
  std::set<int> moved;
  // Candidates: every text block, then every ref_text block (the child order MinerU keeps).
  for (const std::vector<Block>* source : {texts, ref_texts}) {
    for (const Block& b : *source) {
      for (ListGroup& g : groups) {
        if (OverlapRatioOfFirst(b.bbox, g.list.bbox) >= kListMemberRatio) {
          g.children.push_back(b);
          moved.insert(b.index);
          break;
        }
      }
    }
  }
  for (std::vector<Block>* source : {texts, ref_texts}) {
    std::erase_if(*source, [&](const Block& b) { return moved.count(b.index) > 0; });
  }
  std::erase_if(groups, [](const ListGroup& g) { return g.children.empty(); });
  return groups;
}

namespace {

// The most frequent child type; the first type seen wins a tie (Python's max over an
// insertion-ordered dict).
std::string ListSubType(const std::vector<Block>& children) {
  std::vector<std::string> order;  // types in first-seen order
  std::map<std::string, int> counts;
  for (const Block& c : children) {
    if (counts[c.type]++ == 0) order.push_back(c.type);
  }
  std::string best = order.empty() ? "unknown" : order[0];
  for (const std::string& t : order) {
    if (counts[t] > counts[best]) best = t;
  }
  return best;
}

}  // namespace

Json ListJson(const ListGroup& l) {
  Json children = Json::array();
  for (const Block& c : l.children) children.push_back(BlockJson(c));
  return Json{{"bbox", BoxJson(l.list.bbox)},
              {"type", "list"},
              {"angle", l.list.angle ? Json(*l.list.angle) : Json(nullptr)},
              {"index", l.list.index},
              {"blocks", std::move(children)},
              {"sub_type", ListSubType(l.children)}};
}

}  // namespace mineru::pipeline::magic
