// SPDX-License-Identifier: Apache-2.0
#include "apps/profile_flags.h"

#include <cstdio>

#include "apps/model_profile.h"
#include "apps/model_source.h"

namespace mineru::apps {

Result<PipelineEngine> StartPipelineEngine(const std::string& model, const ModelLoadOptions& load,
                                           const EngineFlags& flags, int threads,
                                           std::string_view command, const ProfileFlags& profile) {
  MINERU_ASSIGN_OR_RETURN(std::string dir, ResolveModelSource(model));
  // The model first, so that a broken checkpoint is reported as the loader words it.
  MINERU_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine,
                          StartEngine(dir, load, flags, threads, command));
  MINERU_ASSIGN_OR_RETURN(pipeline::ProfileChoice choice,
                          ChooseModelProfile(dir, model, profile.Forced()));
  MINERU_RETURN_IF_ERROR(CheckProfileTokens(dir, *engine->tokenizer(), choice.profile));
  std::fprintf(stderr, "profile: %s (%s)\n", std::string(ProfileName(choice.profile)).c_str(),
               choice.reason.c_str());
  return PipelineEngine{std::move(engine), std::move(dir), std::move(choice)};
}

}  // namespace mineru::apps
