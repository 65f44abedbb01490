// SPDX-License-Identifier: Apache-2.0
// The generation engine: requests in, tokens out.
//
// Thread safety: Submit, Stats and the handles it returns may be used from any number of
// threads at once; all model compute runs on the engine's own thread and thread pool.
//
//   MINERU_ASSIGN_OR_RETURN(auto model, model::Model::Load(dir));
//   MINERU_ASSIGN_OR_RETURN(auto engine, engine::Engine::Create(std::move(model), dir, {}));
//   engine::Request request;
//   request.messages = {{"user", {text::ChatPart::Image({}), text::ChatPart::Text(
//                                  "\nLayout Detection:")}}};
//   request.images.push_back(std::move(page_image));  // ImageInput: .rgb = the page
//   MINERU_ASSIGN_OR_RETURN(engine::RequestHandle handle, engine->Submit(std::move(request)));
//   while (auto tokens = handle.Next()) { ... }        // streamed ids
//   const engine::GenerationResult& result = handle.Wait();  // text, finish reason, usage
//
// Each iteration the engine thread plans, executes and commits. The plan (engine/planner.h)
// (1) drops cancelled and expired requests, (2) admits waiting requests in priority order
// while their prompts fit in free KV blocks, (3) picks the images of admitted requests to
// encode together (vision batching) and (4) the tokens of one decoder pass: one new token of
// every decoding sequence plus prefill chunks of admitted prompts within max_batch_tokens,
// preempting when KV blocks run out. The model then runs that plan, and the commit samples,
// streams and finishes. Requests join and leave between iterations. Every per-row kernel is
// independent of the other rows of a pass, so a request's tokens and logits do not depend on what
// it was batched with.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "engine/handle.h"
#include "engine/options.h"
#include "engine/request.h"
#include "image/qwen2vl_preprocess.h"
#include "model/model.h"
#include "text/tokenizer.h"

namespace mineru::engine {

struct EngineStats {
  int64_t waiting = 0;  // submitted, not admitted
  int64_t running = 0;  // admitted, holding or about to hold KV blocks
  int64_t kv_blocks_total = 0;
  int64_t kv_blocks_used = 0;
  int64_t kv_block_bytes = 0;
  int64_t submitted = 0;
  int64_t rejected = 0;      // refused by Submit (queue full, invalid)
  int64_t finished[5] = {};  // by FinishReason
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t preemptions = 0;
  int64_t iterations = 0;
  int64_t vision_passes = 0;
  int64_t vision_images = 0;
};

class Engine {
 public:
  // Starts the engine thread. `model_dir` supplies generation_config.json (stop ids),
  // preprocessor_config.json (for RGB images) and tokenizer files (for chat messages and
  // result text); each is optional, and a request that needs a missing one is refused.
  static Result<std::unique_ptr<Engine>> Create(std::shared_ptr<const model::Model> model,
                                                const std::string& model_dir,
                                                const EngineOptions& options);
  // Finishes every unfinished request with kError ("engine shut down") and joins the thread.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and queues a request. Errors: kInvalidArgument (bad prompt, images, sampling,
  // or a prompt longer than the context or the whole KV cache), kResourceExhausted (max_waiting
  // requests already wait), kUnavailable (shutting down).
  Result<RequestHandle> Submit(Request request);

  EngineStats Stats() const;
  const EngineOptions& options() const;
  const model::Model& model() const;
  // The stop ids used when a request names none.
  const std::vector<int32_t>& default_stop_ids() const;
  const text::Tokenizer* tokenizer() const;

  class Impl;

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::engine
