// SPDX-License-Identifier: Apache-2.0
// What parse, serve and worker run the pipeline on: the in-process engine over a checkpoint
// (--model) or an OpenAI-compatible model server (--model-server, pipeline/remote_generator.h),
// with the profile each implies.
//
//   MINERU_ASSIGN_OR_RETURN(PipelineBackend backend,
//                           StartPipelineBackend(args.model, ..., args.model_server_flags));
//   backend.Apply(document_options);
//   ParseDocument(backend.generator(), ...);
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "apps/engine_flags.h"
#include "apps/model_options.h"
#include "apps/model_server_flags.h"
#include "apps/profile_flags.h"
#include "base/status.h"
#include "engine/engine.h"
#include "pipeline/document.h"
#include "pipeline/generator.h"
#include "pipeline/remote_generator.h"

namespace mineru::apps {

struct PipelineBackend {
  std::unique_ptr<engine::Engine> engine;             // in process; null with a model server
  std::unique_ptr<pipeline::RemoteGenerator> remote;  // with --model-server
  std::unique_ptr<pipeline::EngineGenerator> local;   // over `engine`
  pipeline::ProfileChoice profile;
  // Names the model in cache keys: the weights' fingerprint in process; with a model server
  // its base URL and served model id (all that can be known of weights held elsewhere).
  std::string model_fingerprint;

  pipeline::Generator& generator() const;
  // The pipeline settings the backend decides: the profile's, and with a model server one
  // pipeline attempt per request (the generator has retried it already by the retry policy).
  void Apply(const ProfileFlags& flags, pipeline::DocumentOptions& options) const;
};

// `model` and `load`/`flags`/`threads` start the engine when `server` is not enabled
// (StartPipelineEngine); else the server's models are listed (GET /v1/models), one chosen
// (--model-server-model, or the first), its profile found (--profile, the server's word, its
// name) and the remote generator started. Prints the choice to stderr.
Result<PipelineBackend> StartPipelineBackend(
    const std::string& model, const ModelLoadOptions& load, const EngineFlags& flags, int threads,
    std::string_view command, const ProfileFlags& profile, const ModelServerFlags& server,
    std::function<void(const pipeline::RemoteRequestRecord&)> on_remote_request = {});

}  // namespace mineru::apps
