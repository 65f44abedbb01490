// SPDX-License-Identifier: Apache-2.0
// What mineru-vl-utils 1.2.1 does to table HTML after recognition: the OTSL conversion with its
// HTML pass-through (post_process/otsl2html.py convert_otsl_to_html), the re-insertion of the
// images that were masked out of the table crop and named by tokens such as "[KT7Z]", the
// optional <eq> wrapping of formulas (post_process/table_image_processor.py
// replace_table_image_tokens, replace_table_formula_delimiters), and the conversion of an image
// analysis' "pure_table" answer, Markdown or OTSL, into HTML (post_process/__init__.py
// _convert_pure_table_content_to_html, image_analysis_postprocess.py
// convert_markdown_table_to_html).
//
// All functions are total and linear (the token re-insertion: linear per token); bytes that are
// not UTF-8 pass through unchanged. "Whitespace" is Python's str.isspace() (python_text.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace mineru::pipeline {

// The client's pass-through test: `content` starts with "<table" and ends with "</table>",
// exactly (case-sensitive, no trimming; a trailing newline fails it).
bool IsHtmlTable(std::string_view content);

// convert_otsl_to_html as of 1.2.1: `content` unchanged when IsHtmlTable(), else
// ConvertOtslToHtml() (otsl_to_html.h), which gives "" for text without OTSL tokens. Errors: those
// of ConvertOtslToHtml (the client keeps the raw text then).
Result<std::string> TableContentToHtml(std::string_view content);

// replace_table_image_tokens: for each (token, data URI) in order, every match of
// `\[\s*INNER\s*\]` in the text so far (INNER = the token less its first and last character,
// matched literally and case-sensitively; whitespace may pad it: "[ AC2G ]") becomes
// `<img src="URI"/>`. Later tokens see the replacements of earlier ones. The URI is inserted
// verbatim (the client passes it as a re.sub template, which would interpret backslashes; a
// base64 data URI has none). Empty html or an empty map: html unchanged.
std::string ReplaceTableImageTokens(
    std::string_view html,
    const std::vector<std::pair<std::string, std::string>>& token_to_data_uri);

// replace_table_formula_delimiters with wrapping enabled: the html is cut into `<eq>...</eq>`
// segments (non-greedy, across lines), which stay as they are, and the text between them; in
// that text every `\(X\)` and then every `\[X\]` (X non-empty, non-greedy, across lines) becomes
// `<eq>X'</eq>` with X' = X trimmed. `<` in a formula is already `&lt;` after OTSL escaping.
std::string WrapTableFormulas(std::string_view html);

// convert_markdown_table_to_html: the trimmed content split into lines at Python's line
// boundaries (\n \r \r\n \v \f \x1c \x1d \x1e \x85 U+2028 U+2029), each line trimmed. It is a
// table when there are at least two lines, none empty; line 1 is a row (contains `|` and has >= 2
// columns, counted by splitting on every `|` after dropping one leading and one trailing `|`);
// line 2 is a separator (`^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$`); header and
// separator have the same number of cells, at least 2, and every further line is a row with that
// number of cells. Cells: one leading and one trailing `|` dropped, split at `|` not escaped by a
// backslash (`\|` becomes `|`, any other backslash stays), trimmed. Output
// `<table><tr><th>h</th>...</tr><tr><td>c</td>...</tr>...</table>` with every cell HTML-escaped
// (& < > " ' -> &amp; &lt; &gt; &quot; &#x27;). Anything else: nullopt.
std::optional<std::string> MarkdownTableToHtml(std::string_view content);

// _convert_pure_table_content_to_html: "" for blank content; the trimmed content when it starts
// with "<table" and ends with "</table>" ignoring ASCII case; else MarkdownTableToHtml() when it
// is a table; else, when the content contains one of <nl> <fcel> <ecel> <lcel> <ucel> <xcel>,
// TableContentToHtml() (a failure or a blank result gives ""); else "". Formula wrapping is not
// part of it: the client applies WrapTableFormulas() afterwards when it is enabled.
std::string PureTableToHtml(std::string_view content);

// The client's steps for a `table` block with content (simple_process): TableContentToHtml()
// (on failure the raw content goes on), ReplaceTableImageTokens(), then WrapTableFormulas() when
// `wrap_formulas` (MinerU enables it). A failed conversion's error goes to *conversion_error (may
// be null).
std::string ProcessTableContent(
    std::string_view content,
    const std::vector<std::pair<std::string, std::string>>& token_to_data_uri, bool wrap_formulas,
    std::string* conversion_error = nullptr);

}  // namespace mineru::pipeline
