// SPDX-License-Identifier: Apache-2.0
#include "pipeline/otsl_to_html.h"

#include <algorithm>
#include <array>
#include <vector>

#include "pipeline/equation_fixes.h"
#include "pipeline/html_text.h"

namespace mineru::pipeline {
namespace {

enum class Tok { kNl, kFcel, kEcel, kLcel, kUcel, kXcel };

constexpr std::array<std::pair<std::string_view, Tok>, 6> kTokens = {{
    {"<nl>", Tok::kNl},
    {"<fcel>", Tok::kFcel},
    {"<ecel>", Tok::kEcel},
    {"<lcel>", Tok::kLcel},
    {"<ucel>", Tok::kUcel},
    {"<xcel>", Tok::kXcel},
}};

// One element of the token/text stream: a token, or a text piece between tokens.
struct Item {
  bool is_token = false;
  Tok tok = Tok::kNl;
  std::string_view text;
};

struct Cell {
  std::string_view text;
  size_t row = 0;
  size_t col = 0;
  size_t row_span = 1;
  size_t col_span = 1;
};

// Step 1: the stream with whitespace-only text pieces dropped.
std::vector<Item> Tokenize(std::string_view s) {
  std::vector<Item> items;
  size_t text_start = 0;
  size_t pos = 0;
  auto flush_text = [&](size_t end) {
    std::string_view piece = s.substr(text_start, end - text_start);
    if (!PythonStrip(piece).empty()) items.push_back({false, Tok::kNl, piece});
  };
  while (pos < s.size()) {
    bool matched = false;
    if (s[pos] == '<') {
      for (const auto& [name, tok] : kTokens) {
        if (s.substr(pos).starts_with(name)) {
          flush_text(pos);
          items.push_back({true, tok, {}});
          pos += name.size();
          text_start = pos;
          matched = true;
          break;
        }
      }
    }
    if (!matched) ++pos;
  }
  flush_text(s.size());
  return items;
}

bool IsToken(const std::vector<Item>& items, size_t i, Tok tok) {
  return i < items.size() && items[i].is_token && items[i].tok == tok;
}

}  // namespace

Result<std::string> ConvertOtslToHtml(std::string_view otsl) {
  std::vector<Item> items = Tokenize(otsl);

  // Step 2: rows are the runs of non-<nl> tokens (repeated <nl> make no empty rows).
  std::vector<std::vector<Tok>> rows;
  bool in_row = false;
  for (const Item& item : items) {
    if (!item.is_token) continue;
    if (item.tok == Tok::kNl) {
      in_row = false;
      continue;
    }
    if (!in_row) rows.emplace_back();
    in_row = true;
    rows.back().push_back(item.tok);
  }
  size_t num_cols = 0;
  for (const auto& row : rows) num_cols = std::max(num_cols, row.size());
  if (num_cols > 0 && rows.size() > kMaxOtslGridCells / num_cols) {
    return Fail(ErrorCode::kResourceExhausted,
                "OTSL table of {} rows x {} columns exceeds {} cells", rows.size(), num_cols,
                kMaxOtslGridCells);
  }
  for (auto& row : rows) row.resize(num_cols, Tok::kEcel);

  // The client's rebuild of the stream: per padded row its tokens, each followed by the input's
  // next text piece when the input's next item is that same token; <nl> after every row.
  std::vector<Item> stream;
  if (rows.empty()) {
    stream = items;
  } else {
    size_t next = 0;
    for (const auto& row : rows) {
      for (Tok tok : row) {
        stream.push_back({true, tok, {}});
        if (IsToken(items, next, tok)) {
          ++next;
          if (next < items.size() && !items[next].is_token) stream.push_back(items[next++]);
        }
      }
      stream.push_back({true, Tok::kNl, {}});
      if (IsToken(items, next, Tok::kNl)) ++next;
    }
  }

  // Step 3: walk the stream.
  std::vector<Cell> cells;
  size_t r = 0;
  size_t c = 0;
  for (size_t i = 0; i < stream.size(); ++i) {
    const Item& item = stream[i];
    if (!item.is_token) continue;
    if (item.tok == Tok::kFcel || item.tok == Tok::kEcel) {
      Cell cell{{}, r, c, 1, 1};
      size_t right = i + 1;
      if (item.tok == Tok::kFcel && right < stream.size() && !stream[right].is_token) {
        cell.text = stream[right].text;
        ++right;
      }
      if (IsToken(stream, right, Tok::kLcel) || IsToken(stream, right, Tok::kXcel)) {
        for (size_t j = c + 1; j < num_cols; ++j) {
          if (rows[r][j] != Tok::kLcel && rows[r][j] != Tok::kXcel) break;
          ++cell.col_span;
        }
      }
      if (r + 1 < rows.size() && c < num_cols &&
          (rows[r + 1][c] == Tok::kUcel || rows[r + 1][c] == Tok::kXcel)) {
        for (size_t j = r + 1; j < rows.size(); ++j) {
          if (rows[j][c] != Tok::kUcel && rows[j][c] != Tok::kXcel) break;
          ++cell.row_span;
        }
      }
      cells.push_back(cell);
    }
    if (item.tok == Tok::kNl) {
      ++r;
      c = 0;
    } else {
      ++c;
    }
  }
  if (cells.empty()) return std::string();

  // Step 4: every grid position belongs to the last cell covering it (-1: none).
  std::vector<int> grid(rows.size() * num_cols, -1);
  for (size_t k = 0; k < cells.size(); ++k) {
    const Cell& cell = cells[k];
    for (size_t i = cell.row; i < std::min(cell.row + cell.row_span, rows.size()); ++i) {
      for (size_t j = cell.col; j < std::min(cell.col + cell.col_span, num_cols); ++j) {
        grid[i * num_cols + j] = static_cast<int>(k);
      }
    }
  }
  std::string html = "<table>";
  for (size_t i = 0; i < rows.size(); ++i) {
    html += "<tr>";
    for (size_t j = 0; j < num_cols; ++j) {
      int k = grid[i * num_cols + j];
      if (k < 0) {
        html += "<td></td>";
        continue;
      }
      const Cell& cell = cells[k];
      if (cell.row != i || cell.col != j) continue;
      html += "<td";
      if (cell.row_span > 1) html += " rowspan=\"" + std::to_string(cell.row_span) + "\"";
      if (cell.col_span > 1) html += " colspan=\"" + std::to_string(cell.col_span) + "\"";
      html += ">";
      AppendHtmlEscaped(PythonStrip(cell.text), &html);
      html += "</td>";
    }
    html += "</tr>";
  }
  html += "</table>";
  return html;
}

std::string OtslToHtml(std::string_view otsl) {
  Result<std::string> html = ConvertOtslToHtml(otsl);
  return html ? std::move(*html) : std::string(otsl);
}

}  // namespace mineru::pipeline
