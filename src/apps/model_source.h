// SPDX-License-Identifier: Apache-2.0
// Where --model points: a checkpoint directory, or a Hugging Face id ("org/name") looked up in
// the local Hugging Face cache the way huggingface_hub lays it out:
//   $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
//   /models--<org>--<name>/refs/main -> <commit>, /snapshots/<commit>/config.json
#pragma once

#include <string>

#include "base/status.h"

namespace mineru::apps {

// The checkpoint directory; kNotFound with what to do when the id is in no cache.
Result<std::string> ResolveModelSource(const std::string& model);

}  // namespace mineru::apps
