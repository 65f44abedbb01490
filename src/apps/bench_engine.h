// SPDX-License-Identifier: Apache-2.0
// The engine figures of mineru-cpp bench: decode throughput with N requests in flight, and
// one MinerU-shaped page through the scheduler.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "engine/options.h"
#include "model/model.h"

namespace mineru::apps {

struct EngineBenchArgs {
  std::vector<int> concurrency = {1, 4, 16, 64};
  int prompt_tokens = 64;   // text prompt of each throughput request
  int decode_tokens = 32;   // tokens each throughput request generates
  bool page = true;         // run the page figure
  int layout_tokens = 500;  // page: output tokens of the 1036x1036 layout request
  int crops = 20;           // page: crop requests of 812x112 after the layout
  int crop_tokens = 75;     // page: output tokens of each crop
};

// Prints the figures and adds them to `report` ("engine_decode", "engine_page").
Status RunEngineBench(std::shared_ptr<const model::Model> model, const std::string& model_dir,
                      const engine::EngineOptions& options, const EngineBenchArgs& args,
                      Json& report);

}  // namespace mineru::apps
