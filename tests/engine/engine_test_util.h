// SPDX-License-Identifier: Apache-2.0
// The golden tiny checkpoint's prompts as engine requests, and small waiting helpers.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../support/npy.h"
#include "engine/engine.h"
#include "model/greedy.h"
#include "model/model.h"

namespace mineru::engine::testing {

inline const std::string kGoldenDir = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny";
inline const std::string kGoldenModel = kGoldenDir + "/model";

// The golden model with its products in `precision` and its weights in `weights`
// (model/precision.h), loaded once per combination.
inline std::shared_ptr<const model::Model> LoadGoldenModel(
    model::Precision precision = model::Precision::kFp32,
    model::WeightFormat weights = model::WeightFormat::kBf16) {
  static std::shared_ptr<const model::Model> models[2][2];
  auto& slot = models[static_cast<int>(precision)][static_cast<int>(weights)];
  if (slot == nullptr) {
    model::ComputeOptions compute;
    compute.precision = precision;
    compute.weights = weights;
    auto loaded = model::Model::Load(kGoldenModel, {}, /*pack=*/true, nullptr, compute);
    EXPECT_TRUE(loaded) << loaded.error().ToString();
    slot = std::shared_ptr<const model::Model>(std::move(*loaded));
  }
  return slot;
}

using testing_support::F32;
using testing_support::I64;

// One prompt of a golden case with its images and the 16 greedy ids transformers produced.
struct GoldenPrompt {
  std::vector<int32_t> ids;
  std::vector<ImageInput> images;
  std::vector<int32_t> expected;
};

// Cases: "single_doc", "single_odd", "batch_doc_odd" (two prompts).
inline std::vector<GoldenPrompt> GoldenPrompts(const std::string& name) {
  const std::string dir = kGoldenDir + "/" + name;
  const auto ids = I64(dir + "/input_ids.npy");
  const auto mask = I64(dir + "/attention_mask.npy");
  const auto grid_values = I64(dir + "/image_grid_thw.npy");
  const auto generated = I64(dir + "/fp32/generated_ids.npy");
  const auto batch = static_cast<int64_t>(generated.size() / 16);
  const int64_t length = static_cast<int64_t>(ids.size()) / batch;
  std::vector<model::ImageGrid> grids;
  for (size_t i = 0; i + 3 <= grid_values.size(); i += 3) {
    grids.push_back({grid_values[i], grid_values[i + 1], grid_values[i + 2]});
  }
  const auto model = LoadGoldenModel();
  auto requests = model::RequestsFromPaddedBatch(ids, mask, batch, length, grids, model->config());
  EXPECT_TRUE(requests) << requests.error().ToString();
  // The images of each case, in order (the golden manifest's names for the grids).
  std::vector<std::vector<float>> pixels;
  for (const model::ImageGrid& g : grids) {
    const std::string image = g.h == 22 ? "doc_400x300" : g.h == 36 ? "odd_333x517" : "tiny_50x40";
    pixels.push_back(F32(kGoldenDir + "/images/" + image + ".pixel_values.npy"));
  }
  std::vector<GoldenPrompt> prompts;
  size_t next_image = 0;
  for (int64_t b = 0; b < batch; ++b) {
    GoldenPrompt prompt;
    prompt.ids = (*requests)[static_cast<size_t>(b)].ids;
    for (const model::ImageGrid& g : (*requests)[static_cast<size_t>(b)].grids) {
      ImageInput image;
      image.grid = g;
      image.pixel_values = pixels[next_image++];
      prompt.images.push_back(std::move(image));
    }
    for (int s = 0; s < 16; ++s) {
      prompt.expected.push_back(static_cast<int32_t>(generated[static_cast<size_t>(b * 16 + s)]));
    }
    prompts.push_back(std::move(prompt));
  }
  return prompts;
}

// A greedy request for `prompt` that generates exactly `tokens` tokens (no stop ids).
inline Request GreedyRequest(const GoldenPrompt& prompt, int64_t tokens) {
  Request request;
  request.prompt_ids = prompt.ids;
  request.images = prompt.images;
  request.max_new_tokens = tokens;
  request.stop_ids = std::vector<int32_t>{};
  return request;
}

// Polls until the engine holds no KV block and no request (the stats are published at the end
// of each iteration, just after results are delivered).
inline EngineStats WaitIdle(const Engine& engine) {
  EngineStats stats;
  for (int i = 0; i < 5000; ++i) {
    stats = engine.Stats();
    if (stats.kv_blocks_used == 0 && stats.running == 0 && stats.waiting == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return stats;
}

}  // namespace mineru::engine::testing
