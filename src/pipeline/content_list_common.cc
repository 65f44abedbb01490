// SPDX-License-Identifier: Apache-2.0
#include "pipeline/content_list_common.h"

#include <string_view>

namespace mineru::pipeline {
namespace {

// int(v * 1000 / size), Python's int() truncating toward zero; nullopt for a result outside int64
// (never for real pages).
std::optional<int64_t> Scale(double v, double size) {
  double scaled = std::trunc(v * 1000.0 / size);
  if (!std::isfinite(scaled) || std::fabs(scaled) > 9.0e18) return std::nullopt;
  return static_cast<int64_t>(scaled);
}

// get_data_from_spans: the first span of a type that carries body data decides.
std::optional<BodyData> BodyDataOfSpans(const Json& lines_owner) {
  for (const Json& line : ArrayAt(lines_owner, "lines")) {
    for (const Json& span : ArrayAt(line, "spans")) {
      const std::string type = StringAt(span, "type");
      if (type == "table") return BodyData{StringAt(span, "image_path"), StringAt(span, "html")};
      if (type == "chart" || type == "image" || type == "interline_equation") {
        return BodyData{StringAt(span, "image_path"), StringAt(span, "content")};
      }
      if (type == "text") return BodyData{"", StringAt(span, "content")};
    }
  }
  return std::nullopt;
}

bool IsBodyType(std::string_view type) {
  return type == "image_body" || type == "table_body" || type == "chart_body" ||
         type == "code_body";
}

}  // namespace

Json ScaledBbox(const Json& block, const std::optional<std::array<double, 2>>& page_size) {
  auto bbox = NumbersAt<4>(block, "bbox");
  if (!bbox || !page_size || (*page_size)[0] <= 0 || (*page_size)[1] <= 0) return nullptr;
  Json out = Json::array();
  for (size_t i = 0; i < 4; ++i) {
    auto v = Scale((*bbox)[i], (*page_size)[i % 2]);
    if (!v) return nullptr;
    out.push_back(*v);
  }
  return out;
}

int64_t PageIndexOf(const Json& page, size_t position) {
  if (page.is_object()) {
    auto it = page.find("page_idx");
    if (it != page.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return static_cast<int64_t>(position);
}

std::string JoinImagePath(const std::string& dir, const std::string& path) {
  return dir.empty() ? path : dir + "/" + path;
}

std::string MediaPath(const std::string& dir, const std::string& path) {
  return path.empty() ? std::string() : JoinImagePath(dir, path);
}

BodyData GetBodyData(const Json& block) {
  const Json& blocks = ArrayAt(block, "blocks");
  if (!blocks.empty()) {
    for (const Json& sub : blocks) {
      if (!IsBodyType(StringAt(sub, "type"))) continue;
      std::optional<BodyData> data = BodyDataOfSpans(sub);
      if (data && (!data->image_path.empty() || !data->content.empty())) return *data;
    }
    return {};
  }
  return BodyDataOfSpans(block).value_or(BodyData{});
}

Json MakeContentListWith(const Json& pdf_info, const MarkdownOptions& options,
                         const ContentItemFn& item_of) {
  Json out = Json::array();
  if (!pdf_info.is_array()) return out;
  MarkdownOptions text_options = options;
  text_options.formula_enabled = true;
  for (size_t page_pos = 0; page_pos < pdf_info.size(); ++page_pos) {
    const Json& page = pdf_info[page_pos];
    if (!page.is_object()) continue;
    const int64_t page_idx = PageIndexOf(page, page_pos);
    const auto page_size = NumbersAt<2>(page, "page_size");
    for (const char* key : {"para_blocks", "discarded_blocks"}) {
      for (const Json& block : ArrayAt(page, key)) {
        if (!block.is_object()) continue;
        Json item = item_of(block, text_options);
        if (item.is_null()) continue;
        Json bbox = ScaledBbox(block, page_size);
        if (!bbox.is_null()) item["bbox"] = std::move(bbox);
        item["page_idx"] = page_idx;
        out.push_back(std::move(item));
      }
    }
  }
  return out;
}

}  // namespace mineru::pipeline
