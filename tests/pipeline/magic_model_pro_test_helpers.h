// SPDX-License-Identifier: Apache-2.0
// Builders for the MinerU 3.4.4 MagicModel tests: client blocks in exact page fractions and the
// middle.json objects expected of them. Pages are 1024 points square and boxes k/1024, so
// int(x * W) gives back k exactly.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "pipeline/content_block.h"
#include "pipeline/magic_model_pro.h"

namespace mineru::pipeline::pro_test {

using Pts = std::array<int, 4>;
constexpr int kPage = 1024;

inline ContentBlock Blk(BlockType type, Pts p, std::optional<std::string> content = std::nullopt) {
  ContentBlock b;
  b.type = type;
  for (int i = 0; i < 4; ++i) b.bbox[i] = p[i] / static_cast<double>(kPage);
  b.content = std::move(content);
  b.angle = 0;
  return b;
}

inline Json J(Pts p) { return Json::array({p[0], p[1], p[2], p[3]}); }

inline Json Span(Pts p, std::string_view content, std::string_view type = "text") {
  return Json{{"bbox", J(p)}, {"type", type}, {"content", content}};
}

// A one-line block with extra top-level fields.
inline Json Simple(std::string_view type, Pts p, Json spans, int index,
                   const Json& fields = Json::object()) {
  Json j = {{"bbox", J(p)},
            {"type", type},
            {"angle", 0},
            {"lines", Json::array({Json{{"bbox", J(p)}, {"spans", std::move(spans)}}})},
            {"index", index}};
  for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

inline Json Text(Pts p, std::string_view content, int index, std::string_view type = "text",
                 const Json& fields = Json::object()) {
  return Simple(type, p, Json::array({Span(p, content)}), index, fields);
}

// The crop name the tests' ImagePathFn gives: "<span type>_<y0>.jpg".
inline std::string PathOf(std::string_view type, const std::array<int, 4>& b) {
  return std::string(type) + "_" + std::to_string(b[1]) + ".jpg";
}

// A visual body with one span {bbox, type, image_path} plus `span_fields`.
inline Json Body(std::string_view body_type, std::string_view span_type, Pts p, int index,
                 const Json& span_fields = Json::object(), const Json& fields = Json::object()) {
  Json span = {{"bbox", J(p)}, {"type", span_type}, {"image_path", PathOf(span_type, p)}};
  for (auto it = span_fields.begin(); it != span_fields.end(); ++it) span[it.key()] = it.value();
  return Simple(body_type, p, Json::array({span}), index, fields);
}

inline Json Group(std::string_view type, Pts body, int index, Json blocks,
                  const Json& fields = Json::object()) {
  Json j = {{"type", type}, {"bbox", J(body)}, {"blocks", std::move(blocks)}, {"index", index}};
  for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

inline Json Page(Json preproc, Json discarded = Json::array(), int width = kPage,
                 int height = kPage, int page_idx = 0) {
  return Json{{"preproc_blocks", std::move(preproc)},
              {"discarded_blocks", std::move(discarded)},
              {"page_size", Json::array({width, height})},
              {"page_idx", page_idx}};
}

inline Json Convert(const std::vector<ContentBlock>& blocks,
                    std::vector<std::string>* warnings = nullptr,
                    const InlineImageFn& inline_image = {}) {
  return MiddlePagePro(blocks, 0, kPage, kPage, PathOf, inline_image, warnings);
}

inline void ExpectJson(const Json& actual, const Json& expected) {
  if (actual == expected) return;
  ADD_FAILURE() << "JSON patch expected -> actual:\n"
                << Json::diff(expected, actual).dump(1) << "\nactual:\n"
                << actual.dump(1);
}

}  // namespace mineru::pipeline::pro_test
