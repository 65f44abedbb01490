// SPDX-License-Identifier: Apache-2.0
// MinerU2.5's table output format, OTSL, converted to the HTML table MinerU stores
// (mineru-vl-utils 0.1.22 post_process/otsl2html.py,
// itself derived from docling's OTSL export).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mineru::pipeline {

// The grid (rows x longest row) a conversion may build; larger tables fail with
// kResourceExhausted (the output holds one <td> per grid position, so this bounds it too).
inline constexpr size_t kMaxOtslGridCells = size_t{1} << 22;

// The conversion, rule by rule (docs/MINERU.md 2.7):
//  1. Tokens are <nl> <fcel> <ecel> <lcel> <ucel> <xcel>; the text between two tokens is one
//     piece, and whitespace-only pieces are dropped.
//  2. Rows are the runs of non-<nl> tokens; every row is padded with <ecel> to the longest row.
//     The token/text stream is rebuilt row by row as the client does: a row's token keeps the
//     text piece that follows it in the input only while input and rows stay aligned (text
//     before the first token, after an <nl> or after a repeated <nl> loses that alignment, and
//     later text pieces are then dropped or shifted exactly as in the client).
//  3. <fcel> and <ecel> start a cell; <fcel> takes the following text piece as its content.
//     Column span = 1 + the <lcel>/<xcel> run to its right (only when the next stream item is
//     one of them), row span = 1 + the <ucel>/<xcel> run below it.
//  4. Output: <table>, per row <tr>, per grid position whose cell starts there
//     <td[ rowspan="n"][ colspan="n"]>text</td> with the text trimmed and HTML-escaped
//     (& < > " '), </tr>, </table>. Positions no cell covers become <td></td>. Later cells
//     overwrite earlier ones where spans overlap. No <thead>/<th>. No cell at all -> "".
// Errors: kResourceExhausted past kMaxOtslGridCells.
Result<std::string> ConvertOtslToHtml(std::string_view otsl);

// ConvertOtslToHtml(), or `otsl` itself unchanged when it cannot be converted. Content that is
// already HTML (starts with "<table", ends with "</table>") is the caller's to keep as is.
std::string OtslToHtml(std::string_view otsl);

}  // namespace mineru::pipeline
