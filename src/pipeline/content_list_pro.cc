// SPDX-License-Identifier: Apache-2.0
#include "pipeline/content_list_pro.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/content_list_common.h"
#include "pipeline/html_text.h"
#include "pipeline/markdown_pro.h"
#include "pipeline/middle_json.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline {
namespace {

bool IsPlainTextType(std::string_view type) {
  return type == "text" || type == "ref_text" || type == "phonetic" || type == "header" ||
         type == "footer" || type == "page_number" || type == "aside_text" ||
         type == "page_footnote";
}

// An image or chart group: path and content from its body, captions and footnotes in stored
// order (empty texts kept, as in MinerU), sub_type when set.
Json VisualItem(const Json& block, const std::string& kind, const MarkdownOptions& options) {
  const BodyData body = GetBodyData(block);
  const std::string caption_key = kind + "_caption";
  const std::string footnote_key = kind + "_footnote";
  Json item = Json::object();
  item["type"] = kind;
  item["img_path"] = MediaPath(options.image_dir, body.image_path);
  item["content"] = body.content;
  item[caption_key] = Json::array();
  item[footnote_key] = Json::array();
  const std::string sub_type = StringAt(block, "sub_type");
  if (!sub_type.empty()) item["sub_type"] = sub_type;
  for (const Json& sub : ArrayAt(block, "blocks")) {
    const std::string type = StringAt(sub, "type");
    if (type == caption_key || type == footnote_key) {
      item[type].push_back(MergeParaTextPro(sub, options));
    }
  }
  return item;
}

Json TableItem(const Json& block, const MarkdownOptions& options) {
  Json item = Json::object();
  item["type"] = "table";
  item["img_path"] = "";
  item["table_caption"] = Json::array();
  item["table_footnote"] = Json::array();
  for (const Json& sub : ArrayAt(block, "blocks")) {
    const std::string type = StringAt(sub, "type");
    if (type == "table_body") {
      // Every table span; a later non-empty value wins.
      for (const Json& line : ArrayAt(sub, "lines")) {
        for (const Json& span : ArrayAt(line, "spans")) {
          if (StringAt(span, "type") != "table") continue;
          const std::string html = StringAt(span, "html");
          if (!html.empty()) item["table_body"] = FormatEmbeddedTableHtml(html, options);
          const std::string path = StringAt(span, "image_path");
          if (!path.empty()) item["img_path"] = JoinImagePath(options.image_dir, path);
        }
      }
    } else if (type == "table_caption" || type == "table_footnote") {
      item[type].push_back(MergeParaTextPro(sub, options));
    }
  }
  return item;
}

Json CodeItem(const Json& block, const MarkdownOptions& options) {
  Json item = Json::object();
  item["type"] = "code";
  item["sub_type"] = StringAt(block, "sub_type");
  item["code_caption"] = Json::array();
  for (const Json& sub : ArrayAt(block, "blocks")) {
    const std::string type = StringAt(sub, "type");
    if (type == "code_body") {
      item["code_body"] = RenderCodeBody(block, sub, options, nullptr);  // the last body wins
    } else if (type == "code_caption") {
      item["code_caption"].push_back(MergeParaTextPro(sub, options));
    }
  }
  return item;
}

// One block's item without bbox and page_idx; null for a type MinerU does not list.
Json BlockItem(const Json& block, const MarkdownOptions& options) {
  const std::string type = StringAt(block, "type");
  if (IsPlainTextType(type)) {
    return Json{{"type", type}, {"text", MergeParaTextPro(block, options)}};
  }
  if (type == "list") {
    Json items = Json::array();
    for (const Json& child : ArrayAt(block, "blocks")) {
      if (!child.is_object()) continue;
      std::string text = MergeParaTextPro(child, options, /*escape_text_block_prefix=*/false);
      if (!PythonStrip(text).empty()) items.push_back(std::move(text));  // blank items dropped
    }
    return Json{{"type", "list"}, {"sub_type", StringAt(block, "sub_type")}, {"list_items", items}};
  }
  if (type == "title") {
    Json item{{"type", "text"}, {"text", MergeParaTextPro(block, options)}};
    const int level = TitleLevel(block);
    if (level != 0) item["text_level"] = level;  // omitted when 0
    return item;
  }
  if (type == "interline_equation") {
    return Json{
        {"type", "equation"}, {"text", MergeParaTextPro(block, options)}, {"text_format", "latex"}};
  }
  if (type == "image" || type == "chart") return VisualItem(block, type, options);
  if (type == "table") return TableItem(block, options);
  if (type == "code") return CodeItem(block, options);
  return nullptr;
}

}  // namespace

Json MakeContentListPro(const Json& pdf_info, const MarkdownOptions& options) {
  return MakeContentListWith(pdf_info, options, BlockItem);
}

}  // namespace mineru::pipeline
