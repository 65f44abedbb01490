// SPDX-License-Identifier: Apache-2.0
// The fp32 precision's packed-panels file (model/weights_file.h, `mineru-cpp pack`): written
// from the panels packed at load, it reopens, every matrix of a load that maps it is a view of
// it holding the same bytes, and the model computes the same bits (logits at every position,
// hidden states, vision output, greedy ids) as packing at load, for bf16 panels (the golden
// checkpoint) and f32 panels (an F32 copy). Every malformed file is refused with the code and
// words that say what is wrong, and the header limit holds at its boundary.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../support/npy.h"
#include "base/dtype.h"
#include "base/json.h"
#include "checkpoint_test_util.h"
#include "model/greedy.h"
#include "model/model.h"
#include "model/trace.h"
#include "model/weights_file.h"

namespace mineru::model {
namespace {

using testing::FailsWith;
using testing::FreshDir;
using testing::Join;
using testing::kGoldenDir;
using testing::kGoldenModel;
using testing::LinkedCopy;
using testing::OwnedTensor;
using testing::Pool;
using testing::ReadBytes;
using testing::WriteBytes;

ComputeOptions Fp32(const std::string& packed) {
  ComputeOptions c;
  c.precision = Precision::kFp32;
  c.packed_path = packed;
  return c;
}

std::vector<std::pair<std::string, const ops::PackedMatrix*>> AllMatrices(const Model& m) {
  auto out = m.packed_decoder()->Matrices();
  for (auto& entry : m.packed_vision()->Matrices()) out.push_back(entry);
  return out;
}

// Writes the panels file of `model` to `path`, leaving out tensor `drop` and storing tensor
// `as`'s entry with the bytes and shape of `source`.
void WritePanels(const Model& model, const std::string& path, const std::string& fingerprint,
                 const std::string& drop = "", const std::string& source = "",
                 const std::string& as = "") {
  const auto all = AllMatrices(model);
  std::vector<std::pair<std::string, const ops::PackedMatrix*>> tensors;
  for (const auto& [name, matrix] : all) {
    if (name == drop) continue;
    const ops::PackedMatrix* bytes = matrix;
    for (const auto& [other, m] : all) {
      if (name == as && other == source) bytes = m;
    }
    tensors.emplace_back(name, bytes);
  }
  const Status written = WriteWeightsFile(path, WeightsFileKind::kPanels, fingerprint, tensors);
  ASSERT_TRUE(written) << written.error().ToString();
}

// Everything the golden single_doc run computes: every traced tensor (patch embedding, vision
// blocks, merged vision output, decoder input and each layer's hidden states, final norm), the
// prompt logits at every position, and 8 greedy steps with their logits.
struct Outputs {
  std::map<std::string, std::vector<float>> traced;
  GreedyResult greedy;
};

Outputs Run(const Model& model) {
  const std::string dir = kGoldenDir + "/single_doc";
  const auto ids = testing_support::I64(dir + "/input_ids.npy");
  const auto mask = testing_support::I64(dir + "/attention_mask.npy");
  const auto grid = testing_support::I64(dir + "/image_grid_thw.npy");
  const auto pixels = testing_support::F32(kGoldenDir + "/images/doc_400x300.pixel_values.npy");
  const std::vector<ImageGrid> grids = {{grid[0], grid[1], grid[2]}};
  auto requests = RequestsFromPaddedBatch(ids, mask, 1, static_cast<int64_t>(ids.size()), grids,
                                          model.config());
  EXPECT_TRUE(requests) << requests.error().ToString();
  Outputs out;
  if (!requests) return out;
  const TraceFn trace = [&out](std::string_view name, const float* data, int64_t rows,
                               int64_t cols) {
    out.traced[std::string(name)].assign(data, data + rows * cols);
  };
  GreedyOptions options;
  options.steps = 8;
  options.all_logits = true;
  options.step_logits = true;
  options.trace = &trace;
  auto result = RunGreedy(model, Pool(), pixels, *requests, options);
  EXPECT_TRUE(result) << result.error().ToString();
  if (result) out.greedy = std::move(*result);
  return out;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void ExpectSameBits(const Outputs& a, const Outputs& b) {
  ASSERT_FALSE(a.traced.empty());
  ASSERT_EQ(a.traced.size(), b.traced.size());
  for (const auto& [name, values] : a.traced) {
    ASSERT_TRUE(b.traced.count(name)) << name;
    EXPECT_TRUE(SameBits(values, b.traced.at(name))) << name;
  }
  EXPECT_TRUE(SameBits(a.greedy.vision, b.greedy.vision));
  ASSERT_EQ(a.greedy.sequences.size(), 1u);
  ASSERT_EQ(b.greedy.sequences.size(), 1u);
  const GreedySequence& x = a.greedy.sequences[0];
  const GreedySequence& y = b.greedy.sequences[0];
  ASSERT_FALSE(x.logits_all.empty());
  EXPECT_TRUE(SameBits(x.logits_all, y.logits_all));
  EXPECT_EQ(x.generated, y.generated);
  ASSERT_EQ(x.step_logits.size(), y.step_logits.size());
  for (size_t s = 0; s < x.step_logits.size(); ++s) {
    EXPECT_TRUE(SameBits(x.step_logits[s], y.step_logits[s])) << "step " << s;
  }
}

// Loads `dir` fp32 twice, packing at load and from the panels file written from that load, and
// checks the second views the file (every byte equal, nothing owned) and computes the same bits.
void ExpectFileLoadEqualsPackAtLoad(const std::string& dir, DType panel_dtype) {
  auto at_load = Model::Load(dir, {}, true, &Pool(), Fp32(""));
  ASSERT_TRUE(at_load) << at_load.error().ToString();
  EXPECT_EQ((*at_load)->packed_file(), nullptr);
  const auto theirs = AllMatrices(**at_load);
  for (const auto& [name, matrix] : theirs) {
    ASSERT_EQ(matrix->layout(), ops::WeightLayout::kPanels) << name;
    EXPECT_EQ(matrix->dtype(), panel_dtype) << name;
    EXPECT_EQ(matrix->owned_bytes(), matrix->bytes()) << name;
  }
  const std::string path = FreshDir("file") + "/" + kPackedFileName;
  WritePanels(**at_load, path, (*at_load)->fingerprint());

  auto reopened = WeightsFile::Open(path, WeightsFileKind::kPanels, (*at_load)->fingerprint(), {});
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  EXPECT_EQ(reopened->kind(), WeightsFileKind::kPanels);
  EXPECT_EQ(reopened->tensors(), theirs.size());

  auto mapped = Model::Load(dir, {}, true, &Pool(), Fp32(path));
  ASSERT_TRUE(mapped) << mapped.error().ToString();
  ASSERT_NE((*mapped)->packed_file(), nullptr);
  EXPECT_EQ((*mapped)->quantized_file(), nullptr);
  EXPECT_EQ((*mapped)->packed_file()->path(), path);
  const auto ours = AllMatrices(**mapped);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    const ops::PackedMatrix& a = *ours[i].second;
    const ops::PackedMatrix& b = *theirs[i].second;
    EXPECT_EQ(a.layout(), ops::WeightLayout::kPanels) << ours[i].first;
    EXPECT_EQ(a.owned_bytes(), 0) << ours[i].first;
    EXPECT_EQ(a.dtype(), b.dtype()) << ours[i].first;
    ASSERT_EQ(a.bytes(), b.bytes()) << ours[i].first;
    EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())), 0) << ours[i].first;
  }
  ExpectSameBits(Run(**mapped), Run(**at_load));
}

TEST(PackedFileTest, Bf16PanelsFromTheFileComputeTheSameBitsAsPackingAtLoad) {
  ExpectFileLoadEqualsPackAtLoad(kGoldenModel, DType::kBF16);
}

// An F32 checkpoint packs to f32 panels: the file records F32 per tensor and reads back the same.
TEST(PackedFileTest, F32PanelsFromTheFileComputeTheSameBitsAsPackingAtLoad) {
  const std::string f32 = testing::EditedGolden("f32", [](std::vector<OwnedTensor>& tensors) {
    for (OwnedTensor& t : tensors) {
      std::vector<uint8_t> out(t.data.size() * 2);
      for (size_t i = 0; i < t.data.size() / 2; ++i) {
        uint16_t bits;
        std::memcpy(&bits, t.data.data() + 2 * i, 2);
        const float value = Bf16ToF32(bits);
        std::memcpy(out.data() + 4 * i, &value, 4);
      }
      t.dtype = DType::kF32;
      t.data = std::move(out);
    }
  });
  ExpectFileLoadEqualsPackAtLoad(f32, DType::kF32);

  // The bf16 checkpoint's panels under the F32 checkpoint's fingerprint: same shapes, but not
  // what these weights pack to.
  auto bf16 = Model::Load(kGoldenModel, {}, true, &Pool(), Fp32(""));
  auto f32_model = Model::Load(f32, {}, false);
  ASSERT_TRUE(bf16 && f32_model);
  const std::string path = FreshDir("dtype") + "/panels.bin";
  WritePanels(**bf16, path, (*f32_model)->fingerprint());
  EXPECT_TRUE(FailsWith(Model::Load(f32, {}, true, &Pool(), Fp32(path)), ErrorCode::kCorrupt,
                        {"holds BF16 panels", "pack to F32"}));
}

// <dir>/mineru-packed.bin is found without --packed, by fp32 loads only.
TEST(PackedFileTest, TheFileNextToTheCheckpointIsFoundByFp32LoadsOnly) {
  auto at_load = Model::Load(kGoldenModel, {}, true, &Pool(), Fp32(""));
  ASSERT_TRUE(at_load);
  const std::string dir = LinkedCopy(kGoldenModel, "linked");
  const std::string path = Join(dir, kPackedFileName);
  WritePanels(**at_load, path, (*at_load)->fingerprint());
  auto fp32 = Model::Load(dir, {}, true, &Pool(), Fp32(""));
  ASSERT_TRUE(fp32) << fp32.error().ToString();
  ASSERT_NE((*fp32)->packed_file(), nullptr);
  EXPECT_EQ((*fp32)->packed_file()->path(), path);
  ComputeOptions bf16;
  bf16.precision = Precision::kBf16;
  auto in_place = Model::Load(dir, {}, true, &Pool(), bf16);
  ASSERT_TRUE(in_place);
  EXPECT_EQ((*in_place)->weights_file(), nullptr);
  ComputeOptions int8;
  int8.weights = WeightFormat::kInt8;
  auto quantized = Model::Load(dir, {}, true, &Pool(), int8);
  ASSERT_TRUE(quantized);
  EXPECT_EQ((*quantized)->weights_file(), nullptr);
  // The tied head's panels come from the file; the embedding table is still the checkpoint's.
  EXPECT_EQ((*fp32)->packed_decoder()->lm_head.owned_bytes(), 0);
}

// Each kind writes only its own layout.
TEST(PackedFileTest, WriterRefusesMatricesOfTheOtherLayout) {
  auto at_load = Model::Load(kGoldenModel, {}, true, &Pool(), Fp32(""));
  ASSERT_TRUE(at_load);
  const auto all = AllMatrices(**at_load);
  EXPECT_TRUE(FailsWith(WriteWeightsFile(FreshDir("q8") + "/x.bin", WeightsFileKind::kInt8,
                                         (*at_load)->fingerprint(), all),
                        ErrorCode::kInvalidArgument, {"int8 weights file's layout"}));
}

class PackedFileMalformedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = Model::Load(kGoldenModel, {}, true, &Pool(), Fp32(""));
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    at_load_ = loaded->release();
  }
  static void TearDownTestSuite() { delete at_load_; }

  void SetUp() override {
    dir_ = FreshDir("malformed");
    good_ = dir_ + "/good.bin";
    WritePanels(*at_load_, good_, at_load_->fingerprint());
    bytes_ = ReadBytes(good_);
    ASSERT_GT(bytes_.size(), 8192u);
    for (int i = 0; i < 8; ++i) {
      header_ |= uint64_t{static_cast<uint8_t>(bytes_[8 + i])} << (8 * i);
    }
  }

  // Refused with `code` and every part of `words` (the path is always named).
  ::testing::AssertionResult Refused(const std::string& path, ErrorCode code,
                                     std::vector<std::string> words,
                                     const CheckpointLimits& limits = {}) const {
    words.push_back(std::filesystem::path(path).filename().string());
    return FailsWith(Model::Load(kGoldenModel, limits, true, &Pool(), Fp32(path)), code, words);
  }
  // The good file with its header rewritten by `edit` (padded to the same length, so offsets
  // still point at the tensors).
  std::string Edited(const std::string& name, const std::function<void(Json&)>& edit) const {
    Json json = Json::parse(bytes_.substr(16, header_));
    edit(json);
    std::string text = DumpJson(json);
    EXPECT_LE(text.size(), header_);
    text.resize(header_, ' ');
    std::string out = bytes_;
    out.replace(16, header_, text);
    const std::string path = dir_ + "/" + name;
    WriteBytes(path, out);
    return path;
  }

  static Model* at_load_;
  std::string dir_, good_, bytes_;
  uint64_t header_ = 0;
};
Model* PackedFileMalformedTest::at_load_ = nullptr;

TEST_F(PackedFileMalformedTest, BadMagicTruncationAndAbsenceAreRefused) {
  std::string bad = bytes_;
  bad[0] = 'X';
  WriteBytes(dir_ + "/magic.bin", bad);
  EXPECT_TRUE(Refused(dir_ + "/magic.bin", ErrorCode::kCorrupt,
                      {"not a file of packed panels", "MINERUPK"}));
  WriteBytes(dir_ + "/short.bin", bytes_.substr(0, bytes_.size() - 4096));
  EXPECT_TRUE(Refused(dir_ + "/short.bin", ErrorCode::kCorrupt, {"aligned range"}));
  WriteBytes(dir_ + "/tiny.bin", bytes_.substr(0, 20));
  EXPECT_TRUE(Refused(dir_ + "/tiny.bin", ErrorCode::kCorrupt, {"past the end"}));
  WriteBytes(dir_ + "/empty.bin", "");
  EXPECT_TRUE(Refused(dir_ + "/empty.bin", ErrorCode::kCorrupt, {"MINERUPK"}));
  EXPECT_TRUE(Refused(dir_ + "/absent.bin", ErrorCode::kNotFound, {}));
  WriteBytes(dir_ + "/json.bin",
             bytes_.substr(0, 16) + std::string(header_, 'x') + bytes_.substr(16 + header_));
  EXPECT_TRUE(Refused(dir_ + "/json.bin", ErrorCode::kCorrupt, {}));
}

// An int8 file where panels are expected (and the reverse) is refused naming both kinds.
TEST_F(PackedFileMalformedTest, AFileOfTheOtherKindIsRefusedNamingIt) {
  ComputeOptions int8;
  int8.weights = WeightFormat::kInt8;
  auto quantized = Model::Load(kGoldenModel, {}, true, &Pool(), int8);
  ASSERT_TRUE(quantized);
  const std::string q8 = dir_ + "/" + kQuantizedFileName;
  ASSERT_TRUE(WriteWeightsFile(q8, WeightsFileKind::kInt8, at_load_->fingerprint(),
                               AllMatrices(**quantized)));
  EXPECT_TRUE(Refused(
      q8, ErrorCode::kInvalidArgument,
      {"holds int8 weights", "mineru-cpp quantize", "not packed panels", "mineru-cpp pack"}));
  int8.quantized_path = good_;
  EXPECT_TRUE(FailsWith(Model::Load(kGoldenModel, {}, true, &Pool(), int8),
                        ErrorCode::kInvalidArgument,
                        {"good.bin", "holds packed panels", "not int8 weights"}));
}

TEST_F(PackedFileMalformedTest, WrongFormatLayoutPanelWidthOrDepthBlockIsRefused) {
  EXPECT_TRUE(Refused(Edited("layout.bin", [](Json& j) { j["layout"] = "panels-16"; }),
                      ErrorCode::kCorrupt, {"layout 'panels-16'", "layout 'panels-32'"}));
  EXPECT_TRUE(Refused(Edited("width.bin", [](Json& j) { j["panel_cols"] = 16; }),
                      ErrorCode::kCorrupt, {"panel_cols 16", "reads format 1, panel_cols 32"}));
  EXPECT_TRUE(Refused(Edited("block.bin", [](Json& j) { j["depth_block"] = 512; }),
                      ErrorCode::kCorrupt, {"depth_block 512", "depth_block 1024"}));
  EXPECT_TRUE(Refused(Edited("format.bin", [](Json& j) { j["format"] = 2; }), ErrorCode::kCorrupt,
                      {"format 2"}));
  EXPECT_TRUE(Refused(Edited("nowidth.bin", [](Json& j) { j.erase("panel_cols"); }),
                      ErrorCode::kCorrupt, {"panel_cols -1"}));
  EXPECT_TRUE(Refused(Edited("tensors.bin", [](Json& j) { j["tensors"] = 3; }), ErrorCode::kCorrupt,
                      {"'tensors' must be an object"}));
}

TEST_F(PackedFileMalformedTest, BadTensorEntriesAreRefused) {
  auto entry = [](const std::string& name, const std::string& key, const Json& value) {
    return [=](Json& j) { j["tensors"][name][key] = value; };
  };
  EXPECT_TRUE(Refused(Edited("dtype.bin", entry("decoder.0.o", "dtype", "F16")),
                      ErrorCode::kCorrupt, {"'decoder.0.o'", "'dtype' must be", "F16"}));
  EXPECT_TRUE(
      Refused(Edited("nodtype.bin", [](Json& j) { j["tensors"]["decoder.0.o"].erase("dtype"); }),
              ErrorCode::kCorrupt, {"'dtype' must be"}));
  // F32 panels take twice the bytes the entry records.
  EXPECT_TRUE(Refused(Edited("f32.bin", entry("decoder.0.o", "dtype", "F32")), ErrorCode::kCorrupt,
                      {"'decoder.0.o'", "the layout takes"}));
  EXPECT_TRUE(Refused(Edited("rows.bin", entry("decoder.0.o", "rows", 65)), ErrorCode::kCorrupt,
                      {"'decoder.0.o'", "for [65, 64]"}));
  EXPECT_TRUE(Refused(Edited("negative.bin", entry("decoder.0.o", "cols", -1)), ErrorCode::kCorrupt,
                      {"'cols' must be a non-negative integer"}));
  const Json header = Json::parse(bytes_.substr(16, header_));
  const Json& tensors = header.at("tensors");
  const int64_t offset = tensors["decoder.0.qkv"]["offset"].get<int64_t>();
  EXPECT_TRUE(Refused(Edited("misaligned.bin", entry("decoder.0.qkv", "offset", offset + 64)),
                      ErrorCode::kCorrupt, {"'decoder.0.qkv'", "not an aligned range"}));
  EXPECT_TRUE(Refused(
      Edited("past.bin", entry("decoder.0.qkv", "offset", static_cast<int64_t>(bytes_.size()))),
      ErrorCode::kCorrupt, {"not an aligned range"}));
  // Two tensors of one size at one offset; a tensor inside the header.
  ASSERT_EQ(tensors["decoder.1.qkv"]["bytes"], tensors["decoder.0.qkv"]["bytes"]);
  EXPECT_TRUE(Refused(Edited("overlap.bin", entry("decoder.1.qkv", "offset", offset)),
                      ErrorCode::kCorrupt, {"overlap the header or another tensor"}));
  ASSERT_GT(16 + header_, 4096u);
  EXPECT_TRUE(Refused(Edited("header.bin", entry("decoder.0.o", "offset", 4096)),
                      ErrorCode::kCorrupt, {"overlap the header or another tensor"}));
}

TEST_F(PackedFileMalformedTest, WrongShapeMissingTensorAndOtherCheckpointAreRefused) {
  WritePanels(*at_load_, dir_ + "/shape.bin", at_load_->fingerprint(), "", "decoder.0.qkv",
              "decoder.0.o");
  EXPECT_TRUE(Refused(dir_ + "/shape.bin", ErrorCode::kCorrupt,
                      {"'decoder.0.o' is [", "the checkpoint's is [64, 64]"}));
  WritePanels(*at_load_, dir_ + "/missing.bin", at_load_->fingerprint(), "vision.merger_fc2");
  EXPECT_TRUE(Refused(dir_ + "/missing.bin", ErrorCode::kNotFound, {"'vision.merger_fc2'"}));
  WritePanels(*at_load_, dir_ + "/other.bin", "0123abcd");
  EXPECT_TRUE(Refused(dir_ + "/other.bin", ErrorCode::kInvalidArgument,
                      {"0123abcd", at_load_->fingerprint(), "run `mineru-cpp pack` again"}));
}

// --max-json-bytes bounds the header: exactly its length is accepted, one byte less refused
// naming the flag.
TEST_F(PackedFileMalformedTest, HeaderLimitHoldsAtItsBoundary) {
  CheckpointLimits limits;
  limits.max_json_bytes = static_cast<int64_t>(header_);
  auto at_limit = Model::Load(kGoldenModel, limits, true, &Pool(), Fp32(good_));
  ASSERT_TRUE(at_limit) << at_limit.error().ToString();
  EXPECT_NE((*at_limit)->packed_file(), nullptr);
  limits.max_json_bytes = static_cast<int64_t>(header_) - 1;
  EXPECT_TRUE(Refused(good_, ErrorCode::kResourceExhausted,
                      {"header of " + std::to_string(header_) + " bytes", "--max-json-bytes"},
                      limits));
}

}  // namespace
}  // namespace mineru::model
