// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp quantize` and `mineru-cpp pack`: write a checkpoint's matrices prepared for compute
// (model/weights_file.h) once, so that every later load maps them read-only instead of preparing
// them (no compute at start, one copy in the page cache for every process on the machine):
//   quantize: the int8 weights `--weights int8` reads;
//   pack:     the float32-contract panels `--precision fp32` reads with the checkpoint's weights.
// Both prepare every matrix exactly as a load without the file would (model/matrix_factory.h),
// so a load from the file computes the same bits.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands.h"
#include "apps/model_options.h"
#include "base/thread_pool.h"
#include "model/model.h"
#include "model/weights_file.h"

namespace mineru::apps {
namespace {

struct WriteArgs {
  std::string model_dir;
  std::string output;  // empty: <model_dir>/<the kind's file name>
  ModelLoadOptions load;
};

int RunWrite(model::WeightsFileKind kind, const WriteArgs& args, const GlobalOptions& global) {
  const auto t0 = std::chrono::steady_clock::now();
  ThreadPool pool(ResolveThreads(global));
  model::ComputeOptions compute;
  if (kind == model::WeightsFileKind::kInt8) {
    compute.weights = model::WeightFormat::kInt8;
  } else {
    compute.precision = model::Precision::kFp32;
    compute.weights = model::WeightFormat::kBf16;
  }
  auto checkpoint = model::Checkpoint::Open(args.model_dir, args.load.Limits());
  if (!checkpoint) return ReportError(checkpoint.error());
  auto weights = model::BindWeights(*checkpoint);
  if (!weights) return ReportError(weights.error());
  const model::MatrixFactory factory(pool, compute, nullptr);  // prepared now, never read back
  auto decoder = model::PackDecoderWeights(factory, weights->decoder);
  if (!decoder) return ReportError(decoder.error());
  auto vision = model::PackVisionWeights(factory, weights->vision);
  if (!vision) return ReportError(vision.error());
  auto tensors = decoder->Matrices();
  for (const auto& entry : vision->Matrices()) tensors.push_back(entry);
  int64_t bytes = 0;
  for (const auto& [name, matrix] : tensors) bytes += matrix->bytes();
  const std::string path =
      args.output.empty() ? args.model_dir + "/" + model::WeightsFileName(kind) : args.output;
  if (Status s = model::WriteWeightsFile(path, kind, checkpoint->fingerprint(), tensors); !s) {
    return ReportError(s.error());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string what = "int8";
  if (kind == model::WeightsFileKind::kPanels) {
    what =
        tensors.empty() ? "packed" : std::string(DTypeName(tensors[0].second->dtype())) + " panel";
  }
  std::printf("%s: %zu %s matrices, %.1f MB, in %.2f s\n", path.c_str(), tensors.size(),
              what.c_str(), static_cast<double>(bytes) / 1e6, seconds);
  return 0;
}

void AddWriteCommand(CLI::App& app, const GlobalOptions& global, int* exit_code,
                     model::WeightsFileKind kind, const char* name, const char* description,
                     const char* output_help) {
  auto* cmd = app.add_subcommand(name, description);
  auto args = std::make_shared<WriteArgs>();
  cmd->add_option("--model", args->model_dir, "Checkpoint directory")->required();
  cmd->add_option("-o,--output", args->output, output_help);
  args->load.Register(*cmd);
  cmd->callback([=, &global] { *exit_code = RunWrite(kind, *args, global); });
}

}  // namespace

void AddQuantizeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  AddWriteCommand(
      app, global, exit_code, model::WeightsFileKind::kInt8, "quantize",
      "Write a checkpoint's int8 weights (per group of 32, float32 scales) for --weights int8",
      "File to write (default: <model>/mineru-q8.bin, which --weights int8 finds)");
}

void AddPackCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  AddWriteCommand(app, global, exit_code, model::WeightsFileKind::kPanels, "pack",
                  "Write a checkpoint's matrices packed into float32-contract panels for "
                  "--precision fp32 (what that precision otherwise packs at every load)",
                  "File to write (default: <model>/mineru-packed.bin, which --precision fp32 "
                  "finds)");
}

}  // namespace mineru::apps
