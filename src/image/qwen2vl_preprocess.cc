// SPDX-License-Identifier: Apache-2.0
#include "image/qwen2vl_preprocess.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "image/resize.h"

namespace mineru::image {
namespace {

Result<std::array<double, 3>> ReadTriple(const Json& json, std::string_view key,
                                         std::string_view where, std::array<double, 3> fallback) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) return fallback;
  // transformers accepts one number for all channels, or one per channel.
  if (it->is_number()) {
    const double v = it->get<double>();
    return std::array<double, 3>{v, v, v};
  }
  if (!it->is_array() || it->size() != 3) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' must be a number or a list of 3 numbers, got {}",
                where, key, it->dump());
  }
  std::array<double, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    if (!(*it)[i].is_number()) {
      return Fail(ErrorCode::kCorrupt, "{}: '{}' must hold numbers, got {}", where, key,
                  it->dump());
    }
    out[i] = (*it)[i].get<double>();
    if (!std::isfinite(out[i])) {
      return Fail(ErrorCode::kCorrupt, "{}: '{}' must be finite", where, key);
    }
  }
  return out;
}

Status CheckRange(std::string_view where, std::string_view key, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' = {} outside [{}, {}]", where, key, v, lo, hi);
  }
  return OkStatus();
}

}  // namespace

Result<ImageProcessorConfig> ParseImageProcessorConfig(const Json& json, std::string_view where) {
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected a JSON object", where);
  ImageProcessorConfig c;
  MINERU_ASSIGN_OR_RETURN(auto type, FindString(json, "image_processor_type", where));
  if (type && type->find("Qwen2VLImageProcessor") == std::string::npos) {
    return Fail(ErrorCode::kUnsupported,
                "{}: image_processor_type '{}' is not Qwen2VLImageProcessor", where, *type);
  }
  auto read_int = [&](std::string_view key, int64_t& field, const Json& obj) -> Status {
    MINERU_ASSIGN_OR_RETURN(auto v, FindInt(obj, key, where));
    if (v) field = *v;
    return OkStatus();
  };
  auto read_bool = [&](std::string_view key, bool& field) -> Status {
    MINERU_ASSIGN_OR_RETURN(auto v, FindBool(json, key, where));
    if (v) field = *v;
    return OkStatus();
  };
  // Pixel bounds: "size" first, the top-level keys override it (as transformers does).
  const auto size = json.find("size");
  if (size != json.end() && size->is_object()) {
    MINERU_RETURN_IF_ERROR(read_int("shortest_edge", c.min_pixels, *size));
    MINERU_RETURN_IF_ERROR(read_int("longest_edge", c.max_pixels, *size));
    MINERU_RETURN_IF_ERROR(read_int("min_pixels", c.min_pixels, *size));
    MINERU_RETURN_IF_ERROR(read_int("max_pixels", c.max_pixels, *size));
  } else if (size != json.end() && !size->is_null()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'size' must be an object, got {}", where, size->dump());
  }
  MINERU_RETURN_IF_ERROR(read_int("min_pixels", c.min_pixels, json));
  MINERU_RETURN_IF_ERROR(read_int("max_pixels", c.max_pixels, json));
  MINERU_RETURN_IF_ERROR(read_int("patch_size", c.patch_size, json));
  MINERU_RETURN_IF_ERROR(read_int("temporal_patch_size", c.temporal_patch_size, json));
  MINERU_RETURN_IF_ERROR(read_int("merge_size", c.merge_size, json));
  int64_t resample = 3;
  MINERU_RETURN_IF_ERROR(read_int("resample", resample, json));
  MINERU_RETURN_IF_ERROR(read_bool("do_resize", c.do_resize));
  MINERU_RETURN_IF_ERROR(read_bool("do_rescale", c.do_rescale));
  MINERU_RETURN_IF_ERROR(read_bool("do_normalize", c.do_normalize));
  // do_convert_rgb is type-checked only: every decoded image is RGB already.
  bool convert_rgb = true;
  MINERU_RETURN_IF_ERROR(read_bool("do_convert_rgb", convert_rgb));
  MINERU_ASSIGN_OR_RETURN(auto rescale, FindNumber(json, "rescale_factor", where));
  if (rescale) c.rescale_factor = *rescale;
  MINERU_ASSIGN_OR_RETURN(c.image_mean, ReadTriple(json, "image_mean", where, c.image_mean));
  MINERU_ASSIGN_OR_RETURN(c.image_std, ReadTriple(json, "image_std", where, c.image_std));

  if (resample != 3) {
    return Fail(ErrorCode::kUnsupported, "{}: 'resample' = {}: only 3 (BICUBIC) is implemented",
                where, resample);
  }
  MINERU_RETURN_IF_ERROR(CheckRange(where, "patch_size", c.patch_size, 1, 1024));
  MINERU_RETURN_IF_ERROR(CheckRange(where, "temporal_patch_size", c.temporal_patch_size, 1, 64));
  MINERU_RETURN_IF_ERROR(CheckRange(where, "merge_size", c.merge_size, 1, 64));
  MINERU_RETURN_IF_ERROR(CheckRange(where, "min_pixels", c.min_pixels, 0, kMaxProcessorPixels));
  MINERU_RETURN_IF_ERROR(CheckRange(where, "max_pixels", c.max_pixels, 1, kMaxProcessorPixels));
  if (!std::isfinite(c.rescale_factor) || c.rescale_factor <= 0) {
    return Fail(ErrorCode::kCorrupt, "{}: 'rescale_factor' must be positive and finite", where);
  }
  for (double s : c.image_std) {
    if (s == 0) return Fail(ErrorCode::kCorrupt, "{}: 'image_std' must not be 0", where);
  }
  return c;
}

Result<ImageProcessorConfig> ReadImageProcessorConfig(const std::string& model_dir,
                                                      uint64_t max_json_bytes) {
  const std::string path = (std::filesystem::path(model_dir) / "preprocessor_config.json").string();
  MINERU_ASSIGN_OR_RETURN(Json json, ReadJsonFile(path, max_json_bytes));
  return ParseImageProcessorConfig(json, path);
}

Result<ResizedSize> SmartResize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels,
                                int64_t max_pixels) {
  if (height < factor || width < factor) {
    return Fail(ErrorCode::kInvalidArgument, "height:{} or width:{} must be larger than factor:{}",
                height, width, factor);
  }
  const double ratio =
      static_cast<double>(std::max(height, width)) / static_cast<double>(std::min(height, width));
  if (ratio > 200) {
    return Fail(ErrorCode::kInvalidArgument,
                "absolute aspect ratio must be smaller than 200, got {}", ratio);
  }
  const auto f = static_cast<double>(factor);
  // Python's round(): half to even, which nearbyint does in the default rounding mode.
  int64_t h_bar = static_cast<int64_t>(std::nearbyint(static_cast<double>(height) / f)) * factor;
  int64_t w_bar = static_cast<int64_t>(std::nearbyint(static_cast<double>(width) / f)) * factor;
  // Products of sides below 2^31 are exact in double (all below 2^53), as Python's are.
  const double pixels = static_cast<double>(height) * static_cast<double>(width);
  if (h_bar * w_bar > max_pixels) {
    const double beta = std::sqrt(pixels / static_cast<double>(max_pixels));
    h_bar = static_cast<int64_t>(std::floor(static_cast<double>(height) / beta / f)) * factor;
    w_bar = static_cast<int64_t>(std::floor(static_cast<double>(width) / beta / f)) * factor;
  } else if (h_bar * w_bar < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / pixels);
    h_bar = static_cast<int64_t>(std::ceil(static_cast<double>(height) * beta / f)) * factor;
    w_bar = static_cast<int64_t>(std::ceil(static_cast<double>(width) * beta / f)) * factor;
  }
  if (h_bar < factor || w_bar < factor) {
    return Fail(ErrorCode::kInvalidArgument,
                "smart_resize: {}x{} (h x w) shrinks to {}x{} with max_pixels {}: no {}-pixel "
                "block left",
                height, width, h_bar, w_bar, max_pixels, factor);
  }
  return ResizedSize{h_bar, w_bar};
}

Result<PixelValues> Patchify(const RgbImage& resized, const ImageProcessorConfig& config,
                             ThreadPool* pool) {
  const int64_t p = config.patch_size, m = config.merge_size, t = config.temporal_patch_size;
  const int64_t factor = config.factor();
  if (resized.empty() || resized.height % factor != 0 || resized.width % factor != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "image of {}x{} (h x w) is not a multiple of {} on both sides", resized.height,
                resized.width, factor);
  }
  // uint8 -> float32 for each channel, exactly as numpy computes it: rescale in double, cast to
  // float32, then (v - mean) / std in float32 with mean and std rounded to float32.
  std::array<std::array<float, 256>, 3> lut{};
  for (int c = 0; c < 3; ++c) {
    const auto mean = static_cast<float>(config.image_mean[c]);
    const auto sd = static_cast<float>(config.image_std[c]);
    for (int v = 0; v < 256; ++v) {
      float x = config.do_rescale
                    ? static_cast<float>(static_cast<double>(v) * config.rescale_factor)
                    : static_cast<float>(v);
      if (config.do_normalize) x = (x - mean) / sd;
      lut[c][v] = x;
    }
  }
  PixelValues out;
  out.grid = PatchGrid{1, resized.height / p, resized.width / p};
  out.rows = out.grid.patches();
  out.cols = config.patch_dim();
  out.values.resize(static_cast<size_t>(out.rows * out.cols));
  const int64_t gw = out.grid.w, blocks_w = gw / m, blocks_h = out.grid.h / m;
  const int64_t frame = p * p;  // floats per channel and frame
  // One task per row of merge windows.
  auto fill = [&](size_t bh, int) {
    for (int64_t bw = 0; bw < blocks_w; ++bw) {
      for (int64_t dh = 0; dh < m; ++dh) {
        for (int64_t dw = 0; dw < m; ++dw) {
          const int64_t row = ((static_cast<int64_t>(bh) * blocks_w + bw) * m + dh) * m + dw;
          const int64_t py0 = (static_cast<int64_t>(bh) * m + dh) * p, px0 = (bw * m + dw) * p;
          float* dst = out.values.data() + row * out.cols;
          for (int64_t c = 0; c < 3; ++c) {
            float* plane = dst + c * t * frame;
            for (int64_t py = 0; py < p; ++py) {
              const uint8_t* src = resized.row(py0 + py) + px0 * 3 + c;
              for (int64_t px = 0; px < p; ++px) plane[py * p + px] = lut[c][src[px * 3]];
            }
            for (int64_t f = 1; f < t; ++f) {
              std::copy(plane, plane + frame, plane + f * frame);
            }
          }
        }
      }
    }
  };
  if (pool != nullptr) {
    pool->ParallelFor(static_cast<size_t>(blocks_h), fill);
  } else {
    for (int64_t bh = 0; bh < blocks_h; ++bh) fill(static_cast<size_t>(bh), 0);
  }
  return out;
}

Result<PixelValues> PreprocessImage(const RgbImage& image, const ImageProcessorConfig& config,
                                    ThreadPool* pool) {
  if (!config.do_resize) return Patchify(image, config, pool);
  MINERU_ASSIGN_OR_RETURN(const ResizedSize size,
                          SmartResize(image.height, image.width, config.factor(), config.min_pixels,
                                      config.max_pixels));
  if (size.height == image.height && size.width == image.width) {
    return Patchify(image, config, pool);
  }
  MINERU_ASSIGN_OR_RETURN(const RgbImage resized,
                          ResizeBicubic(image, size.width, size.height, pool));
  return Patchify(resized, config, pool);
}

}  // namespace mineru::image
