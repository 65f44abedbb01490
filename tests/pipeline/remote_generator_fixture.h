// SPDX-License-Identifier: Apache-2.0
// What the tests of the remote generator share: a scripted model server stub per test
// (model_server_stub.h), options bounded for tests (small timeouts and backoff, so that every
// fault resolves quickly), requests shaped as MinerU's block requests, and waits that turn a
// hang into a failure instead of a stuck test.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "engine/request.h"
#include "engine/sampling.h"
#include "image/image.h"
#include "model_server_stub.h"
#include "pipeline/remote_generator.h"
#include "pipeline/sampling_presets.h"
#include "text/chat_template.h"

namespace mineru::pipeline::testing {

using namespace std::chrono_literals;
using engine::FinishReason;
using testing_support::ModelServerStub;
using testing_support::StubRequest;

// The longest any single wait of these tests may take; only a hang reaches it.
inline constexpr std::chrono::seconds kHangGuard{60};

// A small crop with a pattern (every pixel distinct enough that a lossy or shifted encoding
// shows).
inline image::RgbImage TestCrop(int64_t width = 20, int64_t height = 12) {
  image::RgbImage crop;
  crop.width = width;
  crop.height = height;
  crop.pixels.resize(static_cast<size_t>(width * height * 3));
  for (size_t i = 0; i < crop.pixels.size(); ++i) crop.pixels[i] = static_cast<uint8_t>(i * 7);
  return crop;
}

// MinerU's sampling for a block request (temperature 0, top_p 0.01, top_k 1, presence 1.0,
// frequency 0.005, repetition 1.0, no-repeat n-gram 100).
inline engine::SamplingParams MineruSampling() { return MineruTableSampling(); }

// A block request: the user turn holds the crop, then `prompt`.
inline engine::Request CropRequest(std::string prompt, int32_t priority = 0) {
  engine::Request request;
  request.messages = {
      {"user", {text::ChatPart::Image({1, 2, 2}), text::ChatPart::Text(std::move(prompt))}}};
  engine::ImageInput image;
  image.rgb = TestCrop();
  request.images.push_back(std::move(image));
  request.sampling = MineruSampling();
  request.priority = priority;
  return request;
}

// A text-only request (as the Pro client's cross-page table merge sends).
inline engine::Request TextRequest(std::string prompt) {
  engine::Request request;
  request.messages = {{"user", {text::ChatPart::Text(std::move(prompt))}}};
  request.sampling = MineruSampling();
  return request;
}

class RemoteGeneratorTest : public ::testing::Test {
 protected:
  // Starts the stub with `script` (model_server_stub.h); false when Python did not come up.
  bool StartStub(std::string_view script,
                 std::string_view models = ModelServerStub::kDefaultModels) {
    return stub_.Start(script, models);
  }

  // Options against the stub, bounded for tests: a hung attempt ends in 10 s, a request in 30,
  // backoff waits of a few tens of milliseconds.
  RemoteGeneratorOptions Options() const {
    RemoteGeneratorOptions options;
    options.server.url = stub_.Url();
    options.server.model = "stub-model";
    options.server.connect_timeout = 2s;
    options.server.request_timeout = 10s;
    options.server.deadline = 30s;
    options.server.retry.max_retries = 3;
    options.server.retry.backoff_base = 10ms;
    options.server.retry.max_retry_after = 10s;
    return options;
  }

  // The generator, or null with a failure recorded.
  static std::unique_ptr<RemoteGenerator> Make(RemoteGeneratorOptions options) {
    auto generator = RemoteGenerator::Create(std::move(options));
    if (!generator) {
      ADD_FAILURE() << "RemoteGenerator::Create: " << generator.error().ToString();
      return nullptr;
    }
    return std::move(*generator);
  }

  // The request's result; a hang or a refused Submit records a failure (and reads as an error
  // naming it, which no test expects).
  static engine::GenerationResult Await(engine::RequestHandle& handle) {
    auto result = handle.WaitFor(kHangGuard);
    if (!result) {
      ADD_FAILURE() << "no result within " << kHangGuard.count() << " s";
      handle.Cancel();
      engine::GenerationResult hung;
      hung.error = "test: hung";
      return hung;
    }
    return *result;
  }

  static engine::RequestHandle SubmitOrFail(RemoteGenerator& generator, engine::Request request) {
    auto handle = generator.Submit(std::move(request));
    if (!handle) {
      ADD_FAILURE() << "Submit: " << handle.error().ToString();
      auto state = std::make_shared<engine::RequestState>(nullptr);
      engine::GenerationResult refused;
      refused.error = "test: submit refused";
      state->Finish(std::move(refused));
      return engine::RequestHandle(state);
    }
    return std::move(*handle);
  }

  static engine::GenerationResult Generate(RemoteGenerator& generator, engine::Request request) {
    engine::RequestHandle handle = SubmitOrFail(generator, std::move(request));
    return Await(handle);
  }

  // Polls until `done(stats)` holds; false past the hang guard. The counts may lag a request's
  // result by the I/O thread's step.
  static bool WaitForStats(const RemoteGenerator& generator,
                           const std::function<bool(const RemoteGeneratorStats&)>& done) {
    const auto until = std::chrono::steady_clock::now() + kHangGuard;
    while (!done(generator.Stats())) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  ModelServerStub stub_;
};

// "could not start ..." for an ASSERT on StartStub.
inline constexpr char kStubDidNotStart[] =
    "could not start the model server stub with /usr/bin/python3";

}  // namespace mineru::pipeline::testing
