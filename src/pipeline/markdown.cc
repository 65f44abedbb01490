// SPDX-License-Identifier: Apache-2.0
#include "pipeline/markdown.h"

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/middle_json.h"
#include "pipeline/python_text.h"

namespace mineru::pipeline {
namespace {

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

// docs/MINERU.md 3.3: every span of `span_type` in the body sub-blocks `body_type`, for each one
// with a non-empty image_path, its link.
std::string BodyImageLinks(const Json& block, std::string_view body_type,
                           std::string_view span_type, const MarkdownOptions& options) {
  std::string out;
  for (const Json* body : SubBlocks(block, body_type)) {
    for (const Json& line : ArrayAt(*body, "lines")) {
      for (const Json& span : ArrayAt(line, "spans")) {
        if (StringAt(span, "type") != span_type) continue;
        std::string path = StringAt(span, "image_path");
        if (!path.empty()) out += MarkdownImageLink(options.image_dir, path);
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
          out += MarkdownImageLink(options.image_dir, path);
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
