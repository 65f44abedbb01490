// SPDX-License-Identifier: Apache-2.0
// mineru-cpp preprocess IMAGE --model DIR --dump OUT/: what the model's image processor makes of
// one image (decode, EXIF orientation, RGB, smart_resize, bicubic resize, rescale, normalize,
// patches), written as pixel_values.npy (float32 [patches, 3 * T * P * P]) and grid_thw.npy
// (int64 [1, 3]): the inputs debug-forward takes.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "apps/commands.h"
#include "base/npy.h"
#include "base/thread_pool.h"
#include "image/decode.h"
#include "image/mineru_crops.h"
#include "image/qwen2vl_preprocess.h"

namespace mineru::apps {
namespace {

struct PreprocessOptions {
  std::string image;
  std::string model_dir;
  std::string dump_dir;
  bool layout = false;
  bool no_exif_transpose = false;
  image::DecodeLimits limits;
  uint64_t max_json_bytes = image::kDefaultMaxProcessorConfigBytes;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int RunPreprocess(const PreprocessOptions& o, int threads) {
  namespace fs = std::filesystem;
  auto config = image::ReadImageProcessorConfig(o.model_dir, o.max_json_bytes);
  if (!config) return ReportError(config.error());
  image::DecodeOptions decode;
  decode.limits = o.limits;
  decode.apply_exif_orientation = !o.no_exif_transpose;
  const auto start = std::chrono::steady_clock::now();
  auto decoded = image::DecodeImageFile(o.image, decode);
  if (!decoded) return ReportError(decoded.error());
  const double decode_s = Seconds(start);
  ThreadPool pool(threads);
  const int64_t width = decoded->image.width, height = decoded->image.height;
  image::RgbImage rgb = std::move(decoded->image);
  if (o.layout) {
    auto layout = image::PrepareLayoutImage(rgb, &pool);
    if (!layout) return ReportError(WithContext(layout.error(), o.image));
    rgb = std::move(*layout);
  }
  const auto process_start = std::chrono::steady_clock::now();
  auto pixels = image::PreprocessImage(rgb, *config, &pool);
  if (!pixels) return ReportError(WithContext(pixels.error(), o.image));
  const double process_s = Seconds(process_start);

  std::error_code ec;
  fs::create_directories(o.dump_dir, ec);
  if (ec) {
    return ReportError(Error{ErrorCode::kIo, o.dump_dir + ": cannot create: " + ec.message()});
  }
  const std::vector<int64_t> shape = {pixels->rows, pixels->cols};
  const std::vector<int64_t> grid = {pixels->grid.t, pixels->grid.h, pixels->grid.w};
  const std::vector<int64_t> grid_shape = {1, 3};
  const std::string values_path = (fs::path(o.dump_dir) / "pixel_values.npy").string();
  const std::string grid_path = (fs::path(o.dump_dir) / "grid_thw.npy").string();
  if (auto s = WriteNpy(values_path, DType::kF32, shape, pixels->values.data()); !s) {
    return ReportError(s.error());
  }
  if (auto s = WriteNpy(grid_path, DType::kI64, grid_shape, grid.data()); !s) {
    return ReportError(s.error());
  }
  const int64_t merge = config->merge_size * config->merge_size;
  std::string note;
  if (decoded->orientation != 1) {
    note += ", EXIF orientation " + std::to_string(decoded->orientation) + " applied";
  }
  if (o.layout) note += ", resized to the 1036 x 1036 layout image";
  std::printf("image:        %s (%s, mode %s, %lld x %lld%s)\n", o.image.c_str(),
              std::string(image::FormatName(decoded->format)).c_str(), decoded->source_mode.c_str(),
              static_cast<long long>(width), static_cast<long long>(height), note.c_str());
  std::printf(
      "resized:      %lld x %lld (h x w), grid (t, h, w) = (%lld, %lld, %lld), "
      "%lld image tokens\n",
      static_cast<long long>(pixels->grid.h * config->patch_size),
      static_cast<long long>(pixels->grid.w * config->patch_size), static_cast<long long>(grid[0]),
      static_cast<long long>(grid[1]), static_cast<long long>(grid[2]),
      static_cast<long long>(pixels->grid.patches() / merge));
  std::printf("pixel_values: [%lld, %lld] float32 -> %s\n", static_cast<long long>(shape[0]),
              static_cast<long long>(shape[1]), values_path.c_str());
  std::printf("grid_thw:     [1, 3] int64 -> %s\n", grid_path.c_str());
  std::printf("time:         decode %.1f ms, preprocess %.1f ms (%d threads)\n", decode_s * 1e3,
              process_s * 1e3, threads);
  return 0;
}

}  // namespace

void AddPreprocessCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "preprocess",
      "Run the checkpoint's image processor on one image; dump pixel_values.npy and grid_thw.npy");
  auto o = std::make_shared<PreprocessOptions>();
  cmd->add_option("image", o->image, "PNG, JPEG, WebP, TIFF, BMP or GIF file")->required();
  cmd->add_option("--model", o->model_dir, "Checkpoint directory (preprocessor_config.json)")
      ->required();
  cmd->add_option("--dump", o->dump_dir, "Output directory")->required();
  cmd->add_flag("--layout", o->layout,
                "First resize to 1036 x 1036 as MinerU does for layout detection");
  cmd->add_flag("--no-exif-transpose", o->no_exif_transpose,
                "Keep the pixels as stored, ignoring the EXIF orientation");
  cmd->add_option("--max-image-bytes", o->limits.max_bytes, "Largest image file accepted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-image-width", o->limits.max_width, "Widest image accepted (pixels)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31))
      ->capture_default_str();
  cmd->add_option("--max-image-height", o->limits.max_height, "Tallest image accepted (pixels)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31))
      ->capture_default_str();
  cmd->add_option("--max-image-pixels", o->limits.max_pixels,
                  "Most pixels (width x height) accepted")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--max-jpeg-scans", o->limits.max_jpeg_scans,
                  "Most scans accepted in one (progressive) JPEG")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-image-metadata-bytes", o->limits.max_metadata_bytes,
                  "Largest metadata chunk accepted (PNG ancillary chunks, WebP EXIF)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-json-bytes", o->max_json_bytes,
                  "Largest preprocessor_config.json accepted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback(
      [o, &global, exit_code] { *exit_code = RunPreprocess(*o, ResolveThreads(global)); });
}

}  // namespace mineru::apps
