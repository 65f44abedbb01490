// SPDX-License-Identifier: Apache-2.0
// A test double at the engine interface: answers each request at once with text a script
// chooses from the request's task prompt and image, in MinerU2.5's real output grammar. Every
// request is recorded so tests can check what the pipeline asked.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/generator.h"

namespace mineru::pipeline::testing {

struct ScriptedCall {
  std::string prompt;  // the task prompt ("\nLayout Detection:", "\nTable Recognition:", ...)
  int64_t image_width = 0, image_height = 0;
  engine::SamplingParams sampling;
};

// The script's answer: text (finish reason stop), or nullopt for a failed request.
using Script = std::function<std::optional<std::string>(const ScriptedCall& call)>;

class ScriptedGenerator final : public Generator {
 public:
  explicit ScriptedGenerator(Script script) : script_(std::move(script)) {}

  Result<engine::RequestHandle> Submit(engine::Request request) override {
    ScriptedCall call;
    for (const text::ChatMessage& message : request.messages) {
      for (const text::ChatPart& part : message.content) {
        if (part.kind == text::ChatPart::Kind::kText) call.prompt += part.text;
      }
    }
    if (!request.images.empty() && request.images[0].rgb) {
      call.image_width = request.images[0].rgb->width;
      call.image_height = request.images[0].rgb->height;
    }
    call.sampling = request.sampling;
    std::optional<std::string> answer = script_(call);
    {
      std::lock_guard lock(mutex_);
      calls_.push_back(call);
    }
    auto state = std::make_shared<engine::RequestState>(nullptr);
    engine::GenerationResult result;
    if (answer) {
      result.finish_reason = engine::FinishReason::kStop;
      result.text = *answer;
      result.usage.completion_tokens = static_cast<int64_t>(answer->size() / 4 + 1);
    } else {
      result.finish_reason = engine::FinishReason::kError;
      result.error = "scripted failure";
    }
    state->Finish(std::move(result));
    return engine::RequestHandle(state);
  }

  std::vector<ScriptedCall> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  Script script_;
  mutable std::mutex mutex_;
  std::vector<ScriptedCall> calls_;
};

}  // namespace mineru::pipeline::testing
