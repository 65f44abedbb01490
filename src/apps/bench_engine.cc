// SPDX-License-Identifier: Apache-2.0
#include "apps/bench_engine.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <random>

#include "base/process_memory.h"
#include "engine/engine.h"

namespace mineru::apps {
namespace {

using engine::Clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A text prompt of random ordinary tokens.
std::vector<int32_t> RandomPrompt(std::mt19937& rng, int length, int64_t vocab) {
  std::uniform_int_distribution<int32_t> token(
      0, static_cast<int32_t>(std::min<int64_t>(vocab, 151643) - 1));
  std::vector<int32_t> ids(static_cast<size_t>(length));
  for (int32_t& id : ids) id = token(rng);
  return ids;
}

// The prompt of one image request: vision start, t*h*w/merge^2 image pads, vision end, then
// a few text tokens (MinerU's "\nLayout Detection:" is about that long).
engine::Request ImageRequest(const model::ModelConfig& config, const model::ImageGrid& grid,
                             std::mt19937& rng, int64_t tokens) {
  engine::Request request;
  const int64_t merge = config.vision.spatial_merge_size;
  request.prompt_ids = RandomPrompt(rng, 8, config.text.vocab_size);
  request.prompt_ids.push_back(static_cast<int32_t>(config.vision_start_token_id));
  request.prompt_ids.insert(request.prompt_ids.end(),
                            static_cast<size_t>(grid.patches() / (merge * merge)),
                            static_cast<int32_t>(config.image_token_id));
  request.prompt_ids.push_back(static_cast<int32_t>(config.vision_end_token_id));
  for (int32_t id : RandomPrompt(rng, 6, config.text.vocab_size)) request.prompt_ids.push_back(id);
  engine::ImageInput image;
  image.grid = grid;
  image.pixel_values.resize(static_cast<size_t>(grid.patches() * config.vision.patch_dim()));
  std::normal_distribution<float> normal;
  for (float& p : image.pixel_values) p = normal(rng);
  request.images.push_back(std::move(image));
  request.max_new_tokens = tokens;
  request.stop_ids = std::vector<int32_t>{};  // random weights: run to the length asked
  return request;
}

// Decode throughput with `n` requests in flight: every token's arrival is recorded, and the
// figure counts the tokens between the moment all n requests decode and the moment the first
// one finishes (exactly n sequences per step in that window).
Result<Json> DecodeThroughput(engine::Engine& engine, int n, const EngineBenchArgs& args,
                              std::mt19937& rng) {
  const model::ModelConfig& config = engine.model().config();
  std::mutex mutex;
  std::vector<std::vector<Clock::time_point>> arrivals(static_cast<size_t>(n));
  std::vector<engine::RequestHandle> handles;
  for (int i = 0; i < n; ++i) {
    engine::Request request;
    request.prompt_ids = RandomPrompt(rng, args.prompt_tokens, config.text.vocab_size);
    request.max_new_tokens = args.decode_tokens;
    request.stop_ids = std::vector<int32_t>{};
    request.on_token = [&mutex, &arrivals, i](const engine::TokenEvent& event) {
      if (!event.token) return;
      std::lock_guard lock(mutex);
      arrivals[static_cast<size_t>(i)].push_back(Clock::now());
    };
    MINERU_ASSIGN_OR_RETURN(engine::RequestHandle handle, engine.Submit(std::move(request)));
    handles.push_back(handle);
  }
  for (auto& handle : handles) {
    const engine::GenerationResult& result = handle.Wait();
    if (result.finish_reason != engine::FinishReason::kLength) {
      return Fail(ErrorCode::kInternal, "bench request ended with {}: {}",
                  engine::FinishReasonName(result.finish_reason), result.error);
    }
  }
  Clock::time_point all_started{}, first_finished = Clock::time_point::max();
  for (const auto& times : arrivals) {
    all_started = std::max(all_started, times.front());
    first_finished = std::min(first_finished, times.back());
  }
  int64_t tokens = 0;
  for (const auto& times : arrivals) {
    for (const Clock::time_point t : times) tokens += t > all_started && t <= first_finished;
  }
  const double seconds = Seconds(first_finished - all_started);
  const double tokens_per_second = seconds > 0 ? static_cast<double>(tokens) / seconds : 0;
  return Json{{"concurrent", n},
              {"tokens", tokens},
              {"seconds", seconds},
              {"tokens_per_second", tokens_per_second},
              {"ms_per_step", tokens > 0 ? 1e3 * seconds * n / static_cast<double>(tokens) : 0}};
}

}  // namespace

Status RunEngineBench(std::shared_ptr<const model::Model> model, const std::string& model_dir,
                      const engine::EngineOptions& options, const EngineBenchArgs& args,
                      Json& report) {
  const model::ModelConfig config = model->config();
  MINERU_ASSIGN_OR_RETURN(auto engine, engine::Engine::Create(model, model_dir, options));
  std::mt19937 rng(4321);
  Json decode = Json::array();
  double batch1 = 0;
  for (int n : args.concurrency) {
    MINERU_ASSIGN_OR_RETURN(Json figure, DecodeThroughput(*engine, n, args, rng));
    const double tps = figure["tokens_per_second"].get<double>();
    if (n == 1) batch1 = tps;
    std::printf(
        "engine decode, %3d concurrent (prompt %d, %d new tokens): %8.1f tokens/s, "
        "%6.1f ms/step%s\n",
        n, args.prompt_tokens, args.decode_tokens, tps, figure["ms_per_step"].get<double>(),
        batch1 > 0 && n > 1 ? fmt::format(", {:.1f}x batch 1", tps / batch1).c_str() : "");
    decode.push_back(std::move(figure));
  }
  report["engine_decode"] = decode;

  if (args.page) {
    // One MinerU page: the layout request on the page resized to 1036x1036, then every crop
    // request at once (MinerU sends them concurrently once the layout is parsed).
    const int64_t patch = config.vision.patch_size;
    const model::ImageGrid layout_grid{1, 1036 / patch, 1036 / patch};
    const model::ImageGrid crop_grid{1, 812 / patch, 112 / patch};
    // Peak resident memory of the whole process over the page (the high-water mark reset first;
    // it counts mapped weights as they are touched), against the bytes of the weights.
    const bool peak_reset = ResetPeakRss();
    const Clock::time_point start = Clock::now();
    MINERU_ASSIGN_OR_RETURN(
        engine::RequestHandle layout,
        engine->Submit(ImageRequest(config, layout_grid, rng, args.layout_tokens)));
    const engine::GenerationResult layout_result = layout.Wait();
    const Clock::time_point layout_done = Clock::now();
    std::vector<engine::RequestHandle> crops;
    for (int i = 0; i < args.crops; ++i) {
      MINERU_ASSIGN_OR_RETURN(
          engine::RequestHandle crop,
          engine->Submit(ImageRequest(config, crop_grid, rng, args.crop_tokens)));
      crops.push_back(crop);
    }
    double crop_vision = 0;
    for (auto& crop : crops) crop_vision = std::max(crop_vision, crop.Wait().timings.vision);
    const double total = Seconds(Clock::now() - start);
    const double layout_seconds = Seconds(layout_done - start);
    std::printf(
        "engine page (layout 1036x1036 + %d tokens, then %d crops 812x112 + %d tokens "
        "each): %.2f s/page = %.4f pages/s (layout %.2f s: vision %.2f, decode %.2f; "
        "crops %.2f s: vision %.2f)\n",
        args.layout_tokens, args.crops, args.crop_tokens, total, 1 / total, layout_seconds,
        layout_result.timings.vision, layout_result.timings.decode, total - layout_seconds,
        crop_vision);
    const double weights =
        static_cast<double>(model->packed_decoder()->bytes() + model->packed_vision()->bytes());
    const std::optional<int64_t> peak = PeakRssBytes();
    const double peak_bytes = peak_reset && peak ? static_cast<double>(*peak) : 0;
    if (peak_bytes > 0) {
      std::printf(
          "  peak resident memory during the page: %.0f MB = %.2f x the weights (%.0f MB)\n",
          peak_bytes / 1e6, peak_bytes / weights, weights / 1e6);
    }
    report["engine_page"] = {{"seconds", total},
                             {"peak_rss_bytes", peak_bytes},
                             {"weights_bytes", weights},
                             {"pages_per_second", 1 / total},
                             {"layout_seconds", layout_seconds},
                             {"layout_vision_seconds", layout_result.timings.vision},
                             {"layout_decode_seconds", layout_result.timings.decode},
                             {"crops_seconds", total - layout_seconds},
                             {"crops_vision_seconds", crop_vision}};
  }
  const engine::EngineStats stats = engine->Stats();
  report["engine_stats"] = {{"iterations", stats.iterations},
                            {"vision_passes", stats.vision_passes},
                            {"preemptions", stats.preemptions}};
  return OkStatus();
}

}  // namespace mineru::apps
