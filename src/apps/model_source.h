// SPDX-License-Identifier: Apache-2.0
// Where --model points: a checkpoint directory, or a Hugging Face id ("org/name") looked up in
// the local Hugging Face cache the way huggingface_hub lays it out, and downloaded into it when
// absent (apps/hub_download.h; not with HF_HUB_OFFLINE=1):
//   $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
//   /models--<org>--<name>/refs/main -> <commit>, /snapshots/<commit>/config.json
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "apps/engine_flags.h"
#include "apps/model_options.h"
#include "base/status.h"
#include "engine/engine.h"

namespace mineru::apps {

// The checkpoint directory; an error saying what to do when it cannot be had.
Result<std::string> ResolveModelSource(const std::string& model);

// What `parse` and `serve` start with: the model resolved, loaded (packed on `threads` threads)
// and an engine over it with the engine flags. `command` names the caller in the error for a
// checkpoint without tokenizer.json (both need one).
Result<std::unique_ptr<engine::Engine>> StartEngine(const std::string& model,
                                                    const ModelLoadOptions& load,
                                                    const EngineFlags& flags, int threads,
                                                    std::string_view command);

}  // namespace mineru::apps
