// SPDX-License-Identifier: Apache-2.0
// Pieces that MinerU's content lists share (content_list.json of MinerU 2.7.6 and 3.4.4, and
// content_list_v2.json; mineru/backend/vlm/vlm_middle_json_mkcontent.py): the 0–1000 bbox, the
// page index, image paths and the body data of a group (get_body_data).
//
// Nothing here throws: fields of the wrong type or shape count as absent.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/json.h"
#include "pipeline/middle_json.h"
#include "pipeline/paragraph_text.h"

namespace mineru::pipeline {

// `n` finite numbers of the array at `key`, or nullopt.
template <size_t n>
std::optional<std::array<double, n>> NumbersAt(const Json& object, const char* key) {
  const Json& array = ArrayAt(object, key);
  if (array.size() != n) return std::nullopt;
  std::array<double, n> out{};
  for (size_t i = 0; i < n; ++i) {
    if (!array[i].is_number()) return std::nullopt;
    out[i] = array[i].get<double>();
    if (!std::isfinite(out[i])) return std::nullopt;
  }
  return out;
}

// The block's bbox in 0–1000 page units, int(v * 1000 / size) with Python's truncation toward
// zero, or null when the bbox or the page size is unusable (MinerU would fail on a zero page
// size; such an item simply has no bbox here).
Json ScaledBbox(const Json& block, const std::optional<std::array<double, 2>>& page_size);

// The page's page_idx as stored; its position in pdf_info when missing or not an integer.
int64_t PageIndexOf(const Json& page, size_t position);

// "<dir>/<path>" (MinerU's f"{img_bucket_path}/{image_path}", so "images/" for an empty path),
// or the bare path when dir is empty.
std::string JoinImagePath(const std::string& dir, const std::string& path);

// MinerU 3.4.4 _build_media_path: "" for an empty path, else JoinImagePath.
std::string MediaPath(const std::string& dir, const std::string& path);

// MinerU get_body_data: the image path and content of a block's body. For a block with
// sub-blocks, the first image_body / table_body / chart_body / code_body whose spans give
// something; for a block without, its own spans. Of the spans the first one of type table
// (image_path, html), chart / image / interline_equation (image_path, content) or text ("",
// content) decides.
struct BodyData {
  std::string image_path;
  std::string content;
};
BodyData GetBodyData(const Json& block);

// One item (null: none) of a block, as one MinerU generation writes it.
using ContentItemFn = std::function<Json(const Json& block, const MarkdownOptions& options)>;

// The walk both generations' content_list.json share: per page (not objects skipped) the
// para_blocks then the discarded blocks, each block's item with "bbox" (0-1000 of the page, when
// usable) and "page_idx" (as stored, else the page's position) added; text always renders
// formulas as LaTeX (merge_para_with_text's default).
Json MakeContentListWith(const Json& pdf_info, const MarkdownOptions& options,
                         const ContentItemFn& item);

}  // namespace mineru::pipeline
