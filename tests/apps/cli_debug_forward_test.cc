// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of `mineru-cpp debug-forward`. The numeric checks repeat a few of the golden
// parity checks (tests/model/golden_test.cc) through the command line, to prove the CLI feeds the
// same inputs to the model and lays its outputs out the way the reference does; bad inputs must
// each end in exit 1 with a message naming the problem, never in a signal. Each test runs the
// binary as a child process (see cli_test_util.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/json.h"
#include "base/npy.h"
#include "cli_test_util.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::CopyGoldenModel;
using testing::Describe;
using testing::F32;
using testing::FailedWith;
using testing::I64;
using testing::kGolden;
using testing::kModel;
using testing::kPatchDim;
using testing::kVocab;
using testing::MaxAbs;
using testing::MaxDiff;
using testing::ReadArray;
using testing::ReadFile;
using testing::RunCli;
using testing::Succeeded;
using testing::TestDir;
using testing::WriteF32;
using testing::WriteFile;
using testing::WriteI64;

// ---------------------------------------------------------------------------------------------
// debug-forward: parity with the golden fp32 files

TEST(DebugForwardTest, SingleDocMatchesGolden) {
  const std::string dump = TestDir() + "/dump";
  const std::string golden = kGolden + "/single_doc";
  const CliResult r = RunCli({"debug-forward", "--precision", "fp32", "--model", kModel,
                              "--pixel-values", kGolden + "/images/doc_400x300.pixel_values.npy",
                              "--grid-thw", golden + "/image_grid_thw.npy", "--input-ids",
                              golden + "/input_ids.npy", "--dump", dump});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_NE(r.out.find("1 sequence(s), 1 image(s), 16 step(s)"), std::string::npos) << Describe(r);

  // Greedy ids and positions are exact; floats get the golden test's fp32 tolerances.
  const NpyArray generated = ReadArray(dump + "/generated_ids.npy");
  EXPECT_EQ(generated.shape, (std::vector<int64_t>{1, 16}));
  EXPECT_EQ(I64(generated), I64(golden + "/fp32/generated_ids.npy"));
  const NpyArray positions = ReadArray(dump + "/positions.npy");
  EXPECT_EQ(positions.shape, (std::vector<int64_t>{3, 1, 181}));
  EXPECT_EQ(I64(positions), I64(golden + "/position_ids.npy"));
  const NpyArray deltas = ReadArray(dump + "/rope_deltas.npy");
  EXPECT_EQ(deltas.shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(I64(deltas), I64(golden + "/rope_deltas.npy"));

  const NpyArray logits = ReadArray(dump + "/logits_last.npy");
  EXPECT_EQ(logits.shape, (std::vector<int64_t>{1, kVocab}));
  EXPECT_LE(MaxDiff(F32(logits), F32(golden + "/fp32/logits_last.npy")), 1e-4);
  const NpyArray vision = ReadArray(dump + "/vision.npy");
  EXPECT_EQ(vision.shape, (std::vector<int64_t>{154, 64}));
  const std::vector<float> golden_vision = F32(golden + "/fp32/vision_merged.npy");
  EXPECT_LE(MaxDiff(F32(vision), golden_vision), 1e-4 * (1 + MaxAbs(golden_vision)));
  // Only what was asked for.
  EXPECT_FALSE(fs::exists(dump + "/logits_all.npy"));
  EXPECT_FALSE(fs::exists(dump + "/trace_vision_block_0.npy"));
}

// Both golden images in one .npy, the way a caller batches them: doc first, then odd.
TEST(DebugForwardTest, BatchDocOddMatchesGolden) {
  const std::string dir = TestDir();
  const std::string dump = dir + "/dump";
  const std::string golden = kGolden + "/batch_doc_odd";
  std::vector<float> pixels = F32(kGolden + "/images/doc_400x300.pixel_values.npy");
  const std::vector<float> odd = F32(kGolden + "/images/odd_333x517.pixel_values.npy");
  pixels.insert(pixels.end(), odd.begin(), odd.end());
  const auto rows = static_cast<int64_t>(pixels.size()) / kPatchDim;
  ASSERT_EQ(rows, 616 + 864);
  ASSERT_NO_FATAL_FAILURE(WriteF32(dir + "/pixels.npy", {rows, kPatchDim}, pixels));
  pixels = {};
  const NpyArray grid = ReadArray(golden + "/image_grid_thw.npy");
  ASSERT_EQ(grid.shape, (std::vector<int64_t>{2, 3}));

  const CliResult r =
      RunCli({"debug-forward", "--precision", "fp32", "--model", kModel, "--pixel-values",
              dir + "/pixels.npy", "--grid-thw", golden + "/image_grid_thw.npy", "--input-ids",
              golden + "/input_ids.npy", "--attention-mask", golden + "/attention_mask.npy",
              "--all-logits", "--trace", "--dump", dump});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_NE(r.out.find("2 sequence(s), 2 image(s), 16 step(s)"), std::string::npos) << Describe(r);

  const NpyArray generated = ReadArray(dump + "/generated_ids.npy");
  EXPECT_EQ(generated.shape, (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(I64(generated), I64(golden + "/fp32/generated_ids.npy"));
  // Padded slots hold 1, as transformers' get_rope_index leaves them.
  const NpyArray positions = ReadArray(dump + "/positions.npy");
  EXPECT_EQ(positions.shape, (std::vector<int64_t>{3, 2, 243}));
  EXPECT_EQ(I64(positions), I64(golden + "/position_ids.npy"));
  EXPECT_EQ(I64(dump + "/rope_deltas.npy"), I64(golden + "/rope_deltas.npy"));
  EXPECT_LE(MaxDiff(F32(dump + "/logits_last.npy"), F32(golden + "/fp32/logits_last.npy")), 1e-4);
  const std::vector<float> golden_vision = F32(golden + "/fp32/vision_merged.npy");
  EXPECT_LE(MaxDiff(F32(dump + "/vision.npy"), golden_vision), 1e-4 * (1 + MaxAbs(golden_vision)));

  // --all-logits: every prompt position of every row, compared on the golden probe ids.
  const std::vector<int64_t> mask = I64(golden + "/attention_mask.npy");
  ASSERT_EQ(mask.size(), 2u * 243u);
  const Json manifest = Json::parse(ReadFile(kGolden + "/manifest.json"), nullptr, false);
  ASSERT_TRUE(manifest.is_object() && manifest.contains("probe_ids"));
  const std::vector<int64_t> probe_ids = manifest["probe_ids"].get<std::vector<int64_t>>();
  ASSERT_EQ(probe_ids.size(), 21u);
  const std::vector<float> probe = F32(golden + "/fp32/logits_probe.npy");
  ASSERT_EQ(probe.size(), 2u * 243u * 21u);
  {
    // 295 MB: read once, compared in place rather than converted.
    const NpyArray all = ReadArray(dump + "/logits_all.npy");
    ASSERT_EQ(all.shape, (std::vector<int64_t>{2, 243, kVocab}));
    ASSERT_EQ(all.dtype, DType::kF32);
    double diff = 0;
    int64_t compared = 0;
    for (int64_t row = 0; row < 2 * 243; ++row) {
      if (mask[static_cast<size_t>(row)] == 0) continue;
      for (size_t k = 0; k < probe_ids.size(); ++k) {
        float ours;
        std::memcpy(&ours, all.bytes.data() + 4 * (row * kVocab + probe_ids[k]), 4);
        diff = std::max(diff, double{std::fabs(ours - probe[static_cast<size_t>(row) * 21 + k])});
        ++compared;
      }
    }
    EXPECT_EQ(compared, (181 + 243) * 21);
    EXPECT_LT(diff, 1e-4);
  }

  // --trace: the vision blocks over all 1480 patches, the decoder over the 424 real tokens.
  for (const auto& [file, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"trace_vision_patch_embed.npy", {1480, 64}},
           {"trace_vision_block_0.npy", {1480, 64}},
           {"trace_vision_block_1.npy", {1480, 64}},
           {"trace_vision_merged.npy", {370, 64}},
           {"trace_decoder_input.npy", {424, 64}},
           {"trace_decoder_layer_0.npy", {424, 64}},
           {"trace_decoder_layer_1.npy", {424, 64}},
           {"trace_decoder_final_norm.npy", {424, 64}}}) {
    ASSERT_TRUE(fs::exists(dump + "/" + file)) << file;
    EXPECT_EQ(ReadArray(dump + "/" + file).shape, shape) << file;
  }
  // The final-norm trace is hidden_states[2] of the golden files at the unpadded positions.
  const std::vector<float> hidden = F32(golden + "/fp32/hidden_states.npy");
  ASSERT_EQ(hidden.size(), 3u * 2u * 243u * 64u);
  std::vector<float> golden_norm;
  for (int64_t row = 0; row < 2 * 243; ++row) {
    if (mask[static_cast<size_t>(row)] == 0) continue;
    const auto at = hidden.begin() + (2 * 2 * 243 + row) * 64;
    golden_norm.insert(golden_norm.end(), at, at + 64);
  }
  EXPECT_LE(MaxDiff(F32(dump + "/trace_decoder_final_norm.npy"), golden_norm),
            1e-4 * (1 + MaxAbs(golden_norm)));
}

// ---------------------------------------------------------------------------------------------
// debug-forward: bad inputs. Each must end in exit 1 with a message naming the problem.

// The golden single_doc inputs; a test replaces one of them.
struct ForwardInputs {
  std::string model = kModel;
  std::string pixels = kGolden + "/images/doc_400x300.pixel_values.npy";
  std::string grid = kGolden + "/single_doc/image_grid_thw.npy";
  std::string ids = kGolden + "/single_doc/input_ids.npy";
  std::string mask;
  std::string dump;
  std::vector<std::string> extra{"--steps", "1"};

  std::vector<std::string> Args() const {
    // fp32: the checks compare with the golden fp32 files at 1e-4.
    std::vector<std::string> args{"debug-forward", "--precision", "fp32",   "--model", model,
                                  "--input-ids",   ids,           "--dump", dump};
    if (!pixels.empty()) args.insert(args.end(), {"--pixel-values", pixels});
    if (!grid.empty()) args.insert(args.end(), {"--grid-thw", grid});
    if (!mask.empty()) args.insert(args.end(), {"--attention-mask", mask});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
};

class DebugForwardErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestDir();
    in_.dump = dir_ + "/dump";
  }
  CliResult Run() const { return RunCli(in_.Args()); }
  // The golden single_doc ids with one value replaced.
  std::string IdsWith(int64_t at, int64_t value) {
    std::vector<int64_t> ids = I64(kGolden + "/single_doc/input_ids.npy");
    ids.at(static_cast<size_t>(at)) = value;
    const std::string path = dir_ + "/ids_" + std::to_string(value) + ".npy";
    WriteI64(path, {1, static_cast<int64_t>(ids.size())}, ids);
    return path;
  }

  std::string dir_;
  ForwardInputs in_;
};

TEST_F(DebugForwardErrorTest, GoldenInputsSucceed) {
  // The baseline every other test in this suite breaks in one place.
  const CliResult r = Run();
  ASSERT_TRUE(Succeeded(r));
  EXPECT_EQ(ReadArray(in_.dump + "/generated_ids.npy").shape, (std::vector<int64_t>{1, 1}));
}

TEST_F(DebugForwardErrorTest, MissingModelDir) {
  in_.model = dir_ + "/no_such_model";
  EXPECT_TRUE(FailedWith(Run(), {in_.model}));
  EXPECT_FALSE(fs::exists(in_.dump)) << "nothing is written when the model does not load";
}

TEST_F(DebugForwardErrorTest, ModelDirWithoutConfig) {
  in_.model = dir_ + "/model";
  fs::create_directories(in_.model);
  fs::copy_file(kModel + "/model.safetensors", in_.model + "/model.safetensors");
  EXPECT_TRUE(FailedWith(Run(), {in_.model + "/config.json"}));
}

TEST_F(DebugForwardErrorTest, ModelDirWithoutWeights) {
  in_.model = dir_ + "/model";
  fs::create_directories(in_.model);
  fs::copy_file(kModel + "/config.json", in_.model + "/config.json");
  EXPECT_TRUE(FailedWith(Run(), {in_.model, "model.safetensors"}));
}

TEST_F(DebugForwardErrorTest, TruncatedSafetensors) {
  in_.model = CopyGoldenModel(dir_);
  const std::string weights = in_.model + "/model.safetensors";
  // Half the file: the header is intact, the tensor data runs past the end.
  fs::resize_file(weights, fs::file_size(weights) / 2);
  EXPECT_TRUE(FailedWith(Run(), {weights}));
  // Cut inside the 8-byte length and inside the header as well.
  fs::resize_file(weights, 5);
  EXPECT_TRUE(FailedWith(Run(), {weights}));
  fs::resize_file(weights, 100);
  EXPECT_TRUE(FailedWith(Run(), {weights}));
}

TEST_F(DebugForwardErrorTest, NotAnNpyFile) {
  in_.ids = dir_ + "/ids.npy";
  WriteFile(in_.ids, "this is not a numpy file\n");
  EXPECT_TRUE(FailedWith(Run(), {in_.ids, ".npy"}));
  WriteFile(in_.ids, "");
  EXPECT_TRUE(FailedWith(Run(), {in_.ids}));
  in_.ids = dir_ + "/missing.npy";
  EXPECT_TRUE(FailedWith(Run(), {in_.ids}));
}

TEST_F(DebugForwardErrorTest, TruncatedNpyData) {
  in_.pixels = dir_ + "/pixels.npy";
  const std::string bytes = ReadFile(kGolden + "/images/doc_400x300.pixel_values.npy");
  WriteFile(in_.pixels, std::string_view(bytes).substr(0, bytes.size() - 4));
  EXPECT_TRUE(FailedWith(Run(), {in_.pixels}));
}

TEST_F(DebugForwardErrorTest, InputIdsOfRank3) {
  const std::vector<int64_t> ids = I64(kGolden + "/single_doc/input_ids.npy");
  in_.ids = dir_ + "/ids.npy";
  WriteI64(in_.ids, {1, 1, static_cast<int64_t>(ids.size())}, ids);
  EXPECT_TRUE(FailedWith(Run(), {in_.ids, "[1, 1, 181]"}));
}

TEST_F(DebugForwardErrorTest, EmptyInputIds) {
  in_.ids = dir_ + "/ids.npy";
  WriteI64(in_.ids, {1, 0}, {});
  in_.pixels.clear();
  in_.grid.clear();
  EXPECT_TRUE(FailedWith(Run(), {"input ids"}));
}

TEST_F(DebugForwardErrorTest, PixelValuesWithWrongColumnCount) {
  in_.pixels = dir_ + "/pixels.npy";
  WriteF32(in_.pixels, {616, kPatchDim - 1}, std::vector<float>(616 * (kPatchDim - 1)));
  EXPECT_TRUE(FailedWith(Run(), {in_.pixels, std::to_string(kPatchDim), "[616, 1175]"}));
}

TEST_F(DebugForwardErrorTest, GridPatchCountDoesNotMatchPixelRows) {
  // The golden grid (1, 22, 28) needs 616 patches; give 600.
  std::vector<float> pixels = F32(kGolden + "/images/doc_400x300.pixel_values.npy");
  pixels.resize(600 * kPatchDim);
  in_.pixels = dir_ + "/pixels.npy";
  WriteF32(in_.pixels, {600, kPatchDim}, pixels);
  EXPECT_TRUE(FailedWith(Run(), {"pixel values", "616 patches"}));
}

TEST_F(DebugForwardErrorTest, GridDisagreesWithImageTokens) {
  // (1, 22, 26) is a valid grid but covers 143 of the prompt's 154 image tokens.
  in_.grid = dir_ + "/grid.npy";
  WriteI64(in_.grid, {1, 3}, {1, 22, 26});
  EXPECT_TRUE(FailedWith(Run(), {"image tokens"}));
  WriteI64(in_.grid, {1, 3}, {1, -22, 28});
  EXPECT_TRUE(FailedWith(Run(), {"grid (1, -22, 28)"}));
  WriteI64(in_.grid, {1, 2}, {22, 28});
  EXPECT_TRUE(FailedWith(Run(), {in_.grid, "[1, 2]"}));
}

TEST_F(DebugForwardErrorTest, GridCountDoesNotMatchImages) {
  in_.grid = dir_ + "/grid.npy";
  WriteI64(in_.grid, {2, 3}, {1, 22, 28, 1, 22, 28});
  EXPECT_TRUE(FailedWith(Run(), {"2 grids", "1 images"}));
  WriteI64(in_.grid, {0, 3}, {});
  EXPECT_TRUE(FailedWith(Run(), {"0 grids"}));
}

TEST_F(DebugForwardErrorTest, TokenIdOutsideVocabulary) {
  in_.ids = IdsWith(3, kVocab);
  EXPECT_TRUE(FailedWith(Run(), {"token id 151936", "[0, 3]", "151936)"}));
  in_.ids = IdsWith(3, -1);
  EXPECT_TRUE(FailedWith(Run(), {"token id -1", "[0, 3]"}));
  in_.ids = IdsWith(3, int64_t{1} << 40);  // would wrap to a valid id as int32
  EXPECT_TRUE(FailedWith(Run(), {"token id 1099511627776"}));
}

TEST_F(DebugForwardErrorTest, AttentionMaskValueTwo) {
  std::vector<int64_t> mask(181, 1);
  mask[5] = 2;
  in_.mask = dir_ + "/mask.npy";
  WriteI64(in_.mask, {1, 181}, mask);
  EXPECT_TRUE(FailedWith(Run(), {"attention mask", "[0, 5]", "2"}));
  WriteI64(in_.mask, {1, 180}, std::vector<int64_t>(180, 1));
  EXPECT_TRUE(FailedWith(Run(), {in_.mask, "[1, 180]", "[1, 181]"}));
}

TEST_F(DebugForwardErrorTest, PixelValuesWithoutGrid) {
  in_.grid.clear();
  EXPECT_TRUE(FailedWith(Run(), {"--pixel-values", "--grid-thw"}));
  in_.grid = ForwardInputs().grid;
  in_.pixels.clear();
  EXPECT_TRUE(FailedWith(Run(), {"--pixel-values", "--grid-thw"}));
}

TEST_F(DebugForwardErrorTest, DumpIsAFile) {
  in_.dump = dir_ + "/file";
  WriteFile(in_.dump, "x");
  EXPECT_TRUE(FailedWith(Run(), {in_.dump}));
}

// The .npy limit is inclusive and applies to every input file.
TEST_F(DebugForwardErrorTest, MaxNpyBytesBoundary) {
  // A text-only prompt, so that the ids file is the only .npy read.
  in_.ids = dir_ + "/ids.npy";
  WriteI64(in_.ids, {1, 8}, {151644, 8948, 198, 2610, 525, 264, 10950, 17847});
  in_.pixels.clear();
  in_.grid.clear();
  const uint64_t size = fs::file_size(in_.ids);
  in_.extra = {"--steps", "2", "--max-npy-bytes", std::to_string(size - 1)};
  EXPECT_TRUE(FailedWith(Run(), {in_.ids, "limit", std::to_string(size)}));
  in_.extra = {"--steps", "2", "--max-npy-bytes", std::to_string(size)};
  ASSERT_TRUE(Succeeded(Run()));
  const NpyArray generated = ReadArray(in_.dump + "/generated_ids.npy");
  EXPECT_EQ(generated.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ReadArray(in_.dump + "/positions.npy").shape, (std::vector<int64_t>{3, 1, 8}));
  EXPECT_FALSE(fs::exists(in_.dump + "/vision.npy")) << "no images, no vision output";
}

TEST_F(DebugForwardErrorTest, ZeroSteps) {
  in_.extra = {"--steps", "0"};
  ASSERT_TRUE(Succeeded(Run()));
  EXPECT_EQ(ReadArray(in_.dump + "/generated_ids.npy").shape, (std::vector<int64_t>{1, 0}));
  EXPECT_LE(MaxDiff(F32(in_.dump + "/logits_last.npy"),
                    F32(kGolden + "/single_doc/fp32/logits_last.npy")),
            1e-4);
}

// A float array where ids belong: the error names the file.
TEST_F(DebugForwardErrorTest, FloatInputIdsNameTheFile) {
  in_.ids = dir_ + "/ids.npy";
  WriteF32(in_.ids, {1, 181}, std::vector<float>(181, 1.0f));
  EXPECT_TRUE(FailedWith(Run(), {in_.ids}));
}

}  // namespace
}  // namespace mineru::apps
