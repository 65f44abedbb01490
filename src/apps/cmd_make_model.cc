// SPDX-License-Identifier: Apache-2.0
// mineru-cpp make-model: a random-weight checkpoint in the Hugging Face layout, with the
// tokenizer files built from the Qwen2 vocabulary so that the directory is a complete model;
// --config pro / pro-tiny write MinerU2.5-Pro-2605's file layout (devtools/random_checkpoint.h).
#include <chrono>
#include <cstdio>

#include "apps/commands.h"
#include "base/thread_pool.h"
#include "devtools/random_checkpoint.h"
#include "text/tokenizer.h"

namespace mineru::apps {
namespace {

struct MakeModelArgs {
  std::string config = "real";
  uint64_t seed = 0;
  std::string out;
  std::string naming = "classic";
  uint64_t max_shard_bytes = 0;
  std::string tokenizer_source;
  bool no_tokenizer = false;
  uint64_t max_tokenizer_bytes = text::kDefaultMaxTokenizerFileBytes;
};

constexpr char kTokenizerHelp[] =
    "make-model needs --tokenizer-source FILE, a Qwen2 tokenizer.json to take the vocabulary "
    "from (tools/tokenizer-reference/fetch.sh DIR writes DIR/tokenizer.json), or --no-tokenizer "
    "for a checkpoint without tokenizer files";

int RunMakeModel(const MakeModelArgs& args, const GlobalOptions& global) {
  if (args.tokenizer_source.empty() && !args.no_tokenizer) {
    std::fprintf(stderr, "mineru-cpp: %s\n", kTokenizerHelp);
    return kExitUsage;
  }
  Json config;
  const bool built_in = args.config == "real" || args.config == "tiny" || args.config == "pro" ||
                        args.config == "pro-tiny";
  if (args.config == "real") {
    config = devtools::RealModelConfig();
  } else if (args.config == "tiny") {
    config = devtools::TinyModelConfig();
  } else if (args.config == "pro") {
    config = devtools::ProModelConfig();
  } else if (args.config == "pro-tiny") {
    config = devtools::ProTinyModelConfig();
  } else {
    auto file = ReadJsonFile(args.config, size_t{16} << 20);
    if (!file) return ReportError(file.error());
    config = std::move(*file);
  }
  const std::string config_name = built_in ? "the " + args.config + " config" : args.config;
  devtools::RandomCheckpointOptions options;
  options.seed = args.seed;
  if (args.config == "pro" || args.config == "pro-tiny") {
    options.layout = devtools::CheckpointLayout::kPro;
  }
  options.naming = args.naming == "prefixed" ? devtools::TensorNaming::kPrefixed
                                             : devtools::TensorNaming::kClassic;
  options.max_shard_bytes = args.max_shard_bytes;
  options.tokenizer_source = args.tokenizer_source;
  options.max_tokenizer_bytes = args.max_tokenizer_bytes;
  ThreadPool pool(ResolveThreads(global));
  const auto start = std::chrono::steady_clock::now();
  if (Status status = devtools::WriteRandomCheckpoint(pool, config, args.out, options); !status) {
    return ReportError(WithContext(status.error(), config_name));
  }
  std::printf("wrote %s in %.1f s\n", args.out.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace

void AddMakeModelCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd =
      app.add_subcommand("make-model", "Write a random-weight checkpoint (HF layout, bf16)");
  auto args = std::make_shared<MakeModelArgs>();
  cmd->add_option("--config", args->config,
                  "real (MinerU2.5-2509's shape, 2.2 GB), tiny (the test model), pro / pro-tiny "
                  "(the same shapes with MinerU2.5-Pro-2605's files), or a config.json")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Random seed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("-o,--output", args->out, "Output directory")->required();
  cmd->add_option("--naming", args->naming,
                  "Tensor names: classic (visual.*, model.*) or prefixed (model.visual.*, "
                  "model.language_model.*)")
      ->check(CLI::IsMember({"classic", "prefixed"}))
      ->capture_default_str();
  cmd->add_option("--max-shard-bytes", args->max_shard_bytes,
                  "Shard the weights (with model.safetensors.index.json); 0 = one file")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto* source = cmd->add_option("--tokenizer-source", args->tokenizer_source,
                                 "Qwen2 tokenizer.json whose vocabulary and merges the written "
                                 "tokenizer.json takes (Qwen2-VL and MinerU tokens are added)");
  cmd->add_flag("--no-tokenizer", args->no_tokenizer, "Write no tokenizer files")->excludes(source);
  cmd->add_option("--max-tokenizer-bytes", args->max_tokenizer_bytes,
                  "Largest tokenizer source accepted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([=, &global] { *exit_code = RunMakeModel(*args, global); });
}

}  // namespace mineru::apps
