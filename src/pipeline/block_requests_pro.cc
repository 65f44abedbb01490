// SPDX-License-Identifier: Apache-2.0
#include "pipeline/block_requests_pro.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "image/data_url.h"
#include "image/mineru_crops.h"
#include "image/table_mask.h"
#include "image/transform.h"
#include "pipeline/block_requests.h"
#include "pipeline/sampling_presets.h"

namespace mineru::pipeline {
namespace {

constexpr double kInsideRatio = 0.9;

double Area(const std::array<double, 4>& b) {
  return std::max(0.0, b[2] - b[0]) * std::max(0.0, b[3] - b[1]);
}

bool IsVisual(BlockType t) {
  return t == BlockType::kImage || t == BlockType::kChart || t == BlockType::kImageBlock;
}

// Step 5's size test for image and chart blocks.
bool Eligible(const ContentBlock& b) {
  const double w = b.bbox[2] - b.bbox[0];
  const double h = b.bbox[3] - b.bbox[1];
  return (w > 0.1 && h > 0.1) || w * h > 0.01;
}

}  // namespace

uint64_t TableImageTokenSeed(const ContentBlock& table, size_t index) {
  uint64_t h = 0xcbf29ce484222325ULL ^ index;
  for (double v : table.bbox) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ULL;
  }
  return h;
}

namespace {

void Warn(std::vector<std::string>* warnings, std::string message) {
  if (warnings != nullptr) warnings->push_back(std::move(message));
}

}  // namespace

std::string_view RecognitionPromptPro(BlockType type) {
  switch (type) {
    case BlockType::kTable:
      return kTablePrompt;
    case BlockType::kEquation:
      return kEquationPrompt;
    case BlockType::kImage:
    case BlockType::kChart:
      return kImageAnalysisPrompt;
    default:
      return kTextPrompt;
  }
}

engine::SamplingParams RecognitionSamplingPro(BlockType type) {
  return type == BlockType::kTable ? MineruTableSampling() : MineruDefaultSampling();
}

double CoverRatio(const std::array<double, 4>& inner, const std::array<double, 4>& outer) {
  const double area = Area(inner);
  if (area == 0) return 0.0;
  const double x1 = std::max(inner[0], outer[0]), y1 = std::max(inner[1], outer[1]);
  const double x2 = std::min(inner[2], outer[2]), y2 = std::min(inner[3], outer[3]);
  if (x2 <= x1 || y2 <= y1) return 0.0;
  return (x2 - x1) * (y2 - y1) / area;
}

std::vector<BlockRequest> PrepareProRequests(const image::RgbImage& page,
                                             std::vector<ContentBlock>& blocks,
                                             const ProRequestOptions& options,
                                             std::vector<std::string>* warnings, ThreadPool* pool) {
  // 1. Captions inside a visual block.
  {
    std::vector<ContentBlock> kept;
    kept.reserve(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      const bool internal =
          blocks[i].type == BlockType::kImageCaption &&
          std::any_of(blocks.begin(), blocks.end(), [&](const ContentBlock& v) {
            return IsVisual(v.type) && CoverRatio(blocks[i].bbox, v.bbox) >= kInsideRatio;
          });
      if (!internal) kept.push_back(std::move(blocks[i]));
    }
    blocks = std::move(kept);
  }
  // 2. Visuals inside an image_block.
  std::vector<bool> standalone(blocks.size(), true);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].type != BlockType::kImage && blocks[i].type != BlockType::kChart) continue;
    standalone[i] = std::none_of(blocks.begin(), blocks.end(), [&](const ContentBlock& v) {
      return v.type == BlockType::kImageBlock && CoverRatio(blocks[i].bbox, v.bbox) >= kInsideRatio;
    });
  }
  // 3. The skip set.
  auto skipped = [&](BlockType t) {
    if (t == BlockType::kList || t == BlockType::kEquationBlock || t == BlockType::kImageBlock) {
      return true;
    }
    if (!options.image_analysis && (t == BlockType::kImage || t == BlockType::kChart)) {
      return true;
    }
    return std::find(options.not_extract.begin(), options.not_extract.end(), t) !=
           options.not_extract.end();
  };
  // 4. Images inside tables (build_table_image_map): the best table per image.
  std::map<size_t, std::vector<size_t>> table_images;
  if (!skipped(BlockType::kTable)) {
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].type != BlockType::kImage) continue;
      std::optional<size_t> best;
      double best_ratio = kInsideRatio, best_area = 0;
      for (size_t t = 0; t < blocks.size(); ++t) {
        if (blocks[t].type != BlockType::kTable) continue;
        const double ratio = CoverRatio(blocks[i].bbox, blocks[t].bbox);
        if (ratio < kInsideRatio) continue;
        const double area = Area(blocks[t].bbox);
        if (!best || ratio > best_ratio || (ratio == best_ratio && area < best_area)) {
          best = t;
          best_ratio = ratio;
          best_area = area;
        }
      }
      if (best) table_images[*best].push_back(i);
    }
    for (auto& [table, images] : table_images) {
      std::stable_sort(images.begin(), images.end(), [&](size_t a, size_t b) {
        const auto& ba = blocks[a].bbox;
        const auto& bb = blocks[b].bbox;
        return ba[1] != bb[1] ? ba[1] < bb[1] : ba[0] < bb[0];
      });
      for (size_t i : images) blocks[i].absorbed_by_table = true;
    }
  }
  // 5-7. Requests.
  std::vector<BlockRequest> requests;
  const double width = static_cast<double>(page.width), height = static_cast<double>(page.height);
  for (size_t i = 0; i < blocks.size(); ++i) {
    ContentBlock& b = blocks[i];
    if (skipped(b.type) || b.absorbed_by_table) continue;
    if ((b.type == BlockType::kImage || b.type == BlockType::kChart) &&
        (!standalone[i] || !Eligible(b))) {
      continue;
    }
    const std::string what = fmt::format("block {} ({})", i, BlockTypeName(b.type));
    std::optional<image::RgbImage> ready;
    if (b.type == BlockType::kTable) {
      auto crop = image::CropRounded(page, b.bbox[0] * width, b.bbox[1] * height, b.bbox[2] * width,
                                     b.bbox[3] * height);
      if (!crop) {
        Warn(warnings, fmt::format("{}: crop failed: {}", what, crop.error().ToString()));
        continue;
      }
      if (crop->width < 1 || crop->height < 1) continue;
      std::vector<std::array<double, 4>> inner;
      for (size_t k : table_images[i]) inner.push_back(blocks[k].bbox);
      auto masked = image::MaskTableImages(page, *crop, b.bbox, b.angle.value_or(0), inner,
                                           TableImageTokenSeed(b, i));
      if (!masked) {
        Warn(warnings,
             fmt::format("{}: masking its images failed: {}", what, masked.error().ToString()));
        continue;
      }
      for (auto& [token, jpeg] : masked->images) {
        b.table_image_tokens.emplace_back(token, image::MakeDataUrl("image/jpeg", jpeg));
      }
      auto resized = image::ResizeByNeed(masked->image, {}, pool);
      if (!resized) {
        Warn(warnings, fmt::format("{}: resize failed: {}", what, resized.error().ToString()));
        continue;
      }
      ready = std::move(*resized);
    } else {
      auto crop = image::PrepareBlockImage(page, b.bbox, b.angle.value_or(0), {}, pool);
      if (!crop) {
        Warn(warnings, fmt::format("{}: crop failed: {}", what, crop.error().ToString()));
        continue;
      }
      if (!*crop) continue;
      ready = std::move(**crop);
    }
    requests.push_back(
        {i, RecognitionPromptPro(b.type), RecognitionSamplingPro(b.type), std::move(*ready)});
  }
  return requests;
}

}  // namespace mineru::pipeline
