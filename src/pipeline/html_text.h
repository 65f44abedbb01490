// SPDX-License-Identifier: Apache-2.0
// The HTML string handling of MinerU 3.4.4's output writers: Python's html.escape and
// html.unescape as MinerU calls them, and the rewrite of table HTML for Markdown and the content
// lists (mineru/backend/vlm/vlm_middle_json_mkcontent.py @3.4.4 _format_embedded_html).
#pragma once

#include <string>
#include <string_view>

#include "pipeline/paragraph_text.h"

namespace mineru::pipeline {

// Python html.escape(text, quote): '&' → "&amp;", '<' → "&lt;", '>' → "&gt;", and with `quote`
// '"' → "&quot;", '\'' → "&#x27;"; appended to *out.
void AppendHtmlEscaped(std::string_view text, std::string* out, bool quote = true);

// Python html.escape(text, quote=False).
std::string HtmlEscapeNoQuote(std::string_view text);

// Python html.unescape: numeric references (&#NN; &#xHH;, the ';' optional) exactly as Python
// resolves them (U+0000, surrogates and values above U+10FFFF → U+FFFD; 0x80–0x9F through the
// windows-1252 table; non-characters and C0/C1 controls removed), and named references with
// Python's longest-prefix rule. Deviation: of the 2,231 HTML5 names only amp, lt, gt, quot (also
// in capitals and without ';'), apos and nbsp (also without ';') are known; any other named
// reference stays as written.
std::string HtmlUnescape(std::string_view text);

// Table HTML as Markdown and the content lists show it: every src="X" whose X is not empty and
// does not start with "data:" becomes src="<image_dir>/X" (nothing when image_dir is empty), then
// every <eq>X</eq> (shortest match, across newlines) becomes
// " <inline_left>HtmlUnescape(X)<inline_right> ".
std::string FormatEmbeddedTableHtml(std::string_view html, const MarkdownOptions& options);

}  // namespace mineru::pipeline
