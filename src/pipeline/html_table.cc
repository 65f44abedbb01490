// SPDX-License-Identifier: Apache-2.0
// The parser and the editable model of html_table.h (the structure helpers are in
// html_table_structure.cc).
#include "pipeline/html_table.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
char AsciiLowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// Decodes the HTML character references BeautifulSoup's get_text() would: numeric ones and the
// common named ones. Others stay literal.
void AppendDecoded(std::string_view s, std::string* out) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t amp = s.find('&', pos);
    if (amp == std::string_view::npos) {
      out->append(s.substr(pos));
      return;
    }
    out->append(s.substr(pos, amp - pos));
    size_t semi = s.find(';', amp);
    if (semi == std::string_view::npos || semi - amp > 10) {
      out->push_back('&');
      pos = amp + 1;
      continue;
    }
    std::string_view name = s.substr(amp + 1, semi - amp - 1);
    char32_t cp = 0;
    if (name == "amp") {
      cp = '&';
    } else if (name == "lt") {
      cp = '<';
    } else if (name == "gt") {
      cp = '>';
    } else if (name == "quot") {
      cp = '"';
    } else if (name == "apos") {
      cp = '\'';
    } else if (name == "nbsp") {
      cp = 0xA0;
    } else if (name.size() >= 2 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      uint32_t value = 0;
      bool ok = name.size() > (hex ? 2u : 1u);
      for (size_t i = hex ? 2 : 1; ok && i < name.size(); ++i) {
        char c = name[i];
        int digit = c >= '0' && c <= '9'          ? c - '0'
                    : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                  : -1;
        if (digit < 0) ok = false;
        value = value * (hex ? 16 : 10) + static_cast<uint32_t>(digit < 0 ? 0 : digit);
        if (value > 0x10FFFF) ok = false;
      }
      if (ok && value != 0 && (value < 0xD800 || value > 0xDFFF)) cp = value;
    }
    if (cp == 0) {
      out->push_back('&');
      pos = amp + 1;
      continue;
    }
    text::AppendUtf8(cp, out);
    pos = semi + 1;
  }
}

// rowspan/colspan value: optional whitespace, optional '+', digits; 1..kMaxTableSpan.
std::optional<int> ParseSpan(std::string_view v) {
  while (!v.empty() && IsAsciiSpace(v.front())) v.remove_prefix(1);
  while (!v.empty() && IsAsciiSpace(v.back())) v.remove_suffix(1);
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  if (v.empty()) return std::nullopt;
  int value = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > kMaxTableSpan) return std::nullopt;
  }
  if (value < 1) return std::nullopt;
  return value;
}

struct AttributeRange {
  size_t begin = 0;        // the attribute's name
  size_t end = 0;          // one past its value (and closing quote)
  size_t value_begin = 0;  // the value bytes, inside any quotes
  size_t value_end = 0;
};

struct Tag {
  std::string name;  // lower-cased
  bool end = false;
  size_t begin = 0;
  size_t end_pos = 0;  // one past '>'
  size_t attr_insert_at = 0;
  int colspan = 1;
  int rowspan = 1;
  std::optional<AttributeRange> colspan_attr;
  std::optional<AttributeRange> rowspan_attr;
  bool bad_span = false;
};

// Parses the tag at html[pos] == '<' whose next character is a letter or '/'+letter. nullopt
// when no '>' closes it. Attributes: name[=value], values quoted with ' or " or bare; a
// repeated colspan/rowspan counts with its last value.
std::optional<Tag> ParseTag(std::string_view html, size_t pos) {
  Tag tag;
  tag.begin = pos;
  size_t i = pos + 1;
  if (i < html.size() && html[i] == '/') {
    tag.end = true;
    ++i;
  }
  while (i < html.size() && (IsAsciiAlpha(html[i]) || (html[i] >= '0' && html[i] <= '9'))) {
    tag.name.push_back(AsciiLowerChar(html[i]));
    ++i;
  }
  while (true) {
    while (i < html.size() && (IsAsciiSpace(html[i]) || html[i] == '/')) ++i;
    if (i >= html.size()) return std::nullopt;
    if (html[i] == '>') {
      tag.end_pos = i + 1;
      size_t insert = i;
      if (insert > pos && html[insert - 1] == '/') --insert;
      tag.attr_insert_at = insert;
      return tag;
    }
    size_t name_begin = i;
    while (i < html.size() && !IsAsciiSpace(html[i]) && html[i] != '=' && html[i] != '>' &&
           html[i] != '/') {
      ++i;
    }
    std::string name;
    for (char c : html.substr(name_begin, i - name_begin)) name.push_back(AsciiLowerChar(c));
    while (i < html.size() && IsAsciiSpace(html[i])) ++i;
    if (i >= html.size()) return std::nullopt;
    if (html[i] != '=') continue;  // attribute without a value
    ++i;
    while (i < html.size() && IsAsciiSpace(html[i])) ++i;
    if (i >= html.size()) return std::nullopt;
    AttributeRange range;
    range.begin = name_begin;
    if (html[i] == '"' || html[i] == '\'') {
      size_t close = html.find(html[i], i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      range.value_begin = i + 1;
      range.value_end = close;
      i = close + 1;
    } else {
      range.value_begin = i;
      while (i < html.size() && !IsAsciiSpace(html[i]) && html[i] != '>') ++i;
      range.value_end = i;
    }
    range.end = i;
    if (name == "colspan" || name == "rowspan") {
      std::optional<int> span =
          ParseSpan(html.substr(range.value_begin, range.value_end - range.value_begin));
      if (!span) {
        tag.bad_span = true;
      } else if (name == "colspan") {
        tag.colspan = *span;
        tag.colspan_attr = range;
      } else {
        tag.rowspan = *span;
        tag.rowspan_attr = range;
      }
    }
  }
}

bool IsMediaElement(std::string_view name) {
  return name == "img" || name == "svg" || name == "math" || name == "eq" || name == "table" ||
         name == "figure" || name == "object" || name == "embed" || name == "canvas";
}

// One table level being parsed: its open row and cell.
struct Level {
  std::optional<size_t> row;
  std::optional<size_t> cell;
};

class Parser {
 public:
  Parser(std::string_view html, const HtmlTableOptions& options)
      : html_(html), options_(options), levels_(1) {
    table_.html = html;
  }

  std::optional<HtmlTable> Run() {
    size_t pos = 0;
    while (pos < html_.size()) {
      size_t lt = html_.find('<', pos);
      if (lt == std::string_view::npos) lt = html_.size();
      if (lt > pos) AppendText(html_.substr(pos, lt - pos), /*decode=*/true);
      if (lt >= html_.size()) break;
      pos = lt;
      if (html_.compare(pos, 4, "<!--") == 0) {
        size_t close = html_.find("-->", pos + 4);
        if (close == std::string_view::npos) return std::nullopt;
        pos = close + 3;
        continue;
      }
      const char next = pos + 1 < html_.size() ? html_[pos + 1] : '\0';
      if (next == '!' || next == '?') {
        size_t close = html_.find('>', pos);
        if (close == std::string_view::npos) return std::nullopt;
        pos = close + 1;
        continue;
      }
      const bool is_tag = IsAsciiAlpha(next) ||
                          (next == '/' && pos + 2 < html_.size() && IsAsciiAlpha(html_[pos + 2]));
      if (!is_tag) {
        AppendText("<", /*decode=*/false);
        ++pos;
        continue;
      }
      std::optional<Tag> tag = ParseTag(html_, pos);
      if (!tag || tag->bad_span) return std::nullopt;
      pos = tag->end_pos;
      if (!Handle(*tag)) return std::nullopt;
    }
    while (!levels_.empty()) {
      CloseRow(levels_.back(), html_.size(), std::nullopt);
      levels_.pop_back();
    }
    if (!seen_table_) return std::nullopt;
    if (seen_tbody_ && tbody_close_) {
      table_.insert_at = *tbody_close_;
    } else if (table_close_) {
      table_.insert_at = *table_close_;
    } else {
      table_.insert_at = html_.size();
    }
    return std::move(table_);
  }

 private:
  void AppendText(std::string_view raw, bool decode) {
    std::string decoded;
    bool have = false;
    for (Level& level : levels_) {
      if (!level.cell) continue;
      if (!have) {
        if (decode) {
          AppendDecoded(raw, &decoded);
        } else {
          decoded.assign(raw);
        }
        have = true;
      }
      table_.cells[*level.cell].text += decoded;
    }
  }

  void CloseCell(Level& level, size_t content_end, size_t end) {
    if (!level.cell) return;
    HtmlCell& cell = table_.cells[*level.cell];
    cell.content_end = content_end;
    cell.end = end;
    level.cell.reset();
  }

  // Closes the level's row at `at` (its end tag's start when end_tag_end is set).
  void CloseRow(Level& level, size_t at, std::optional<size_t> end_tag_end) {
    CloseCell(level, at, at);
    if (!level.row) return;
    HtmlRow& row = table_.rows[*level.row];
    if (end_tag_end) {
      row.closed = true;
      row.end_tag_begin = at;
      row.end = *end_tag_end;
    } else {
      row.end = at;
    }
    level.row.reset();
  }

  bool Handle(const Tag& tag) {
    const std::string& name = tag.name;
    if (!tag.end && IsMediaElement(name)) {
      for (Level& level : levels_) {
        if (level.cell) table_.cells[*level.cell].has_media = true;
      }
    }
    if (name == "table") return HandleTable(tag);
    Level& level = levels_.back();
    if (name == "tbody" || name == "thead" || name == "tfoot") {
      CloseRow(level, tag.begin, std::nullopt);
      if (name == "tbody" && !tag.end) seen_tbody_ = true;
      if (name == "tbody" && tag.end && seen_tbody_ && !tbody_close_) tbody_close_ = tag.begin;
    } else if (name == "tr") {
      if (!tag.end) {
        CloseRow(level, tag.begin, std::nullopt);
        HtmlRow row;
        row.begin = tag.begin;
        row.tag_end = tag.end_pos;
        level.row = table_.rows.size();
        table_.rows.push_back(std::move(row));
      } else if (level.row) {
        CloseRow(level, tag.begin, tag.end_pos);
      }
    } else if (name == "td" || name == "th") {
      if (tag.end) {
        CloseCell(level, tag.begin, tag.end_pos);
      } else if (level.row) {
        // A new cell ends any open one; cells outside a row are not part of any row.
        CloseCell(level, tag.begin, tag.begin);
        HtmlCell cell;
        cell.name = name;
        cell.tag_begin = tag.begin;
        cell.tag_end = tag.end_pos;
        cell.content_end = cell.end = tag.end_pos;
        if (tag.colspan_attr) {
          cell.colspan_value =
              std::make_pair(tag.colspan_attr->value_begin, tag.colspan_attr->value_end);
        }
        cell.attr_insert_at = tag.attr_insert_at;
        cell.colspan = tag.colspan;
        cell.rowspan = tag.rowspan;
        const size_t id = table_.cells.size();
        table_.cells.push_back(std::move(cell));
        level.cell = id;
        // BeautifulSoup's recursive find_all: the cell also belongs to every row around it.
        for (Level& outer : levels_) {
          if (outer.row) table_.rows[*outer.row].cells.push_back(id);
        }
      }
    }
    return true;
  }

  bool HandleTable(const Tag& tag) {
    if (!options_.allow_nested_tables) {
      // One level: a table start only counts depth, a table end closes the open row.
      if (!tag.end) {
        if (++depth_ > 1) return false;  // nested tables are rejected
        seen_table_ = true;
      } else if (depth_ > 0) {
        CloseRow(levels_.back(), tag.begin, std::nullopt);
        if (!table_close_) table_close_ = tag.begin;
        --depth_;
      }
      return true;
    }
    if (!tag.end) {
      if (levels_.size() > kMaxTableNesting) return false;
      if (levels_.size() > 1 || levels_.front().row) table_.nested = true;
      seen_table_ = true;
      levels_.emplace_back();
    } else if (levels_.size() > 1) {
      CloseRow(levels_.back(), tag.begin, std::nullopt);
      if (!table_close_) table_close_ = tag.begin;
      levels_.pop_back();
    }
    return true;
  }

  std::string_view html_;
  HtmlTableOptions options_;
  HtmlTable table_;
  std::vector<Level> levels_;  // [0]: outside any table; one more per open table (nested mode)
  int depth_ = 0;              // open tables (single-level mode)
  bool seen_table_ = false;
  std::optional<size_t> table_close_;
  bool seen_tbody_ = false;
  std::optional<size_t> tbody_close_;
};

std::string Slice(std::string_view s, size_t begin, size_t end) {
  if (end < begin || end > s.size()) return {};
  return std::string(s.substr(begin, end - begin));
}

}  // namespace

std::string FullToHalf(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    size_t n = text::WellFormedLength(s, pos, &cp);
    if (n == 0) {
      out.push_back(s[pos++]);
      continue;
    }
    if (cp >= 0xFF01 && cp <= 0xFF5E) {
      out.push_back(static_cast<char>(cp - 0xFEE0));
    } else {
      out.append(s.substr(pos, n));
    }
    pos += n;
  }
  return out;
}

std::string RemovePythonWhitespace(std::string_view s) {
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    size_t n = text::WellFormedLength(s, pos, &cp);
    if (n == 0) {
      out.push_back(s[pos++]);
      continue;
    }
    if (!IsPythonSpace(cp)) out.append(s.substr(pos, n));
    pos += n;
  }
  return out;
}

std::optional<HtmlTable> ParseHtmlTable(std::string_view html, const HtmlTableOptions& options) {
  return Parser(html, options).Run();
}

std::string WithSpanAttribute(std::string_view start_tag, std::string_view name,
                              std::optional<int> value) {
  if (start_tag.size() < 2 || start_tag[0] != '<' || !IsAsciiAlpha(start_tag[1])) {
    return std::string(start_tag);
  }
  std::optional<Tag> tag = ParseTag(start_tag, 0);
  if (!tag || tag->end) return std::string(start_tag);
  const std::optional<AttributeRange>& range =
      name == "colspan" ? tag->colspan_attr : tag->rowspan_attr;
  std::string out;
  if (value) {
    const std::string digits = std::to_string(*value);
    if (range) {
      out = Slice(start_tag, 0, range->value_begin) + digits +
            Slice(start_tag, range->value_end, start_tag.size());
    } else {
      out = Slice(start_tag, 0, tag->attr_insert_at) + " " + std::string(name) + "=\"" + digits +
            "\"" + Slice(start_tag, tag->attr_insert_at, start_tag.size());
    }
    return out;
  }
  if (!range) return std::string(start_tag);
  size_t begin = range->begin;
  while (begin > 0 && IsAsciiSpace(start_tag[begin - 1])) --begin;
  return Slice(start_tag, 0, begin) + Slice(start_tag, range->end, start_tag.size());
}

std::optional<TableModel> BuildTableModel(std::string_view html, const HtmlTableOptions& options) {
  std::optional<HtmlTable> parsed = ParseHtmlTable(html, options);
  if (!parsed) return std::nullopt;
  TableModel model;
  model.nested = parsed->nested;
  auto plain_cell = [](const HtmlCell& source) {
    TableCell cell;
    cell.colspan = source.colspan;
    cell.rowspan = source.rowspan;
    cell.text = source.text;
    cell.has_media = source.has_media;
    cell.name = source.name;
    return cell;
  };
  if (model.nested) {
    // Read-only: the rows and cells BeautifulSoup's find_all would list, without markup.
    for (const HtmlRow& source : parsed->rows) {
      TableRow row;
      for (size_t id : source.cells) row.cells.push_back(plain_cell(parsed->cells[id]));
      model.rows.push_back(std::move(row));
    }
    return model;
  }
  // Rows and their cells are in document order and do not overlap: cut the source into the
  // pieces SerializeTable puts back together.
  size_t previous_end = 0;
  for (const HtmlRow& source : parsed->rows) {
    TableRow row;
    row.lead = Slice(html, previous_end, source.begin);
    row.start_tag = Slice(html, source.begin, source.tag_end);
    size_t pos = source.tag_end;
    for (size_t id : source.cells) {
      const HtmlCell& cell_source = parsed->cells[id];
      TableCell cell = plain_cell(cell_source);
      cell.lead = Slice(html, pos, cell_source.tag_begin);
      cell.start_tag = Slice(html, cell_source.tag_begin, cell_source.tag_end);
      cell.inner = Slice(html, cell_source.tag_end, cell_source.content_end);
      cell.end_tag = Slice(html, cell_source.content_end, cell_source.end);
      pos = cell_source.end;
      row.cells.push_back(std::move(cell));
    }
    const size_t content_stop = source.closed ? source.end_tag_begin : source.end;
    row.tail = Slice(html, pos, content_stop);
    if (source.closed) row.end_tag = Slice(html, source.end_tag_begin, source.end);
    previous_end = source.end;
    model.rows.push_back(std::move(row));
  }
  model.tail = Slice(html, previous_end, html.size());
  // The insertion point lies in the gap before the first row that ends after it (or the tail).
  size_t k = 0;
  while (k < parsed->rows.size() && parsed->rows[k].end <= parsed->insert_at) ++k;
  const size_t gap_begin = k > 0 ? parsed->rows[k - 1].end : 0;
  const size_t gap_end = k < parsed->rows.size() ? parsed->rows[k].begin : html.size();
  const size_t insert_at = std::clamp(parsed->insert_at, gap_begin, gap_end);
  model.insert_begin = model.insert_end = k;
  model.insert_lead = Slice(html, gap_begin, insert_at);
  std::string rest = Slice(html, insert_at, gap_end);
  if (k < model.rows.size()) {
    model.rows[k].lead = std::move(rest);
  } else {
    model.tail = std::move(rest);
  }
  return model;
}

std::string SerializeRow(const TableRow& row, bool close) {
  std::string out = row.start_tag;
  for (const TableCell& cell : row.cells) {
    out += cell.lead;
    out += cell.start_tag;
    out += cell.inner;
    out += cell.end_tag;
  }
  out += row.tail;
  out += row.end_tag.empty() && close ? std::string("</tr>") : row.end_tag;
  return out;
}

std::string SerializeTable(const TableModel& table) {
  std::string out;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (i == table.insert_begin) out += table.insert_lead;
    out += table.rows[i].lead;
    out += SerializeRow(table.rows[i], /*close=*/false);
  }
  if (table.insert_begin >= table.rows.size()) out += table.insert_lead;
  out += table.tail;
  return out;
}

void AppendRows(TableModel* table, std::vector<TableRow> rows) {
  const size_t at = std::min(table->insert_end, table->rows.size());
  for (TableRow& row : rows) {
    row.lead.clear();
    if (row.end_tag.empty()) row.end_tag = "</tr>";
  }
  table->rows.insert(table->rows.begin() + static_cast<std::ptrdiff_t>(at),
                     std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  table->insert_end = at + rows.size();
}

}  // namespace mineru::pipeline
