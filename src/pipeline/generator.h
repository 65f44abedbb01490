// SPDX-License-Identifier: Apache-2.0
// What the pipeline needs of a model: submit a generation request, get a handle to its tokens and
// result. The engine is the real one (EngineGenerator); tests drive the pipeline with a scripted
// generator that answers each prompt with fixed text in the model's grammar.
//
// Thread safety: Submit may be called from several threads at once (as the engine allows).
#pragma once

#include "base/status.h"
#include "engine/engine.h"

namespace mineru::pipeline {

class Generator {
 public:
  virtual ~Generator() = default;
  virtual Result<engine::RequestHandle> Submit(engine::Request request) = 0;
};

class EngineGenerator final : public Generator {
 public:
  explicit EngineGenerator(engine::Engine& engine) : engine_(engine) {}
  Result<engine::RequestHandle> Submit(engine::Request request) override {
    return engine_.Submit(std::move(request));
  }

 private:
  engine::Engine& engine_;
};

}  // namespace mineru::pipeline
