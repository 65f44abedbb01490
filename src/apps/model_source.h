// SPDX-License-Identifier: Apache-2.0
// Where --model points: a checkpoint directory, or a Hugging Face id ("org/name") looked up in
// the local Hugging Face cache the way huggingface_hub lays it out, and downloaded into it when
// absent (apps/hub_download.h; not with HF_HUB_OFFLINE=1):
//   $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
//   /models--<org>--<name>/refs/main -> <commit>, /snapshots/<commit>/config.json
#pragma once

#include <string>

#include "base/status.h"

namespace mineru::apps {

// The checkpoint directory; an error saying what to do when it cannot be had.
Result<std::string> ResolveModelSource(const std::string& model);

}  // namespace mineru::apps
