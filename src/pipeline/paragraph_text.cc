// SPDX-License-Identifier: Apache-2.0
#include "pipeline/paragraph_text.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/middle_json.h"
#include "pipeline/python_text.h"
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

ParaSpanKind KindOf(const std::string& type) {
  if (type == "text") return ParaSpanKind::kText;
  if (type == "inline_equation") return ParaSpanKind::kInlineEquation;
  if (type == "interline_equation") return ParaSpanKind::kInterlineEquation;
  return ParaSpanKind::kOther;
}

// One span's Markdown before stripping: text as given (escaped when asked), inline equations in
// the inline delimiters, interline equations as a display block or, with formula recognition
// off, their crop; anything else renders nothing.
std::string RenderSpan(const ParaSpan& span, const MarkdownOptions& options, bool escape_text) {
  switch (span.kind) {
    case ParaSpanKind::kText:
      return escape_text ? EscapeMarkdownText(span.content) : span.content;
    case ParaSpanKind::kInlineEquation:
      return options.inline_left + span.content + options.inline_right;
    case ParaSpanKind::kInterlineEquation:
      if (options.formula_enabled) {
        return "\n" + options.display_left + "\n" + span.content + "\n" + options.display_right +
               "\n";
      }
      if (!span.image_path.empty()) return MarkdownImageLink(options.image_dir, span.image_path);
      return {};
    case ParaSpanKind::kOther:
      break;
  }
  return {};
}

bool IsSpaceOrTab(char c) { return c == ' ' || c == '\t'; }

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

bool IsHyphenAtLineEnd(std::string_view content) {
  std::string_view s = PythonStrip(content);
  // Leading whitespace does not matter here; the stripped text must end "<letter>-".
  if (s.size() < 2 || s.back() != '-') return false;
  char c = s[s.size() - 2];
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

std::string MarkdownImageLink(const std::string& dir, const std::string& path) {
  if (dir.empty()) return "![](" + path + ")";
  return "![](" + dir + "/" + path + ")";
}

std::string EscapeMarkdownText(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t backslashes = 0;  // backslashes immediately before the current character
  for (char c : text) {
    if (c == '\\') {
      out.push_back(c);
      ++backslashes;
      continue;
    }
    // The five characters are ASCII, so a byte-wise scan never splits a UTF-8 sequence.
    if ((c == '*' || c == '_' || c == '`' || c == '~' || c == '$') && backslashes % 2 == 0) {
      out.push_back('\\');
    }
    out.push_back(c);
    backslashes = 0;
  }
  return out;
}

std::string EscapeTextBlockMarkdownPrefix(std::string_view text) {
  // ^[ \t]{0,3}(#{1,6}|[+-])(?=[ \t]): the indent run must be at most three long (a marker is
  // never a space), and a '#' run of 1–6 must be followed directly by a space or tab (backing off
  // to a shorter run only ever lands on another '#').
  size_t indent = 0;
  while (indent < text.size() && IsSpaceOrTab(text[indent])) ++indent;
  if (indent > 3 || indent >= text.size()) return std::string(text);
  size_t end = indent;
  if (text[indent] == '#') {
    while (end < text.size() && text[end] == '#') ++end;
    if (end - indent > 6) return std::string(text);
  } else if (text[indent] == '+' || text[indent] == '-') {
    end = indent + 1;
  } else {
    return std::string(text);
  }
  if (end >= text.size() || !IsSpaceOrTab(text[end])) return std::string(text);
  std::string out(text.substr(0, indent));
  out.push_back('\\');
  out.append(text.substr(indent));
  return out;
}

ParaSpans ReadParaSpans(const Json& block) {
  ParaSpans out;
  std::string block_text;
  for (const Json& line : ArrayAt(block, "lines")) {
    std::vector<ParaSpan>& views = out.lines.emplace_back();
    for (const Json& span : ArrayAt(line, "spans")) {
      ParaSpan view;
      view.type = StringAt(span, "type");
      view.kind = KindOf(view.type);
      view.content = StringAt(span, "content");
      view.image_path = StringAt(span, "image_path");
      if (view.kind == ParaSpanKind::kText) {
        view.content = FullWidthAlnumToAscii(view.content);
        block_text += view.content;
      }
      views.push_back(std::move(view));
    }
  }
  out.cjk = IsCjkText(block_text);
  // Backwards: whether any span after this one is joinable.
  bool later = false;
  for (auto line = out.lines.rbegin(); line != out.lines.rend(); ++line) {
    for (auto span = line->rbegin(); span != line->rend(); ++span) {
      span->joinable_follows = later;
      if ((span->kind == ParaSpanKind::kText || span->kind == ParaSpanKind::kInlineEquation) &&
          !PythonStrip(span->content).empty()) {
        later = true;
      }
    }
  }
  return out;
}

bool NextLineStartsLowercase(const ParaSpans& spans, size_t line) {
  if (line + 1 >= spans.lines.size() || spans.lines[line + 1].empty()) return false;
  const ParaSpan& next = spans.lines[line + 1].front();
  if (next.kind != ParaSpanKind::kText || next.content.empty()) return false;
  char32_t cp = 0;
  DecodeAt(next.content, 0, &cp);
  return IsLowercaseLetter(cp);
}

std::string MergeParaText(const Json& block, const MarkdownOptions& options) {
  const ParaSpans para = ReadParaSpans(block);
  // Each span's rendering, stripped; empty ones contribute nothing.
  std::string out;
  for (size_t i = 0; i < para.lines.size(); ++i) {
    const std::vector<ParaSpan>& spans = para.lines[i];
    for (size_t j = 0; j < spans.size(); ++j) {
      const ParaSpan& span = spans[j];
      const std::string rendered = RenderSpan(span, options, /*escape_text=*/false);
      std::string_view content = PythonStrip(rendered);
      if (content.empty()) continue;
      if (span.kind == ParaSpanKind::kInterlineEquation) {
        out += content;
        continue;
      }
      const bool is_last_span = j + 1 == spans.size();
      if (para.cjk) {
        // CJK: no space after a line's last span unless it is an inline equation.
        out += content;
        if (!is_last_span || span.kind == ParaSpanKind::kInlineEquation) out += ' ';
        continue;
      }
      if (is_last_span && span.kind == ParaSpanKind::kText && IsHyphenAtLineEnd(content)) {
        // Line-final "<letters>-": dropped when the next line's first span is text starting with
        // a lowercase letter, else kept; never followed by a space.
        if (NextLineStartsLowercase(para, i)) content.remove_suffix(1);
        out += content;
        continue;
      }
      out += content;
      out += ' ';
    }
  }
  return std::string(PythonStrip(out));
}

std::string MergeParaTextPro(const Json& block, const MarkdownOptions& options,
                             bool escape_text_block_prefix) {
  const ParaSpans para = ReadParaSpans(block);
  const std::string block_type = StringAt(block, "type");
  // Code bodies keep their characters: only other blocks' text spans are escaped.
  const bool escape_text = block_type != "code_body";
  std::string out;
  for (size_t i = 0; i < para.lines.size(); ++i) {
    const std::vector<ParaSpan>& spans = para.lines[i];
    for (size_t j = 0; j < spans.size(); ++j) {
      const ParaSpan& span = spans[j];
      const std::string rendered = RenderSpan(span, options, escape_text);
      std::string_view content = PythonStrip(rendered);
      if (content.empty()) continue;
      if (span.kind == ParaSpanKind::kInterlineEquation) {
        out += content;
        continue;
      }
      const bool is_last_span = j + 1 == spans.size();
      if (para.cjk) {
        // CJK: a space only before more joinable content, and then not after a line's last
        // span unless it is an inline equation.
        out += content;
        if (span.joinable_follows &&
            (!is_last_span || span.kind == ParaSpanKind::kInlineEquation)) {
          out += ' ';
        }
        continue;
      }
      if (is_last_span && span.kind == ParaSpanKind::kText && IsHyphenAtLineEnd(content)) {
        if (NextLineStartsLowercase(para, i)) content.remove_suffix(1);
        out += content;
        continue;
      }
      out += content;
      if (span.joinable_follows) out += ' ';
    }
  }
  // No trailing space is ever added and every piece is stripped, so `out` is already trimmed.
  if (escape_text_block_prefix && block_type == "text") return EscapeTextBlockMarkdownPrefix(out);
  return out;
}

}  // namespace mineru::pipeline
