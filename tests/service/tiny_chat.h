// SPDX-License-Identifier: Apache-2.0
// What the service tests that generate for real share: a tiny random checkpoint with the Qwen2
// tokenizer (written by the CTest fixture text_qwen_tokenizer; the test target defines
// MINERU_QWEN_TOKENIZER as its path), the engine options they run it with, a generated PNG and
// the MinerU-style greedy OCR request on one image. Free of gtest assertions that return, so
// SetUpTestSuite can call it and report the error itself.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "devtools/random_checkpoint.h"
#include "engine/options.h"
#include "image/data_url.h"
#include "image/encode.h"
#include "model/model.h"

#ifndef MINERU_QWEN_TOKENIZER
#error "tiny_chat.h needs MINERU_QWEN_TOKENIZER (the Qwen2 tokenizer.json) defined by the target"
#endif

namespace mineru::testing_support {

// Writes the tiny random checkpoint for `seed` with the Qwen2 tokenizer into `dir` and loads it.
// The same seed gives the same weights, so outputs are comparable across runs.
inline Result<std::shared_ptr<const model::Model>> WriteAndLoadTinyModel(const std::string& dir,
                                                                         uint64_t seed) {
  ThreadPool pool(2);
  devtools::RandomCheckpointOptions checkpoint_options;
  checkpoint_options.seed = seed;
  checkpoint_options.tokenizer_source = MINERU_QWEN_TOKENIZER;
  MINERU_RETURN_IF_ERROR(
      devtools::WriteRandomCheckpoint(pool, devtools::TinyModelConfig(), dir, checkpoint_options));
  MINERU_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> loaded, model::Model::Load(dir));
  return std::shared_ptr<const model::Model>(std::move(loaded));
}

// Engine options sized for the tiny model: two threads, 32 MiB of KV cache, and images batched
// for at most a millisecond (tests do not wait for a vision batch to fill).
inline engine::EngineOptions TinyEngineOptions() {
  engine::EngineOptions options;
  options.threads = 2;
  options.kv_cache_bytes = int64_t{32} << 20;
  options.vision_max_wait = std::chrono::milliseconds(1);
  return options;
}

// A width x height RGB PNG whose byte i is (i * step + offset) mod 256: deterministic, and
// different per (step, offset) so callers can make distinct images. Empty (and a test failure)
// if encoding fails.
inline std::vector<uint8_t> PatternPng(int width, int height, int step, int offset = 0) {
  image::RgbImage rgb;
  rgb.width = width;
  rgb.height = height;
  rgb.pixels.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * 3);
  for (size_t i = 0; i < rgb.pixels.size(); ++i) {
    rgb.pixels[i] =
        static_cast<uint8_t>(i * static_cast<size_t>(step) + static_cast<size_t>(offset));
  }
  auto png = image::EncodePng(rgb);
  if (!png) {
    ADD_FAILURE() << "EncodePng: " << png.error().ToString();
    return {};
  }
  return std::move(*png);
}

// PatternPng as a data: URL ("" if encoding fails).
inline std::string PatternPngDataUrl(int width, int height, int step, int offset = 0) {
  std::vector<uint8_t> png = PatternPng(width, height, step, offset);
  return png.empty() ? std::string() : image::MakeDataUrl("image/png", png);
}

// A MinerU-style greedy text-recognition request on one image, as a chat completions body.
inline Json OcrRequest(std::string_view model_id, const std::string& image_url, int max_tokens,
                       bool stream = false) {
  Json body{{"model", model_id},
            {"messages",
             {{{"role", "user"},
               {"content",
                {{{"type", "image_url"}, {"image_url", {{"url", image_url}}}},
                 {{"type", "text"}, {"text", "\nText Recognition:"}}}}}}},
            {"temperature", 0.0},
            {"skip_special_tokens", false},
            {"max_tokens", max_tokens}};
  if (stream) body["stream"] = true;
  return body;
}

}  // namespace mineru::testing_support
