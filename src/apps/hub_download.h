// SPDX-License-Identifier: Apache-2.0
// Downloads a model repository from the Hugging Face Hub into the standard cache layout
// (huggingface_hub's), with resume and progress:
//
//   GET {endpoint}/api/models/{repo}/revision/{revision}   -> {"sha": ..., "siblings": [...]}
//   GET {endpoint}/{repo}/resolve/{sha}/{file}             -> each file, with Range to resume
//   {cache}/models--{org}--{name}/snapshots/{sha}/{file}   (files; a partial one is
//                                                            {file}.incomplete until complete)
//   {cache}/models--{org}--{name}/refs/{revision}          (the sha)
//
// Endpoint: $HF_ENDPOINT, else https://huggingface.co; token: $HF_TOKEN (Authorization:
// Bearer). Everything the server sends is untrusted: file names that would leave the snapshot
// directory are refused.
#pragma once

#include <string>

#include "base/status.h"

namespace mineru::apps {

// The cache root: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
std::string HubCacheDir();

struct HubDownload {
  std::string endpoint;
  std::string cache_dir;
  std::string revision = "main";
  bool progress = true;  // per-file progress on stderr
};

// The snapshot directory once every file is there. kUnavailable when the endpoint cannot be
// reached (with what to do instead), kCorrupt for a malformed listing, kIo for local failures.
Result<std::string> DownloadFromHub(const std::string& repo, const HubDownload& options);

}  // namespace mineru::apps
