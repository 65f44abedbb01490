// SPDX-License-Identifier: Apache-2.0
#include "model/positions.h"

#include <algorithm>
#include <cmath>

namespace mineru::model {

Result<RopePositions> ComputeRopePositions(std::span<const int32_t> ids,
                                           std::span<const ImageGrid> grids,
                                           const ModelConfig& config) {
  const int64_t m = config.vision.spatial_merge_size;
  const auto image_token = static_cast<int32_t>(config.image_token_id);
  const auto video_token = static_cast<int32_t>(config.video_token_id);
  RopePositions out;
  out.positions.resize(ids.size());
  int64_t next = 0;
  size_t at = 0;
  auto text_until = [&](size_t end) {
    for (; at < end; ++at) {
      const auto p = static_cast<int32_t>(next++);
      out.positions[at] = {p, p, p};
    }
  };
  for (size_t image = 0; image < grids.size(); ++image) {
    const ImageGrid& g = grids[image];
    if (g.t <= 0 || g.h <= 0 || g.w <= 0 || g.h % m != 0 || g.w % m != 0) {
      return Fail(ErrorCode::kInvalidArgument,
                  "image {}: grid ({}, {}, {}) is not a positive multiple of the merge size {}",
                  image, g.t, g.h, g.w, m);
    }
    const int64_t lt = g.t, lh = g.h / m, lw = g.w / m;
    const int64_t count = lt * lh * lw;
    // transformers finds each image as the next image token at or after the cursor.
    const auto start = std::find(ids.begin() + static_cast<ptrdiff_t>(at), ids.end(), image_token);
    if (start == ids.end()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "{} images given but the prompt has image tokens for only {}", grids.size(),
                  image);
    }
    const size_t begin = static_cast<size_t>(start - ids.begin());
    if (begin + static_cast<size_t>(count) > ids.size() ||
        !std::all_of(start, start + count, [&](int32_t id) { return id == image_token; })) {
      return Fail(
          ErrorCode::kInvalidArgument,
          "image {} with grid ({}, {}, {}) needs {} consecutive image tokens at position {}", image,
          g.t, g.h, g.w, count, begin);
    }
    text_until(begin);
    const int64_t s = next;
    for (int64_t it = 0; it < lt; ++it) {
      for (int64_t ih = 0; ih < lh; ++ih) {
        for (int64_t iw = 0; iw < lw; ++iw) {
          out.positions[at++] = {static_cast<int32_t>(s + it), static_cast<int32_t>(s + ih),
                                 static_cast<int32_t>(s + iw)};
        }
      }
    }
    next = s + std::max({lt, lh, lw});
  }
  for (size_t i = at; i < ids.size(); ++i) {
    if (ids[i] == image_token) {
      return Fail(ErrorCode::kInvalidArgument,
                  "the prompt has more image tokens than the {} images given (position {})",
                  grids.size(), i);
    }
    if (ids[i] == video_token) {
      return Fail(ErrorCode::kUnsupported, "video tokens are not supported (position {})", i);
    }
  }
  text_until(ids.size());
  out.next_position = next;
  return out;
}

std::vector<float> RotaryInverseFrequencies(float theta, int dim) {
  // torch: 1.0 / (theta ** (arange(0, dim, 2).float() / dim)), all float32.
  std::vector<float> inv(static_cast<size_t>(dim / 2));
  for (int j = 0; j < dim / 2; ++j) {
    const float exponent = static_cast<float>(2 * j) / static_cast<float>(dim);
    inv[static_cast<size_t>(j)] = 1.0f / std::pow(theta, exponent);
  }
  return inv;
}

std::vector<float> VisionRotaryAngles(std::span<const ImageGrid> grids,
                                      const VisionConfig& config) {
  const int half = config.head_dim() / 2;  // angles per patch
  const std::vector<float> inv = RotaryInverseFrequencies(config.rope_theta, half);
  const int64_t m = config.spatial_merge_size;
  const int quarter = half / 2;
  std::vector<float> angles;
  for (const ImageGrid& g : grids) {
    for (int64_t t = 0; t < g.t; ++t) {
      for (int64_t bh = 0; bh < g.h / m; ++bh) {
        for (int64_t bw = 0; bw < g.w / m; ++bw) {
          for (int64_t dh = 0; dh < m; ++dh) {
            for (int64_t dw = 0; dw < m; ++dw) {
              const auto row = static_cast<float>(bh * m + dh);
              const auto col = static_cast<float>(bw * m + dw);
              for (int j = 0; j < quarter; ++j) angles.push_back(row * inv[static_cast<size_t>(j)]);
              for (int j = 0; j < quarter; ++j) angles.push_back(col * inv[static_cast<size_t>(j)]);
            }
          }
        }
      }
    }
  }
  return angles;
}

std::vector<float> MropeAngles(std::span<const std::array<int32_t, 3>> positions,
                               const TextConfig& config) {
  const int half = config.head_dim() / 2;
  const std::vector<float> inv = RotaryInverseFrequencies(config.rope_theta, config.head_dim());
  // axis_of[j]: which of (t, h, w) frequency j follows.
  std::vector<int> axis_of(static_cast<size_t>(half));
  int j = 0;
  for (int axis = 0; axis < 3; ++axis) {
    for (int k = 0; k < config.mrope_section[static_cast<size_t>(axis)]; ++k) {
      axis_of[static_cast<size_t>(j++)] = axis;
    }
  }
  std::vector<float> angles(positions.size() * static_cast<size_t>(half));
  for (size_t i = 0; i < positions.size(); ++i) {
    for (int f = 0; f < half; ++f) {
      const auto pos =
          static_cast<float>(positions[i][static_cast<size_t>(axis_of[static_cast<size_t>(f)])]);
      angles[i * static_cast<size_t>(half) + static_cast<size_t>(f)] =
          pos * inv[static_cast<size_t>(f)];
    }
  }
  return angles;
}

void CosSin(std::span<const float> angles, std::vector<float>& cos, std::vector<float>& sin) {
  cos.resize(angles.size());
  sin.resize(angles.size());
  for (size_t i = 0; i < angles.size(); ++i) {
    cos[i] = std::cos(angles[i]);
    sin[i] = std::sin(angles[i]);
  }
}

}  // namespace mineru::model
