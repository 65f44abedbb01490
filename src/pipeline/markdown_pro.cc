// SPDX-License-Identifier: Apache-2.0
#include "pipeline/markdown_pro.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/content_list_common.h"
#include "pipeline/html_text.h"
#include "pipeline/middle_json.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline {
namespace {

// One piece of a visual group's Markdown. HTML blocks need a blank line on both sides.
struct Segment {
  std::string text;
  bool html = false;
};

bool IsGroupTextType(std::string_view type) {
  return type == "image_caption" || type == "image_footnote" || type == "table_caption" ||
         type == "table_footnote" || type == "code_caption" || type == "code_footnote" ||
         type == "chart_caption" || type == "chart_footnote";
}

// The group's sub-blocks by ascending "index" (a missing or non-numeric one sorts last), ties in
// stored order (MinerU _get_blocks_in_index_order). Sub-blocks that are not objects are skipped.
std::vector<const Json*> InIndexOrder(const Json& group) {
  std::vector<std::pair<double, const Json*>> keyed;
  for (const Json& sub : ArrayAt(group, "blocks")) {
    if (!sub.is_object()) continue;
    double key = std::numeric_limits<double>::infinity();
    auto it = sub.find("index");
    if (it != sub.end() && it->is_number()) key = it->get<double>();
    keyed.emplace_back(key, &sub);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Json*> out;
  out.reserve(keyed.size());
  for (const auto& [key, sub] : keyed) out.push_back(sub);
  return out;
}

// An image or chart body span: its link, then its analysis content as a <details> block.
void AppendVisualSpan(const Json& span, std::string_view span_type, const std::string& sub_type,
                      const MarkdownOptions& options, std::vector<Segment>* out) {
  const std::string media = MediaPath(options.image_dir, StringAt(span, "image_path"));
  if (!media.empty()) out->push_back({"![](" + media + ")", false});
  const std::string content = StringAt(span, "content");
  if (PythonStrip(content).empty()) return;
  std::string summary = sub_type;
  if (summary.empty()) summary = span_type == "chart" ? "chart content" : "image content";
  out->push_back(
      {"<details>\n<summary>" + summary + "</summary>\n\n" + content + "\n</details>", true});
}

// The segments of one sub-block of a visual group.
void AppendSegments(const Json& sub, const Json& group, const MarkdownOptions& options,
                    std::vector<Segment>* out) {
  const std::string type = StringAt(sub, "type");
  if (IsGroupTextType(type)) {
    // Captions and footnotes use merge_para_with_text's defaults (formulas as LaTeX).
    MarkdownOptions text_options = options;
    text_options.formula_enabled = true;
    std::string text = MergeParaTextPro(sub, text_options);
    if (!PythonStrip(text).empty()) out->push_back({std::move(text), false});
    return;
  }
  if (type == "image_body" || type == "chart_body") {
    const std::string_view span_type = type == "image_body" ? "image" : "chart";
    const std::string sub_type = StringAt(group, "sub_type");
    for (const Json& line : ArrayAt(sub, "lines")) {
      for (const Json& span : ArrayAt(line, "spans")) {
        if (StringAt(span, "type") == span_type) {
          AppendVisualSpan(span, span_type, sub_type, options, out);
        }
      }
    }
    return;
  }
  if (type == "table_body") {
    for (const Json& line : ArrayAt(sub, "lines")) {
      for (const Json& span : ArrayAt(line, "spans")) {
        if (StringAt(span, "type") != "table") continue;
        const std::string html = StringAt(span, "html");
        const std::string path = StringAt(span, "image_path");
        if (options.table_enabled && !html.empty()) {
          out->push_back({FormatEmbeddedTableHtml(html, options), true});
        } else if (!path.empty()) {
          out->push_back({"![](" + MediaPath(options.image_dir, path) + ")", false});
        }
      }
    }
    return;
  }
  if (type == "code_body") {
    bool is_html = false;
    std::string text = RenderCodeBody(group, sub, options, &is_html);
    if (!PythonStrip(text).empty()) out->push_back({std::move(text), is_html});
  }
}

std::string VisualGroupMarkdown(const Json& group, const MarkdownOptions& options) {
  std::vector<Segment> segments;
  for (const Json* sub : InIndexOrder(group)) AppendSegments(*sub, group, options, &segments);
  std::string out;
  bool previous_html = false;
  for (const Segment& segment : segments) {
    if (!out.empty()) out += previous_html || segment.html ? "\n\n" : "  \n";
    out += segment.text;
    previous_html = segment.html;
  }
  return out;
}

std::string BlockMarkdown(const Json& block, const MarkdownOptions& options) {
  const std::string type = StringAt(block, "type");
  if (type == "text" || type == "interline_equation" || type == "phonetic" || type == "ref_text") {
    return MergeParaTextPro(block, options);
  }
  if (type == "list") {
    // Each item's text followed by two spaces and a newline; items are never prefix-escaped.
    std::string out;
    for (const Json& item : ArrayAt(block, "blocks")) {
      if (item.is_object()) {
        out += MergeParaTextPro(item, options, /*escape_text_block_prefix=*/false) + "  \n";
      }
    }
    return out;
  }
  if (type == "title") {
    MarkdownOptions title_options = options;
    title_options.formula_enabled = true;
    return std::string(TitleLevel(block), '#') + " " + MergeParaTextPro(block, title_options);
  }
  if (type == "image" || type == "table" || type == "chart" || type == "code") {
    return VisualGroupMarkdown(block, options);
  }
  return {};
}

}  // namespace

std::string RenderAlgorithmHtml(const Json& body, const MarkdownOptions& options) {
  enum class Previous { kNone, kText, kFormula };
  Previous previous = Previous::kNone;
  std::string html;
  bool have_parts = false;
  bool last_part_ends_in_space = false;  // the last appended piece ends in ' ', '\n' or '\t'
  auto append = [&](const std::string& part) {
    html += part;
    have_parts = true;
    const char last = part.empty() ? '\0' : part.back();
    last_part_ends_in_space = last == ' ' || last == '\n' || last == '\t';
  };
  for (const Json& line : ArrayAt(body, "lines")) {
    for (const Json& span : ArrayAt(line, "spans")) {
      const std::string type = StringAt(span, "type");
      const std::string content = StringAt(span, "content");
      if (type == "text") {
        append(HtmlEscapeNoQuote(content));
        if (!content.empty()) previous = Previous::kText;
      } else if (type == "inline_equation" && !PythonStrip(content).empty()) {
        if (previous == Previous::kFormula && have_parts && !last_part_ends_in_space) append(" ");
        append(options.inline_left + HtmlEscapeNoQuote(content) + options.inline_right);
        previous = Previous::kFormula;
      }
    }
  }
  if (PythonStrip(html).empty()) return {};
  return "<div class=\"mineru-algorithm\" style=\"white-space: pre-wrap; "
         "font-family:monospace;\">\n" +
         html + "\n</div>";
}

std::string RenderCodeBody(const Json& group, const Json& body, const MarkdownOptions& options,
                           bool* is_html) {
  const std::string sub_type = StringAt(group, "sub_type");
  if (is_html != nullptr) *is_html = sub_type == "algorithm";
  if (sub_type == "algorithm") return RenderAlgorithmHtml(body, options);
  MarkdownOptions text_options = options;
  text_options.formula_enabled = true;
  std::string text = MergeParaTextPro(body, text_options);
  if (sub_type != "code") return text;
  std::string lang = StringAt(group, "guess_lang");
  if (lang.empty()) lang = "txt";
  return "```" + lang + "\n" + text + "\n```";
}

std::string MakeMarkdownPro(const Json& pdf_info, const MarkdownOptions& options) {
  if (!pdf_info.is_array()) return {};
  std::string out;
  for (const Json& page : pdf_info) {
    for (const Json& block : ArrayAt(page, "para_blocks")) {
      if (!block.is_object()) continue;
      const std::string rendered = BlockMarkdown(block, options);
      const std::string_view text = PythonStrip(rendered);
      if (text.empty()) continue;
      if (!out.empty()) out += "\n\n";
      out += text;
    }
  }
  return out;
}

}  // namespace mineru::pipeline
