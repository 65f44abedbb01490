// SPDX-License-Identifier: Apache-2.0
#include "apps/model_source.h"

#include <cstdlib>
#include <filesystem>

#include "base/mapped_file.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

fs::path HubCache() {
  if (const char* cache = std::getenv("HF_HUB_CACHE"); cache != nullptr && *cache != '\0') {
    return cache;
  }
  if (const char* home = std::getenv("HF_HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / "hub";
  }
  const char* user_home = std::getenv("HOME");
  return fs::path(user_home != nullptr ? user_home : ".") / ".cache" / "huggingface" / "hub";
}

}  // namespace

Result<std::string> ResolveModelSource(const std::string& model) {
  std::error_code ec;
  if (fs::is_directory(model, ec)) return model;
  const size_t slash = model.find('/');
  const bool hub_id = slash != std::string::npos && slash > 0 && slash + 1 < model.size() &&
                      model.find('/', slash + 1) == std::string::npos &&
                      model.find("..") == std::string::npos;
  if (!hub_id) {
    return Fail(ErrorCode::kNotFound, "--model {}: no such checkpoint directory", model);
  }
  const fs::path repo =
      HubCache() / ("models--" + model.substr(0, slash) + "--" + model.substr(slash + 1));
  auto commit = ReadFileToString((repo / "refs" / "main").string(), 256);
  if (commit) {
    while (!commit->empty() && (commit->back() == '\n' || commit->back() == '\r')) {
      commit->pop_back();
    }
    const fs::path snapshot = repo / "snapshots" / *commit;
    if (fs::is_regular_file(snapshot / "config.json", ec)) return snapshot.string();
  }
  return Fail(ErrorCode::kNotFound,
              "--model {}: not a directory, and not in the Hugging Face cache ({}). This build "
              "does not download; fetch the checkpoint where there is network (for instance "
              "`huggingface-cli download {}`) and pass its directory with --model DIR",
              model, repo.string(), model);
}

}  // namespace mineru::apps
