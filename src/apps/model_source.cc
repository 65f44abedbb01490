// SPDX-License-Identifier: Apache-2.0
#include "apps/model_source.h"

#include <cstdlib>
#include <filesystem>

#include "apps/hub_download.h"
#include "base/mapped_file.h"

namespace mineru::apps {

namespace fs = std::filesystem;

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
  const fs::path repo = fs::path(HubCacheDir()) /
                        ("models--" + model.substr(0, slash) + "--" + model.substr(slash + 1));
  auto commit = ReadFileToString((repo / "refs" / "main").string(), 256);
  if (commit) {
    while (!commit->empty() && (commit->back() == '\n' || commit->back() == '\r')) {
      commit->pop_back();
    }
    const fs::path snapshot = repo / "snapshots" / *commit;
    if (fs::is_regular_file(snapshot / "config.json", ec)) return snapshot.string();
  }
  const char* offline = std::getenv("HF_HUB_OFFLINE");
  if (offline != nullptr && std::string(offline) == "1") {
    return Fail(ErrorCode::kNotFound,
                "--model {}: not a directory, and not in the Hugging Face cache ({}) while "
                "HF_HUB_OFFLINE=1. Fetch the checkpoint where there is network (for instance "
                "`huggingface-cli download {}`) and pass its directory with --model DIR",
                model, repo.string(), model);
  }
  HubDownload download;
  const char* endpoint = std::getenv("HF_ENDPOINT");
  download.endpoint =
      endpoint != nullptr && *endpoint != '\0' ? endpoint : "https://huggingface.co";
  while (!download.endpoint.empty() && download.endpoint.back() == '/')
    download.endpoint.pop_back();
  download.cache_dir = HubCacheDir();
  return DownloadFromHub(model, download);
}

Result<std::unique_ptr<engine::Engine>> StartEngine(const std::string& model,
                                                    const ModelLoadOptions& load,
                                                    const EngineFlags& flags, int threads,
                                                    std::string_view command) {
  MINERU_ASSIGN_OR_RETURN(std::string dir, ResolveModelSource(model));
  ThreadPool load_pool(threads);
  load.WarnIfSlow();
  MINERU_ASSIGN_OR_RETURN(auto loaded, model::Model::Load(dir, load.Limits(), /*pack=*/true,
                                                          &load_pool, load.Compute()));
  std::shared_ptr<const model::Model> shared(std::move(loaded));
  MINERU_ASSIGN_OR_RETURN(auto engine, engine::Engine::Create(shared, dir, flags.Options(threads)));
  if (engine->tokenizer() == nullptr) {
    return Fail(ErrorCode::kNotFound, "{} has no tokenizer.json ({} needs it)", dir, command);
  }
  return engine;
}

}  // namespace mineru::apps
