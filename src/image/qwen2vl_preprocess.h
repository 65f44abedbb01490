// SPDX-License-Identifier: Apache-2.0
// Qwen2-VL's image processor (Hugging Face transformers 4.45 Qwen2VLImageProcessor, the slow
// PIL path), bit for bit: smart_resize, Pillow bicubic resize of the uint8 image, rescale,
// normalize, and the patches in merge-window order. See docs/IMAGES.md for the numerics.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "image/image.h"

namespace mineru::image {

// Hugging Face's defaults (56 x 56 and 28 x 28 x 1280); MinerU's checkpoints set their own.
inline constexpr int64_t kDefaultMinPixels = 56 * 56;
inline constexpr int64_t kDefaultMaxPixels = 28 * 28 * 1280;
// Largest min_pixels / max_pixels a config may ask for: 64 Mi pixels already means 1.5 GiB of
// float32 pixel values. A range check on the file, not a tunable limit.
inline constexpr int64_t kMaxProcessorPixels = int64_t{1} << 26;
// Largest preprocessor_config.json read by default (the same bound as the checkpoint's JSON).
inline constexpr uint64_t kDefaultMaxProcessorConfigBytes = uint64_t{16} << 20;

struct ImageProcessorConfig {
  int64_t min_pixels = kDefaultMinPixels;
  int64_t max_pixels = kDefaultMaxPixels;
  int64_t patch_size = 14;
  int64_t temporal_patch_size = 2;
  int64_t merge_size = 2;
  std::array<double, 3> image_mean = {0.48145466, 0.4578275, 0.40821073};  // OpenAI CLIP
  std::array<double, 3> image_std = {0.26862954, 0.26130258, 0.27577711};
  double rescale_factor = 1.0 / 255.0;
  bool do_resize = true;
  bool do_rescale = true;
  bool do_normalize = true;

  // The side every resized image is a multiple of: patch_size * merge_size (28).
  int64_t factor() const { return patch_size * merge_size; }
  // Floats per row of pixel_values: 3 channels x temporal_patch_size x patch_size^2 (1176).
  int64_t patch_dim() const { return 3 * temporal_patch_size * patch_size * patch_size; }
};

// Reads a preprocessor_config.json object. min_pixels / max_pixels come from the top level
// (what transformers 4.45 uses), else from "size" ({"min_pixels", "max_pixels"} or the newer
// {"shortest_edge", "longest_edge"}), else the defaults. "resample" must be 3 (BICUBIC).
// Errors name the file (`where`) and the field.
Result<ImageProcessorConfig> ParseImageProcessorConfig(const Json& json, std::string_view where);
// model_dir/preprocessor_config.json.
Result<ImageProcessorConfig> ReadImageProcessorConfig(
    const std::string& model_dir, uint64_t max_json_bytes = kDefaultMaxProcessorConfigBytes);

struct ResizedSize {
  int64_t height = 0;
  int64_t width = 0;
};

// transformers' smart_resize in double precision: sides rounded half to even to multiples of
// `factor`, then scaled down to max_pixels (floor) or up to min_pixels (ceil). kInvalidArgument
// with transformers' own messages for a side below factor or an aspect ratio over 200, and for
// a result with a side of 0 (possible with a tiny max_pixels; transformers 4.45 would go on
// with an empty image).
Result<ResizedSize> SmartResize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels,
                                int64_t max_pixels);

// An image's patch grid: t temporal groups of h x w patches (in patches, before merging).
// The model layer's ImageGrid has the same three numbers.
struct PatchGrid {
  int64_t t = 1, h = 0, w = 0;
  int64_t patches() const { return t * h * w; }
};

struct PixelValues {
  std::vector<float> values;  // rows x cols, row-major
  int64_t rows = 0;           // patches: grid.t * grid.h * grid.w
  int64_t cols = 0;           // config.patch_dim()
  PatchGrid grid;
};

// The whole processor on one RGB image: smart_resize (if do_resize), Pillow bicubic resize,
// rescale and normalize (in float32 as numpy does), patches in merge-window order:
//   row ((bh * (gw / m) + bw) * m + dh) * m + dw holds patch (bh * m + dh, bw * m + dw);
//   column ((c * T + t) * P + py) * P + px holds channel c of pixel (py, px) of the patch,
//   the same for every one of the T frames (a still image is a T-frame clip).
Result<PixelValues> PreprocessImage(const RgbImage& image, const ImageProcessorConfig& config,
                                    ThreadPool* pool = nullptr);

// The last steps alone, on an image already resized to multiples of config.factor().
Result<PixelValues> Patchify(const RgbImage& resized, const ImageProcessorConfig& config,
                             ThreadPool* pool = nullptr);

}  // namespace mineru::image
