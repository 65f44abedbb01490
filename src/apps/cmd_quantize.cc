// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp quantize`: writes a checkpoint's int8 weights (model/quantized_file.h) once, so that
// every later `--weights int8` load maps them read-only instead of quantizing (no compute at
// start, one copy in the page cache for every process on the machine).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands.h"
#include "apps/model_options.h"
#include "base/thread_pool.h"
#include "model/model.h"
#include "model/quantized_file.h"

namespace mineru::apps {
namespace {

struct QuantizeArgs {
  std::string model_dir;
  std::string output;  // empty: <model_dir>/mineru-q8.bin
  ModelLoadOptions load;
};

int RunQuantize(const QuantizeArgs& args, const GlobalOptions& global) {
  const auto t0 = std::chrono::steady_clock::now();
  ThreadPool pool(ResolveThreads(global));
  model::ComputeOptions compute;
  compute.weights = model::WeightFormat::kInt8;
  auto checkpoint = model::Checkpoint::Open(args.model_dir, args.load.Limits());
  if (!checkpoint) return ReportError(checkpoint.error());
  auto weights = model::BindWeights(*checkpoint);
  if (!weights) return ReportError(weights.error());
  const model::MatrixFactory factory(pool, compute, nullptr);
  auto decoder = model::PackDecoderWeights(factory, weights->decoder);
  if (!decoder) return ReportError(decoder.error());
  auto vision = model::PackVisionWeights(factory, weights->vision);
  if (!vision) return ReportError(vision.error());
  std::vector<std::pair<std::string, const ops::Q8Matrix*>> tensors;
  int64_t bytes = 0;
  const auto decoder_matrices = decoder->Matrices();
  const auto vision_matrices = vision->Matrices();
  for (const auto& matrices : {decoder_matrices, vision_matrices}) {
    for (const auto& [name, matrix] : matrices) {
      tensors.emplace_back(name, &matrix->q8());
      bytes += matrix->bytes();
    }
  }
  const std::string path =
      args.output.empty() ? args.model_dir + "/" + model::kQuantizedFileName : args.output;
  if (Status s = model::WriteQuantizedFile(path, checkpoint->fingerprint(), tensors); !s) {
    return ReportError(s.error());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %zu int8 matrices, %.1f MB, in %.2f s\n", path.c_str(), tensors.size(),
              static_cast<double>(bytes) / 1e6, seconds);
  return 0;
}

}  // namespace

void AddQuantizeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "quantize",
      "Write a checkpoint's int8 weights (per group of 32, float32 scales) for --weights int8");
  auto args = std::make_shared<QuantizeArgs>();
  cmd->add_option("--model", args->model_dir, "Checkpoint directory")->required();
  cmd->add_option("-o,--output", args->output,
                  "File to write (default: <model>/mineru-q8.bin, which --weights int8 finds)");
  args->load.Register(*cmd);
  cmd->callback([=, &global] { *exit_code = RunQuantize(*args, global); });
}

}  // namespace mineru::apps
