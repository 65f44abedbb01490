// SPDX-License-Identifier: Apache-2.0
// mineru-cpp debug-forward: runs the model on given token ids and pixel values and dumps what
// it computed as .npy files, for comparison with any reference dump (docs/DEBUG_FORWARD.md).
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "apps/commands.h"
#include "apps/model_options.h"
#include "base/npy.h"
#include "model/greedy.h"
#include "model/model.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

struct DebugForwardArgs {
  std::string model_dir;
  std::string pixel_values, grid_thw, input_ids, attention_mask;
  std::string dump;
  int steps = 16;
  bool all_logits = false;
  bool trace = false;
  uint64_t max_npy_bytes = kDefaultNpyMaxBytes;
  ModelLoadOptions load;
};

// Adds the file name to a conversion error ("expected an integer array").
template <class T>
Result<T> Named(Result<T> result, const std::string& path) {
  if (!result) return tl::unexpected(WithContext(result.error(), path));
  return result;
}

// "vision.block.3" -> "trace_vision_block_3.npy"
std::string TraceFile(std::string_view name) {
  std::string file = "trace_";
  for (char ch : name) file += ch == '.' ? '_' : ch;
  return file + ".npy";
}

Status Run(const DebugForwardArgs& args, const GlobalOptions& global) {
  MINERU_ASSIGN_OR_RETURN(auto model,
                          model::Model::Load(args.model_dir, args.load.Limits(),
                                             /*pack=*/true, nullptr, args.load.Compute()));
  const model::ModelConfig& config = model->config();

  MINERU_ASSIGN_OR_RETURN(NpyArray ids_array, ReadNpy(args.input_ids, args.max_npy_bytes));
  if (ids_array.shape.empty() || ids_array.shape.size() > 2) {
    return Fail(ErrorCode::kInvalidArgument,
                "{}: input ids must be [length] or [batch, length], got {}", args.input_ids,
                ids_array.ShapeString());
  }
  const int64_t batch = ids_array.shape.size() == 2 ? ids_array.shape[0] : 1;
  const int64_t length = ids_array.shape.back();
  MINERU_ASSIGN_OR_RETURN(std::vector<int64_t> ids, Named(ids_array.ToI64(), args.input_ids));
  std::vector<int64_t> mask(ids.size(), 1);
  if (!args.attention_mask.empty()) {
    MINERU_ASSIGN_OR_RETURN(NpyArray mask_array, ReadNpy(args.attention_mask, args.max_npy_bytes));
    if (mask_array.NumElements() != batch * length) {
      return Fail(ErrorCode::kInvalidArgument, "{}: attention mask {} does not match input ids {}",
                  args.attention_mask, mask_array.ShapeString(), ids_array.ShapeString());
    }
    MINERU_ASSIGN_OR_RETURN(mask, Named(mask_array.ToI64(), args.attention_mask));
  }
  std::vector<model::ImageGrid> grids;
  std::vector<float> pixels;
  if (!args.grid_thw.empty() || !args.pixel_values.empty()) {
    if (args.grid_thw.empty() || args.pixel_values.empty()) {
      return Fail(ErrorCode::kInvalidArgument, "--pixel-values and --grid-thw go together");
    }
    MINERU_ASSIGN_OR_RETURN(NpyArray grid_array, ReadNpy(args.grid_thw, args.max_npy_bytes));
    if (grid_array.shape.empty() || grid_array.shape.back() != 3 || grid_array.shape.size() > 2) {
      return Fail(ErrorCode::kInvalidArgument, "{}: grid must be [images, 3], got {}",
                  args.grid_thw, grid_array.ShapeString());
    }
    MINERU_ASSIGN_OR_RETURN(std::vector<int64_t> g, Named(grid_array.ToI64(), args.grid_thw));
    for (size_t i = 0; i + 2 < g.size(); i += 3) grids.push_back({g[i], g[i + 1], g[i + 2]});
    MINERU_ASSIGN_OR_RETURN(NpyArray pixel_array, ReadNpy(args.pixel_values, args.max_npy_bytes));
    if (pixel_array.shape.size() != 2 || pixel_array.shape[1] != config.vision.patch_dim()) {
      return Fail(ErrorCode::kInvalidArgument, "{}: pixel values must be [patches, {}], got {}",
                  args.pixel_values, config.vision.patch_dim(), pixel_array.ShapeString());
    }
    MINERU_ASSIGN_OR_RETURN(pixels, Named(pixel_array.ToF32(), args.pixel_values));
  }
  MINERU_ASSIGN_OR_RETURN(auto requests,
                          model::RequestsFromPaddedBatch(ids, mask, batch, length, grids, config));

  std::error_code ec;
  fs::create_directories(args.dump, ec);
  if (ec) return Fail(ErrorCode::kIo, "{}: cannot create: {}", args.dump, ec.message());
  const fs::path out(args.dump);
  Status trace_status = OkStatus();
  model::TraceFn trace = [&](std::string_view name, const float* data, int64_t rows, int64_t cols) {
    const int64_t shape[] = {rows, cols};
    if (trace_status)
      trace_status = WriteNpy((out / TraceFile(name)).string(), DType::kF32, shape, data);
  };
  model::GreedyOptions options;
  options.steps = args.steps;
  options.all_logits = args.all_logits;
  options.trace = args.trace ? &trace : nullptr;
  ThreadPool pool(ResolveThreads(global));
  const auto start = std::chrono::steady_clock::now();
  MINERU_ASSIGN_OR_RETURN(model::GreedyResult result,
                          model::RunGreedy(*model, pool, pixels, requests, options));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MINERU_RETURN_IF_ERROR(trace_status);

  const int64_t d = config.text.hidden_size, vocab = config.text.vocab_size;
  if (!result.vision.empty()) {
    const int64_t shape[] = {static_cast<int64_t>(result.vision.size()) / d, d};
    MINERU_RETURN_IF_ERROR(
        WriteNpy((out / "vision.npy").string(), DType::kF32, shape, result.vision.data()));
  }
  // Per-row outputs laid back onto the padded [batch, length] grid.
  std::vector<float> logits_last(static_cast<size_t>(batch * vocab));
  std::vector<int64_t> positions(static_cast<size_t>(3 * batch * length), 1);  // pads hold 1
  std::vector<int64_t> deltas(static_cast<size_t>(batch));
  std::vector<int64_t> generated(static_cast<size_t>(batch * args.steps));
  std::vector<float> logits_all(args.all_logits ? static_cast<size_t>(batch * length * vocab) : 0);
  for (int64_t b = 0; b < batch; ++b) {
    const model::GreedySequence& seq = result.sequences[static_cast<size_t>(b)];
    std::copy(seq.logits_last.begin(), seq.logits_last.end(), logits_last.begin() + b * vocab);
    int64_t token = 0;
    for (int64_t i = 0; i < length; ++i) {
      if (mask[static_cast<size_t>(b * length + i)] == 0) continue;
      for (int64_t axis = 0; axis < 3; ++axis) {
        positions[static_cast<size_t>((axis * batch + b) * length + i)] =
            seq.positions.positions[static_cast<size_t>(token)][static_cast<size_t>(axis)];
      }
      if (args.all_logits) {
        std::copy_n(seq.logits_all.begin() + token * vocab, vocab,
                    logits_all.begin() + (b * length + i) * vocab);
      }
      ++token;
    }
    deltas[static_cast<size_t>(b)] = seq.positions.next_position - length;
    for (int s = 0; s < args.steps; ++s) {
      generated[static_cast<size_t>(b * args.steps + s)] = seq.generated[static_cast<size_t>(s)];
    }
  }
  const int64_t logits_shape[] = {batch, vocab};
  const int64_t positions_shape[] = {3, batch, length};
  const int64_t deltas_shape[] = {batch, 1};
  const int64_t generated_shape[] = {batch, args.steps};
  MINERU_RETURN_IF_ERROR(
      WriteNpy((out / "logits_last.npy").string(), DType::kF32, logits_shape, logits_last.data()));
  MINERU_RETURN_IF_ERROR(
      WriteNpy((out / "positions.npy").string(), DType::kI64, positions_shape, positions.data()));
  MINERU_RETURN_IF_ERROR(
      WriteNpy((out / "rope_deltas.npy").string(), DType::kI64, deltas_shape, deltas.data()));
  MINERU_RETURN_IF_ERROR(WriteNpy((out / "generated_ids.npy").string(), DType::kI64,
                                  generated_shape, generated.data()));
  if (args.all_logits) {
    const int64_t all_shape[] = {batch, length, vocab};
    MINERU_RETURN_IF_ERROR(
        WriteNpy((out / "logits_all.npy").string(), DType::kF32, all_shape, logits_all.data()));
  }
  std::printf("%lld sequence(s), %zu image(s), %d step(s) in %.3f s; wrote %s\n",
              static_cast<long long>(batch), grids.size(), args.steps, seconds, args.dump.c_str());
  return OkStatus();
}

}  // namespace

void AddDebugForwardCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "debug-forward", "Run the model on token ids and pixel values; dump its outputs as .npy");
  auto args = std::make_shared<DebugForwardArgs>();
  cmd->add_option("--model", args->model_dir, "Checkpoint directory")->required();
  cmd->add_option("--input-ids", args->input_ids, "int .npy, [length] or [batch, length]")
      ->required();
  cmd->add_option("--attention-mask", args->attention_mask,
                  "int .npy like --input-ids: 1 = token, 0 = padding (default: all 1)");
  cmd->add_option("--pixel-values", args->pixel_values,
                  "float .npy [patches, C*T*P*P]: every image's patches, in prompt order");
  cmd->add_option("--grid-thw", args->grid_thw, "int .npy [images, 3]: (t, h, w) per image");
  cmd->add_option("--steps", args->steps, "Greedy tokens to generate per sequence")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_flag("--all-logits", args->all_logits,
                "Also write logits_all.npy [batch, length, vocab]");
  cmd->add_flag("--trace", args->trace,
                "Also write trace_<name>.npy for each vision block and decoder layer");
  cmd->add_option("--max-npy-bytes", args->max_npy_bytes, "Largest .npy input accepted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--dump", args->dump, "Output directory")->required();
  args->load.Register(*cmd);
  cmd->callback([=, &global] {
    const Status status = Run(*args, global);
    *exit_code = status ? 0 : ReportError(status.error());
  });
}

}  // namespace mineru::apps
