// SPDX-License-Identifier: Apache-2.0
#include "pipeline/content_list.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/content_list_common.h"
#include "pipeline/middle_json.h"

namespace mineru::pipeline {
namespace {

// Every span of `span_type` in the sub-blocks of `body_type`, in order.
template <typename Fn>
void ForEachBodySpan(const Json& block, std::string_view body_type, std::string_view span_type,
                     Fn&& fn) {
  for (const Json& sub : ArrayAt(block, "blocks")) {
    if (StringAt(sub, "type") != body_type) continue;
    for (const Json& line : ArrayAt(sub, "lines")) {
      for (const Json& span : ArrayAt(line, "spans")) {
        if (StringAt(span, "type") == span_type) fn(span);
      }
    }
  }
}

// Texts of the sub-blocks of one type, in order (empty texts kept, as in MinerU).
Json SubBlockTexts(const Json& block, std::string_view type, const MarkdownOptions& options) {
  Json out = Json::array();
  for (const Json& sub : ArrayAt(block, "blocks")) {
    if (StringAt(sub, "type") == type) out.push_back(MergeParaText(sub, options));
  }
  return out;
}

bool IsPlainTextType(std::string_view type) {
  return type == "text" || type == "ref_text" || type == "phonetic" || type == "header" ||
         type == "footer" || type == "page_number" || type == "aside_text" ||
         type == "page_footnote";
}

// One block's item per the table of docs/MINERU.md 3.4, without bbox and page_idx; null for a type
// the table does not list.
Json BlockItem(const Json& block, const MarkdownOptions& options) {
  const std::string type = StringAt(block, "type");
  Json item = Json::object();
  if (IsPlainTextType(type)) {
    item["type"] = type;
    item["text"] = MergeParaText(block, options);
  } else if (type == "list") {
    item["type"] = "list";
    item["sub_type"] = StringAt(block, "sub_type");
    Json items = Json::array();
    for (const Json& child : ArrayAt(block, "blocks")) {
      if (!child.is_object()) continue;
      std::string text = MergeParaText(child, options);
      if (!text.empty()) items.push_back(std::move(text));  // empty items dropped
    }
    item["list_items"] = std::move(items);
  } else if (type == "title") {
    item["type"] = "text";
    item["text"] = MergeParaText(block, options);
    int level = TitleLevel(block);
    if (level != 0) item["text_level"] = level;  // omitted when 0
  } else if (type == "interline_equation") {
    item["type"] = "equation";
    item["text"] = MergeParaText(block, options);
    item["text_format"] = "latex";
  } else if (type == "image") {
    std::string img_path;
    ForEachBodySpan(block, "image_body", "image", [&](const Json& span) {
      std::string path = StringAt(span, "image_path");
      if (!path.empty()) img_path = JoinImagePath(options.image_dir, path);
    });
    item["type"] = "image";
    item["img_path"] = img_path;
    item["image_caption"] = SubBlockTexts(block, "image_caption", options);
    item["image_footnote"] = SubBlockTexts(block, "image_footnote", options);
  } else if (type == "table") {
    std::string img_path;
    std::string html;
    ForEachBodySpan(block, "table_body", "table", [&](const Json& span) {
      std::string span_html = StringAt(span, "html");
      if (!span_html.empty()) html = std::move(span_html);
      std::string path = StringAt(span, "image_path");
      if (!path.empty()) img_path = JoinImagePath(options.image_dir, path);
    });
    item["type"] = "table";
    item["img_path"] = img_path;
    item["table_caption"] = SubBlockTexts(block, "table_caption", options);
    item["table_footnote"] = SubBlockTexts(block, "table_footnote", options);
    if (!html.empty()) item["table_body"] = html;  // omitted when empty
  } else if (type == "code") {
    const std::string sub_type = StringAt(block, "sub_type");
    item["type"] = "code";
    item["sub_type"] = sub_type;
    item["code_caption"] = SubBlockTexts(block, "code_caption", options);
    for (const Json& sub : ArrayAt(block, "blocks")) {
      if (StringAt(sub, "type") == "code_body") item["code_body"] = MergeParaText(sub, options);
    }
    if (sub_type == "code") {
      std::string lang = StringAt(block, "guess_lang");
      item["guess_lang"] = lang.empty() ? "txt" : lang;
    }
  } else {
    return nullptr;
  }
  return item;
}

}  // namespace

Json MakeContentList(const Json& pdf_info, const MarkdownOptions& options) {
  return MakeContentListWith(pdf_info, options, BlockItem);
}

Json MakeModelJson(const std::vector<Json>& pages) {
  Json out = Json::array();
  for (const Json& page : pages) {
    Json blocks = Json::array();
    if (page.is_array()) {
      for (const Json& block : page) {
        if (!block.is_object()) continue;
        auto type = block.find("type");
        if (type == block.end() || !type->is_string()) continue;
        if (!NumbersAt<4>(block, "bbox")) continue;
        Json kept = Json::object();
        kept["type"] = *type;
        kept["bbox"] = *block.find("bbox");
        auto angle = block.find("angle");
        kept["angle"] = angle != block.end() && angle->is_number_integer() ? *angle : Json(nullptr);
        auto content = block.find("content");
        kept["content"] = content != block.end() && content->is_string() ? *content : Json(nullptr);
        blocks.push_back(std::move(kept));
      }
    }
    out.push_back(std::move(blocks));
  }
  return out;
}

}  // namespace mineru::pipeline
