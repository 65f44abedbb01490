// SPDX-License-Identifier: Apache-2.0
#include "pipeline/markdown.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/middle_json.h"
#include "pipeline/python_text.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

// ---------------------------------------------------------------------------------------------
// Code points of possibly ill-formed UTF-8: an ill-formed subpart reads as one U+FFFD.

size_t DecodeAt(std::string_view s, size_t pos, char32_t* cp) {
  size_t n = text::WellFormedLength(s, pos, cp);
  if (n != 0) return n;
  *cp = text::kReplacementCharacter;
  return text::MaximalSubpartLength(s, pos);
}

// Python str.islower() of one character: lowercase Latin (ASCII, Latin-1, Latin Extended-A),
// Greek and Cyrillic letters. Other scripts have no case and read as not lowercase.
bool IsLowercaseLetter(char32_t cp) {
  if (cp >= 'a' && cp <= 'z') return true;
  if (cp == 0xB5 || (cp >= 0xDF && cp <= 0xFF && cp != 0xF7)) return true;
  if (cp >= 0x100 && cp <= 0x17F) {
    if (cp == 0x138 || cp == 0x149 || cp == 0x17F) return true;
    if (cp <= 0x137 || (cp >= 0x14A && cp <= 0x177)) return (cp & 1) == 1;
    if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x17A && cp <= 0x17E)) return (cp & 1) == 0;
    return false;
  }
  if (cp >= 0x3AC && cp <= 0x3CE) return true;  // Greek small letters
  if (cp >= 0x430 && cp <= 0x45F) return true;  // Cyrillic small letters
  return false;
}

enum class LetterClass { kNone, kCjk, kOther };

// Which letters count in the CJK majority test (IsCjkText).
LetterClass ClassifyLetter(char32_t cp) {
  auto in = [cp](char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; };
  // Han, Hiragana, Katakana (incl. half-width and phonetic extensions), Hangul.
  if (in(0x3040, 0x30FF) || in(0x31F0, 0x31FF) || in(0x3400, 0x4DBF) || in(0x4E00, 0x9FFF) ||
      in(0xF900, 0xFAFF) || in(0xFF66, 0xFF9F) || in(0x1100, 0x11FF) || in(0x3130, 0x318F) ||
      in(0xA960, 0xA97F) || in(0xAC00, 0xD7FF) || in(0x20000, 0x3134F)) {
    return LetterClass::kCjk;
  }
  // Letters of the other common scripts: Latin, IPA, Greek, Cyrillic, Armenian, Hebrew, Arabic,
  // Indic, Thai, Lao, Georgian, Latin Extended Additional, Greek Extended, full-width Latin.
  if (in('A', 'Z') || in('a', 'z') || cp == 0xAA || cp == 0xB5 || cp == 0xBA ||
      (in(0xC0, 0x2AF) && cp != 0xD7 && cp != 0xF7) || in(0x370, 0x3FF) || in(0x400, 0x52F) ||
      in(0x531, 0x58F) || in(0x5D0, 0x5EA) || in(0x620, 0x64A) || in(0x671, 0x6D3) ||
      in(0x900, 0xDFF) || in(0xE00, 0xEFF) || in(0x10A0, 0x10FF) || in(0x1E00, 0x1FFF) ||
      in(0xFF21, 0xFF3A) || in(0xFF41, 0xFF5A)) {
    return LetterClass::kOther;
  }
  return LetterClass::kNone;
}

// MinerU is_hyphen_at_line_end: the text matches [A-Za-z]+-\s*$ (an ASCII letter, then a hyphen,
// then only whitespace).
bool IsHyphenAtLineEnd(std::string_view content) {
  std::string_view s = PythonStrip(content);
  // Leading whitespace does not matter here; the stripped text must end "<letter>-".
  if (s.size() < 2 || s.back() != '-') return false;
  char c = s[s.size() - 2];
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

std::string ImageLink(const std::string& image_dir, const std::string& image_path) {
  if (image_dir.empty()) return "![](" + image_path + ")";
  return "![](" + image_dir + "/" + image_path + ")";
}

enum class SpanKind { kText, kInlineEquation, kInterlineEquation, kOther };

struct SpanView {
  SpanKind kind = SpanKind::kOther;
  std::string content;  // full-width letters/digits already converted for text spans
  std::string image_path;
};

SpanKind KindOf(const std::string& type) {
  if (type == "text") return SpanKind::kText;
  if (type == "inline_equation") return SpanKind::kInlineEquation;
  if (type == "interline_equation") return SpanKind::kInterlineEquation;
  return SpanKind::kOther;
}

// The block's first-level (sub-)blocks of one type, in their stored order.
std::vector<const Json*> SubBlocks(const Json& block, std::string_view type) {
  std::vector<const Json*> out;
  for (const Json& sub : ArrayAt(block, "blocks")) {
    if (sub.is_object() && StringAt(sub, "type") == type) out.push_back(&sub);
  }
  return out;
}

bool HasSubBlock(const Json& block, std::string_view type) {
  return !SubBlocks(block, type).empty();
}

// Section 3.3: every span of `span_type` in the body sub-blocks `body_type`, for each one with a
// non-empty image_path, its link.
std::string BodyImageLinks(const Json& block, std::string_view body_type,
                           std::string_view span_type, const MarkdownOptions& options) {
  std::string out;
  for (const Json* body : SubBlocks(block, body_type)) {
    for (const Json& line : ArrayAt(*body, "lines")) {
      for (const Json& span : ArrayAt(line, "spans")) {
        if (StringAt(span, "type") != span_type) continue;
        std::string path = StringAt(span, "image_path");
        if (!path.empty()) out += ImageLink(options.image_dir, path);
      }
    }
  }
  return out;
}

std::string ImageMarkdown(const Json& block, const MarkdownOptions& options) {
  MarkdownOptions caption_options = options;
  caption_options.formula_enabled = true;  // captions use merge_para_with_text's defaults
  std::string out;
  if (HasSubBlock(block, "image_footnote")) {
    // Captions (each + "  \n"), the image, then each footnote prefixed "  \n".
    for (const Json* caption : SubBlocks(block, "image_caption")) {
      out += MergeParaText(*caption, caption_options) + "  \n";
    }
    out += BodyImageLinks(block, "image_body", "image", options);
    for (const Json* footnote : SubBlocks(block, "image_footnote")) {
      out += "  \n" + MergeParaText(*footnote, caption_options);
    }
  } else {
    // The image, then each caption prefixed "  \n".
    out += BodyImageLinks(block, "image_body", "image", options);
    for (const Json* caption : SubBlocks(block, "image_caption")) {
      out += "  \n" + MergeParaText(*caption, caption_options);
    }
  }
  return out;
}

std::string TableMarkdown(const Json& block, const MarkdownOptions& options) {
  MarkdownOptions caption_options = options;
  caption_options.formula_enabled = true;
  std::string out;
  for (const Json* caption : SubBlocks(block, "table_caption")) {
    out += MergeParaText(*caption, caption_options) + "  \n";
  }
  // The body: "\n<html>\n" when table recognition is on and the span has HTML, else the crop.
  for (const Json* body : SubBlocks(block, "table_body")) {
    for (const Json& line : ArrayAt(*body, "lines")) {
      for (const Json& span : ArrayAt(line, "spans")) {
        if (StringAt(span, "type") != "table") continue;
        std::string html = StringAt(span, "html");
        std::string path = StringAt(span, "image_path");
        if (options.table_enabled && !html.empty()) {
          out += "\n" + html + "\n";
        } else if (!path.empty()) {
          out += ImageLink(options.image_dir, path);
        }
      }
    }
  }
  for (const Json* footnote : SubBlocks(block, "table_footnote")) {
    out += "\n" + MergeParaText(*footnote, caption_options) + "  ";
  }
  return out;
}

std::string CodeMarkdown(const Json& block, const MarkdownOptions& options) {
  MarkdownOptions text_options = options;
  text_options.formula_enabled = true;
  std::string out;
  for (const Json* caption : SubBlocks(block, "code_caption")) {
    out += MergeParaText(*caption, text_options) + "  \n";
  }
  // sub_type code: a fence labelled with guess_lang ("txt" when absent); algorithm: plain text;
  // any other sub_type renders no body (MinerU has no branch for it).
  std::string sub_type = StringAt(block, "sub_type");
  std::string lang = StringAt(block, "guess_lang");
  if (lang.empty()) lang = "txt";
  for (const Json* body : SubBlocks(block, "code_body")) {
    if (sub_type == "code") {
      out += "```" + lang + "\n" + MergeParaText(*body, text_options) + "\n```";
    } else if (sub_type == "algorithm") {
      out += MergeParaText(*body, text_options);
    }
  }
  return out;
}

std::string BlockMarkdown(const Json& block, const MarkdownOptions& options) {
  std::string type = StringAt(block, "type");
  if (type == "text" || type == "interline_equation" || type == "phonetic" || type == "ref_text") {
    return MergeParaText(block, options);
  }
  if (type == "list") {
    // Each item's text followed by two spaces and a newline (empty items kept, as in MinerU).
    std::string out;
    for (const Json& item : ArrayAt(block, "blocks")) {
      if (item.is_object()) out += MergeParaText(item, options) + "  \n";
    }
    return out;
  }
  if (type == "title") {
    MarkdownOptions title_options = options;
    title_options.formula_enabled = true;
    return std::string(TitleLevel(block), '#') + " " + MergeParaText(block, title_options);
  }
  if (type == "image") return ImageMarkdown(block, options);
  if (type == "table") return TableMarkdown(block, options);
  if (type == "code") return CodeMarkdown(block, options);
  return {};
}

}  // namespace

std::string FullWidthAlnumToAscii(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp = 0;
    size_t n = text::WellFormedLength(text, pos, &cp);
    if (n == 0) {
      // Ill-formed bytes pass through unchanged.
      out.push_back(text[pos]);
      ++pos;
      continue;
    }
    if ((cp >= 0xFF21 && cp <= 0xFF3A) || (cp >= 0xFF41 && cp <= 0xFF5A) ||
        (cp >= 0xFF10 && cp <= 0xFF19)) {
      out.push_back(static_cast<char>(cp - 0xFEE0));
    } else {
      out.append(text.substr(pos, n));
    }
    pos += n;
  }
  return out;
}

bool IsCjkText(std::string_view text) {
  size_t cjk = 0;
  size_t letters = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp = 0;
    pos += DecodeAt(text, pos, &cp);
    LetterClass c = ClassifyLetter(cp);
    if (c == LetterClass::kNone) continue;
    ++letters;
    if (c == LetterClass::kCjk) ++cjk;
  }
  return letters > 0 && 2 * cjk > letters;
}

std::string MergeParaText(const Json& block, const MarkdownOptions& options) {
  // First pass (section 3.3): text spans get full-width letters/digits converted, and their
  // concatenation decides the language.
  std::vector<std::vector<SpanView>> lines;
  std::string block_text;
  for (const Json& line : ArrayAt(block, "lines")) {
    std::vector<SpanView>& views = lines.emplace_back();
    for (const Json& span : ArrayAt(line, "spans")) {
      SpanView view;
      view.kind = KindOf(StringAt(span, "type"));
      view.content = StringAt(span, "content");
      view.image_path = StringAt(span, "image_path");
      if (view.kind == SpanKind::kText) {
        view.content = FullWidthAlnumToAscii(view.content);
        block_text += view.content;
      }
      views.push_back(std::move(view));
    }
  }
  const bool cjk = IsCjkText(block_text);

  // Second pass: each span's rendering, stripped; empty ones contribute nothing.
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<SpanView>& spans = lines[i];
    for (size_t j = 0; j < spans.size(); ++j) {
      const SpanView& span = spans[j];
      std::string rendered;
      switch (span.kind) {
        case SpanKind::kText:
          rendered = span.content;
          break;
        case SpanKind::kInlineEquation:
          rendered = options.inline_left + span.content + options.inline_right;
          break;
        case SpanKind::kInterlineEquation:
          if (options.formula_enabled) {
            rendered = "\n" + options.display_left + "\n" + span.content + "\n" +
                       options.display_right + "\n";
          } else if (!span.image_path.empty()) {
            rendered = ImageLink(options.image_dir, span.image_path);
          }
          break;
        case SpanKind::kOther:
          break;
      }
      std::string_view content = PythonStrip(rendered);
      if (content.empty()) continue;
      if (span.kind == SpanKind::kInterlineEquation) {
        out += content;
        continue;
      }
      const bool is_last_span = j + 1 == spans.size();
      if (cjk) {
        // CJK: no space after a line's last span unless it is an inline equation.
        out += content;
        if (!is_last_span || span.kind == SpanKind::kInlineEquation) out += ' ';
        continue;
      }
      if (is_last_span && span.kind == SpanKind::kText && IsHyphenAtLineEnd(content)) {
        // Line-final "<letters>-": dropped when the next line's first span is text starting with
        // a lowercase letter, else kept; never followed by a space.
        bool next_lower = false;
        if (i + 1 < lines.size() && !lines[i + 1].empty()) {
          const SpanView& next = lines[i + 1].front();
          if (next.kind == SpanKind::kText && !next.content.empty()) {
            char32_t cp = 0;
            DecodeAt(next.content, 0, &cp);
            next_lower = IsLowercaseLetter(cp);
          }
        }
        if (next_lower) content.remove_suffix(1);
        out += content;
        continue;
      }
      out += content;
      out += ' ';
    }
  }
  return std::string(PythonStrip(out));
}

std::string MakeMarkdown(const Json& pdf_info, const MarkdownOptions& options) {
  if (!pdf_info.is_array()) return {};
  std::string out;
  bool first = true;
  for (const Json& page : pdf_info) {
    for (const Json& block : ArrayAt(page, "para_blocks")) {
      if (!block.is_object()) continue;
      const std::string rendered = BlockMarkdown(block, options);
      std::string_view text = PythonStrip(rendered);
      if (text.empty()) continue;
      if (!first) out += "\n\n";
      out += text;
      first = false;
    }
  }
  return out;
}

}  // namespace mineru::pipeline
