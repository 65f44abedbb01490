// SPDX-License-Identifier: Apache-2.0
#include "pipeline/content_list_v2.h"

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/content_list_common.h"
#include "pipeline/html_text.h"
#include "pipeline/middle_json.h"
#include "pipeline/python_text.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

// `s` less its last character (code point; a trailing ill-formed byte counts as one).
std::string DropLastCharacter(const std::string& s) {
  if (s.empty()) return s;
  size_t start = s.size() - 1;
  // Back over continuation bytes to the lead byte of a well-formed sequence.
  while (start > 0 && s.size() - start < 4 &&
         (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
    --start;
  }
  char32_t cp = 0;
  if (text::WellFormedLength(s, start, &cp) != s.size() - start) start = s.size() - 1;
  return s.substr(0, start);
}

// The text a text span contributes: its untrimmed content plus the separator rule.
std::string TextSpanContent(const ParaSpans& para, size_t line, size_t index) {
  const std::vector<ParaSpan>& spans = para.lines[line];
  const ParaSpan& span = spans[index];
  const bool is_last_span = index + 1 == spans.size();
  if (para.cjk) {
    return span.joinable_follows && !is_last_span ? span.content + " " : span.content;
  }
  if (is_last_span && IsHyphenAtLineEnd(span.content)) {
    // Python's content[:-1] on the untrimmed text: after "exam-  " it removes a space.
    return NextLineStartsLowercase(para, line) ? DropLastCharacter(span.content) : span.content;
  }
  return span.joinable_follows ? span.content + " " : span.content;
}

Json SpansOf(const Json& block) {
  struct OutSpan {
    const char* type;
    std::string content;
  };
  std::vector<OutSpan> spans;
  const ParaSpans para = ReadParaSpans(block);
  const bool phonetic = StringAt(block, "type") == "phonetic";
  for (size_t i = 0; i < para.lines.size(); ++i) {
    for (size_t j = 0; j < para.lines[i].size(); ++j) {
      const ParaSpan& span = para.lines[i][j];
      if (PythonStrip(span.content).empty()) continue;
      if (span.kind == ParaSpanKind::kText && !phonetic) {
        std::string content = TextSpanContent(para, i, j);
        if (!spans.empty() && std::string_view(spans.back().type) == "text") {
          spans.back().content += content;  // adjacent text spans merge
        } else {
          spans.push_back({"text", std::move(content)});
        }
      } else if (span.kind == ParaSpanKind::kText) {
        spans.push_back({"phonetic", span.content});
      } else if (span.kind == ParaSpanKind::kInlineEquation) {
        spans.push_back({"equation_inline", span.content});
      }
      // Any other span type is skipped (MinerU logs a warning).
    }
  }
  Json out = Json::array();
  for (OutSpan& span : spans) {
    out.push_back({{"type", span.type}, {"content", std::move(span.content)}});
  }
  return out;
}

// The spans of every sub-block of `type`, one after the other in stored order (never merged
// across sub-blocks).
Json SubBlockSpans(const Json& group, std::string_view type) {
  Json out = Json::array();
  for (const Json& sub : ArrayAt(group, "blocks")) {
    if (StringAt(sub, "type") != type) continue;
    for (Json& span : SpansOf(sub)) out.push_back(std::move(span));
  }
  return out;
}

size_t CountOccurrences(std::string_view haystack, std::string_view needle) {
  size_t count = 0;
  for (size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

Json TableItem(const Json& block, const MarkdownOptions& options) {
  const BodyData body = GetBodyData(block);
  const std::string html = FormatEmbeddedTableHtml(body.content, options);
  const int nest_level = CountOccurrences(html, "<table") > 1 ? 2 : 1;
  const bool complex = html.find("colspan") != std::string::npos ||
                       html.find("rowspan") != std::string::npos || nest_level > 1;
  Json content = Json::object();
  content["image_source"] = {{"path", JoinImagePath(options.image_dir, body.image_path)}};
  content["table_caption"] = SubBlockSpans(block, "table_caption");
  content["table_footnote"] = SubBlockSpans(block, "table_footnote");
  content["html"] = html;
  content["table_type"] = complex ? "complex_table" : "simple_table";
  content["table_nest_level"] = nest_level;
  return {{"type", "table"}, {"content", std::move(content)}};
}

// An image or chart group.
Json VisualItem(const Json& block, const std::string& kind, const MarkdownOptions& options) {
  const BodyData body = GetBodyData(block);
  Json content = Json::object();
  content["image_source"] = {{"path", MediaPath(options.image_dir, body.image_path)}};
  content["content"] = body.content;
  content[kind + "_caption"] = SubBlockSpans(block, kind + "_caption");
  content[kind + "_footnote"] = SubBlockSpans(block, kind + "_footnote");
  Json item{{"type", kind}, {"content", std::move(content)}};
  const std::string sub_type = StringAt(block, "sub_type");
  if (!sub_type.empty()) item["sub_type"] = sub_type;
  return item;
}

Json CodeItem(const Json& block) {
  Json caption = SubBlockSpans(block, "code_caption");
  Json code = Json::array();
  for (const Json& sub : ArrayAt(block, "blocks")) {
    if (StringAt(sub, "type") == "code_body") code = SpansOf(sub);  // the last body wins
  }
  if (StringAt(block, "sub_type") == "algorithm") {
    return {{"type", "algorithm"},
            {"content",
             {{"algorithm_caption", std::move(caption)}, {"algorithm_content", std::move(code)}}}};
  }
  std::string language = StringAt(block, "guess_lang");
  if (language.empty()) language = "txt";
  return {{"type", "code"},
          {"content",
           {{"code_caption", std::move(caption)},
            {"code_content", std::move(code)},
            {"code_language", std::move(language)}}}};
}

Json ListItem(const Json& block) {
  Json items = Json::array();
  for (const Json& child : ArrayAt(block, "blocks")) {
    if (!child.is_object()) continue;
    Json spans = SpansOf(child);
    if (!spans.empty())
      items.push_back({{"item_type", "text"}, {"item_content", std::move(spans)}});
  }
  const char* list_type =
      StringAt(block, "sub_type") == "ref_text" ? "reference_list" : "text_list";
  return {{"type", "list"}, {"content", {{"list_type", list_type}, {"list_items", items}}}};
}

// The page-level name of a discarded type, or nullptr.
const char* PageItemType(std::string_view type) {
  if (type == "header") return "page_header";
  if (type == "footer") return "page_footer";
  if (type == "aside_text") return "page_aside_text";
  if (type == "page_number") return "page_number";
  if (type == "page_footnote") return "page_footnote";
  return nullptr;
}

Json Paragraph(const Json& block) {
  return {{"type", "paragraph"}, {"content", {{"paragraph_content", SpansOf(block)}}}};
}

// One block's item without bbox; null for a type MinerU does not list.
Json BlockItem(const Json& block, const MarkdownOptions& options) {
  const std::string type = StringAt(block, "type");
  if (const char* page_type = PageItemType(type)) {
    return {{"type", page_type},
            {"content", {{std::string(page_type) + "_content", SpansOf(block)}}}};
  }
  if (type == "title") {
    const int level = TitleLevel(block);
    if (level == 0) return Paragraph(block);
    return {{"type", "title"}, {"content", {{"title_content", SpansOf(block)}, {"level", level}}}};
  }
  if (type == "text" || type == "phonetic") return Paragraph(block);
  if (type == "interline_equation") {
    const BodyData body = GetBodyData(block);
    return {{"type", "equation_interline"},
            {"content",
             {{"math_content", body.content},
              {"math_type", "latex"},
              {"image_source", {{"path", JoinImagePath(options.image_dir, body.image_path)}}}}}};
  }
  if (type == "image" || type == "chart") return VisualItem(block, type, options);
  if (type == "table") return TableItem(block, options);
  if (type == "code") return CodeItem(block);
  if (type == "ref_text") {
    Json item = Json::array();
    item.push_back({{"item_type", "text"}, {"item_content", SpansOf(block)}});
    return {{"type", "list"},
            {"content", {{"list_type", "reference_list"}, {"list_items", std::move(item)}}}};
  }
  if (type == "list") return ListItem(block);
  return nullptr;
}

}  // namespace

Json MakeContentListV2(const Json& pdf_info, const MarkdownOptions& options) {
  Json out = Json::array();
  if (!pdf_info.is_array()) return out;
  for (const Json& page : pdf_info) {
    Json items = Json::array();
    if (page.is_object()) {
      const auto page_size = NumbersAt<2>(page, "page_size");
      for (const char* key : {"para_blocks", "discarded_blocks"}) {
        for (const Json& block : ArrayAt(page, key)) {
          if (!block.is_object()) continue;
          Json item = BlockItem(block, options);
          if (item.is_null()) continue;
          Json bbox = ScaledBbox(block, page_size);
          if (!bbox.is_null()) item["bbox"] = std::move(bbox);
          items.push_back(std::move(item));
        }
      }
    }
    out.push_back(std::move(items));
  }
  return out;
}

}  // namespace mineru::pipeline
