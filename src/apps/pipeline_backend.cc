// SPDX-License-Identifier: Apache-2.0
#include "apps/pipeline_backend.h"

#include <cstdio>

namespace mineru::apps {

pipeline::Generator& PipelineBackend::generator() const {
  if (remote) return *remote;
  return *local;
}

void PipelineBackend::Apply(const ProfileFlags& flags, pipeline::DocumentOptions& options) const {
  flags.Apply(profile.profile, options);
  if (remote) options.extract.block_attempts = 1;
}

Result<PipelineBackend> StartPipelineBackend(
    const std::string& model, const ModelLoadOptions& load, const EngineFlags& flags, int threads,
    std::string_view command, const ProfileFlags& profile, const ModelServerFlags& server,
    std::function<void(const pipeline::RemoteRequestRecord&)> on_remote_request) {
  PipelineBackend backend;
  if (!server.enabled()) {
    MINERU_ASSIGN_OR_RETURN(PipelineEngine started,
                            StartPipelineEngine(model, load, flags, threads, command, profile));
    backend.model_fingerprint = started.engine->model().fingerprint();
    backend.engine = std::move(started.engine);
    backend.local = std::make_unique<pipeline::EngineGenerator>(*backend.engine);
    backend.profile = std::move(started.profile);
    return backend;
  }
  pipeline::RemoteGeneratorOptions options;
  options.server = server.Options();
  MINERU_ASSIGN_OR_RETURN(const std::string base,
                          pipeline::NormalizeModelServerUrl(options.server.url));
  MINERU_ASSIGN_OR_RETURN(std::vector<pipeline::ServedModel> models,
                          pipeline::ListServedModels(options.server));
  MINERU_ASSIGN_OR_RETURN(pipeline::ServedModel chosen,
                          pipeline::ChooseServedModel(models, server.model));
  options.server.model = chosen.id;
  options.on_request_finished = std::move(on_remote_request);
  backend.profile = pipeline::ServedModelProfile(chosen, profile.Forced());
  backend.model_fingerprint = "model-server:" + base + "#" + chosen.id;
  MINERU_ASSIGN_OR_RETURN(backend.remote, pipeline::RemoteGenerator::Create(std::move(options)));
  std::fprintf(stderr, "model server: %s, model '%s', %d request(s) at once\n", base.c_str(),
               chosen.id.c_str(), server.concurrency);
  std::fprintf(stderr, "profile: %s (%s)\n",
               std::string(pipeline::ProfileName(backend.profile.profile)).c_str(),
               backend.profile.reason.c_str());
  return backend;
}

}  // namespace mineru::apps
