// SPDX-License-Identifier: Apache-2.0
#include "pipeline/magic_model_pro.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "pipeline/caption_fallbacks.h"
#include "pipeline/code_language.h"
#include "pipeline/magic_model_common.h"
#include "pipeline/python_text.h"
#include "pipeline/visual_groups.h"
#include "text/utf8.h"

namespace mineru::pipeline {
namespace {

using magic::Block;
using magic::Box;
using magic::BoxJson;

// The types whose content becomes `text` spans under their own name.
bool KeepsNameWithTextSpan(BlockType t) {
  using enum BlockType;
  switch (t) {
    case kText:
    case kTitle:
    case kRefText:
    case kPhonetic:
    case kHeader:
    case kFooter:
    case kPageNumber:
    case kAsideText:
    case kPageFootnote:
    case kList:
      return true;
    default:
      return false;
  }
}

// re.sub(r"\n\s*", " ", content).strip(): every '\n' and the (Python) whitespace after it
// become one space.
std::string TitleNewlinesToSpaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '\n') {
      out += s[i++];
      continue;
    }
    ++i;
    while (i < s.size()) {
      const size_t n = PythonSpaceLength(s, i);
      if (n == 0) break;
      i += n;
    }
    out += ' ';
  }
  return std::string(PythonStrip(out));
}

struct Context {
  const ImagePathFn& image_path;
  const InlineImageFn& inline_image;
  std::string Path(std::string_view type, const Box& bbox) const {
    return image_path ? image_path(type, bbox) : std::string();
  }
};

// A visual body's span: {"bbox", "type", "image_path"} plus `content`/`html`.
Json VisualSpan(const Box& bbox, std::string_view span_type, const Context& ctx) {
  return Json{
      {"bbox", BoxJson(bbox)}, {"type", span_type}, {"image_path", ctx.Path(span_type, bbox)}};
}

// The text path (text-like types, code, and the types MinerU does not map): clean_content,
// the title rule, then the inline-equation split with `plain_type` for unsplit content.
Json TextPathSpans(const Box& bbox, BlockType type, std::string_view content,
                   std::string_view plain_type, bool* split) {
  std::string cleaned = content.empty() ? std::string() : magic::CleanContent(content);
  if (type == BlockType::kTitle && !cleaned.empty()) cleaned = TitleNewlinesToSpaces(cleaned);
  return magic::InlineSpans(bbox, cleaned, plain_type, split);
}

// Types, spans and block fields for one client block; nullopt for an invalid box.
std::optional<Block> ConvertBlock(const ContentBlock& cb, int index, int width, int height,
                                  const Context& ctx, std::vector<std::string>* warnings) {
  std::optional<Block> shell = magic::BlockShell(cb.bbox, cb.angle, index, width, height, warnings);
  if (!shell) return std::nullopt;
  Block& b = *shell;
  b.fields = Json::object();
  // Python strings are Unicode: ill-formed UTF-8 from the model reads as U+FFFD, which also
  // keeps every string of the page serialisable.
  const std::optional<std::string> content =
      cb.content ? std::optional<std::string>(text::RepairUtf8(*cb.content)) : std::nullopt;
  const std::string_view text = content ? std::string_view(*content) : std::string_view();
  bool split = false;
  using enum BlockType;
  switch (cb.type) {
    case kImageCaption:
    case kTableCaption:
    case kCodeCaption:
      b.type = "caption";
      b.spans = TextPathSpans(b.bbox, cb.type, text, "text", &split);
      break;
    case kImageFootnote:
    case kTableFootnote:
      b.type = "footnote";
      b.spans = TextPathSpans(b.bbox, cb.type, text, "text", &split);
      break;
    case kImage:
    case kChart: {
      const std::string_view span_type = cb.type == kImage ? "image" : "chart";
      b.type = cb.type == kImage ? "image_body" : "chart_body";
      Json span = VisualSpan(b.bbox, span_type, ctx);
      if (content) span["content"] = *content;
      b.spans.push_back(std::move(span));
      if (cb.sub_type && !cb.sub_type->empty())
        b.fields["sub_type"] = text::RepairUtf8(*cb.sub_type);
      break;
    }
    case kImageBlock:
      b.type = "image_block_body";
      b.spans.push_back(VisualSpan(b.bbox, "image", ctx));
      break;
    case kTable: {
      b.type = "table_body";
      Json span = VisualSpan(b.bbox, "table", ctx);
      span["html"] = RewriteInlineTableImages(text, ctx.inline_image);
      b.spans.push_back(std::move(span));
      if (cb.cell_merge) b.fields["cell_merge"] = *cb.cell_merge;
      break;
    }
    case kCode:
    case kAlgorithm: {
      b.type = "code_body";
      const std::string code = magic::CodeContentClean(text);
      const std::string lang = GuessCodeLanguage(code);
      b.spans = TextPathSpans(b.bbox, cb.type, code, "text", &split);
      std::string sub_type(BlockTypeName(cb.type));
      if (split && cb.type == kCode) sub_type = "algorithm";
      b.line_extra = Json{{"type", sub_type}, {"guess_lang", lang}};
      break;
    }
    case kEquation: {
      b.type = "interline_equation";
      Json span = VisualSpan(b.bbox, "interline_equation", ctx);
      span["content"] = magic::IsolatedFormulaClean(text);
      b.spans.push_back(std::move(span));
      break;
    }
    default:
      b.type = BlockTypeName(cb.type);
      b.spans = TextPathSpans(b.bbox, cb.type, text,
                              KeepsNameWithTextSpan(cb.type) ? "text" : "unknown", &split);
      if (cb.type == kText && cb.merge_prev) b.fields["merge_prev"] = *cb.merge_prev;
      break;
  }
  return shell;
}

bool IsDiscardedType(std::string_view t) {
  return t == "header" || t == "footer" || t == "page_number" || t == "aside_text" ||
         t == "page_footnote";
}

// Code groups take sub_type (and, for code, guess_lang) from the body's line extra, which is
// then removed.
void FinishCodeGroup(magic::VisualGroup* g) {
  for (Block& m : g->blocks) {
    if (m.type != "code_body" || !m.line_extra.is_object()) continue;
    g->fields["sub_type"] = m.line_extra["type"];
    if (g->fields["sub_type"] == "code") g->fields["guess_lang"] = m.line_extra["guess_lang"];
    m.line_extra = Json();
  }
}

Json GroupJson(const magic::VisualGroup& g) {
  Json members = Json::array();
  for (const Block& m : g.blocks) members.push_back(magic::BlockJson(m));
  Json j = {{"type", g.type},
            {"bbox", BoxJson(g.body.bbox)},
            {"blocks", std::move(members)},
            {"index", g.body.index}};
  for (auto it = g.fields.begin(); it != g.fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

}  // namespace

Json MiddlePagePro(const std::vector<ContentBlock>& blocks, int page_idx, int width_pt,
                   int height_pt, const ImagePathFn& image_path, const InlineImageFn& inline_image,
                   std::vector<std::string>* warnings) {
  const Context ctx{image_path, inline_image};
  std::vector<Block> converted;
  converted.reserve(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::optional<Block> b =
        ConvertBlock(blocks[i], static_cast<int>(i), width_pt, height_pt, ctx, warnings);
    if (b) converted.push_back(std::move(*b));
  }
  magic::ApplyCaptionFallbacks(&converted);

  // Visual bodies and generic children are grouped below; other MinerU types are routed here,
  // the rest (doc_title, paragraph_title, formula_number, index, ...) is dropped.
  std::vector<Block> equations, texts, titles, ref_texts, phonetics, discarded, lists;
  for (const Block& b : converted) {
    if (b.type == "interline_equation") {
      equations.push_back(b);
    } else if (b.type == "text") {
      texts.push_back(b);
    } else if (b.type == "title") {
      titles.push_back(b);
    } else if (b.type == "ref_text") {
      ref_texts.push_back(b);
    } else if (b.type == "phonetic") {
      phonetics.push_back(b);
    } else if (IsDiscardedType(b.type)) {
      discarded.push_back(b);
    } else if (b.type == "list") {
      lists.push_back(b);
    }
  }
  const std::vector<magic::ListGroup> list_groups = magic::FixLists(lists, &texts, &ref_texts);
  std::set<int> filled_lists;
  for (const magic::ListGroup& l : list_groups) filled_lists.insert(l.list.index);

  magic::VisualRegrouping visual = magic::RegroupVisualBlocks(converted, filled_lists);
  for (magic::VisualGroup& g : visual.groups) {
    if (g.type == "code") FinishCodeGroup(&g);
  }
  for (Block& b : visual.unmatched) {
    b.type = "text";
    texts.push_back(std::move(b));
  }

  // Indices are unique, so sorting by index alone fixes the order.
  std::vector<std::pair<int, Json>> preproc;
  for (const magic::VisualGroup& g : visual.groups)
    preproc.emplace_back(g.body.index, GroupJson(g));
  for (const auto* simple : {&ref_texts, &phonetics, &titles, &texts, &equations}) {
    for (const Block& b : *simple) preproc.emplace_back(b.index, magic::BlockJson(b));
  }
  for (const magic::ListGroup& l : list_groups) {
    preproc.emplace_back(l.list.index, magic::ListJson(l));
  }
  std::stable_sort(preproc.begin(), preproc.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  Json preproc_blocks = Json::array();
  for (auto& [index, block] : preproc) preproc_blocks.push_back(std::move(block));
  Json discarded_blocks = Json::array();
  for (const Block& b : discarded) discarded_blocks.push_back(magic::BlockJson(b));
  return Json{{"preproc_blocks", std::move(preproc_blocks)},
              {"discarded_blocks", std::move(discarded_blocks)},
              {"page_size", Json::array({width_pt, height_pt})},
              {"page_idx", page_idx}};
}

}  // namespace mineru::pipeline
