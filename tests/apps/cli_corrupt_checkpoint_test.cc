// SPDX-License-Identifier: Apache-2.0
// The five ways a checkpoint most often arrives broken, each through the binary: a truncated
// file, a header length past the end of the file, overlapping tensor offsets, an unknown dtype
// and a missing config field. Each must end with exit code 1 and a message that names the file
// (and the tensor or field), never with a crash, for every subcommand that opens a model.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "base/json.h"
#include "cli_test_util.h"

namespace mineru::apps {
namespace {

using testing::CopyGoldenModel;
using testing::FailedWith;
using testing::kGolden;
using testing::ReadFile;
using testing::RunCli;
using testing::TestDir;
using testing::WriteFile;

struct Header {
  uint64_t length = 0;
  std::string json;
  std::string data;
};

Header Split(const std::string& file) {
  Header h;
  std::memcpy(&h.length, file.data(), 8);
  h.json = file.substr(8, h.length);
  h.data = file.substr(8 + h.length);
  return h;
}

std::string Join(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t length = json.size();
  std::memcpy(out.data(), &length, 8);
  return out + json + data;
}

// Rewrites the header JSON of the copy's model.safetensors with `edit`.
template <class Edit>
void EditHeader(const std::string& model, const Edit& edit) {
  const std::string path = model + "/model.safetensors";
  const Header h = Split(ReadFile(path));
  Json json = *ParseJson(h.json, "header");
  edit(json);
  WriteFile(path, Join(json.dump(), h.data));
}

// Every subcommand that opens a model must fail the same way.
void ExpectAllFail(const std::string& model, const std::vector<std::string>& needles) {
  SCOPED_TRACE(model);
  EXPECT_TRUE(FailedWith(RunCli({"inspect", model}), needles));
  EXPECT_TRUE(FailedWith(
      RunCli({"debug-forward", "--model", model, "--input-ids",
              kGolden + "/single_doc/input_ids.npy", "--dump",
              (std::filesystem::path(model).parent_path() / "dump").string(), "--steps", "1"}),
      needles));
  EXPECT_TRUE(FailedWith(RunCli({"bench", "--model", model, "--skip-vision", "--prefill", "4",
                                 "--decode-tokens", "1"}),
                         needles));
}

TEST(CorruptCheckpointTest, TruncatedFile) {
  const std::string model = CopyGoldenModel(TestDir());
  const std::string path = model + "/model.safetensors";
  const std::string bytes = ReadFile(path);
  WriteFile(path, bytes.substr(0, bytes.size() - 1000));
  ExpectAllFail(model, {path, "truncated"});
}

TEST(CorruptCheckpointTest, HeaderLengthPastEndOfFile) {
  const std::string model = CopyGoldenModel(TestDir());
  const std::string path = model + "/model.safetensors";
  std::string bytes = ReadFile(path);
  const uint64_t length = bytes.size();  // 8 + length is past the end
  std::memcpy(bytes.data(), &length, 8);
  WriteFile(path, bytes);
  ExpectAllFail(model, {path, "past the end of the file"});
}

TEST(CorruptCheckpointTest, OverlappingOffsets) {
  const std::string model = CopyGoldenModel(TestDir());
  // Point model.norm.weight's bytes at the start of the data, over another tensor.
  EditHeader(model, [](Json& json) {
    Json& entry = json["model.norm.weight"];
    const int64_t size =
        entry["data_offsets"][1].get<int64_t>() - entry["data_offsets"][0].get<int64_t>();
    entry["data_offsets"] = {0, size};
  });
  ExpectAllFail(model, {model + "/model.safetensors", "overlap"});
}

TEST(CorruptCheckpointTest, UnknownDtype) {
  const std::string model = CopyGoldenModel(TestDir());
  EditHeader(model, [](Json& json) { json["model.norm.weight"]["dtype"] = "Q4_K"; });
  ExpectAllFail(model, {model + "/model.safetensors", "model.norm.weight", "unknown dtype 'Q4_K'"});
}

TEST(CorruptCheckpointTest, MissingConfigField) {
  const std::string model = CopyGoldenModel(TestDir());
  const std::string path = model + "/config.json";
  Json config = *ParseJson(ReadFile(path), "config");
  config.erase("num_hidden_layers");
  WriteFile(path, config.dump());
  ExpectAllFail(model, {path, "num_hidden_layers", "missing"});
}

TEST(CorruptCheckpointTest, TensorWithWrongShape) {
  const std::string model = CopyGoldenModel(TestDir());
  // Same byte count, different shape: only the shape check can catch it.
  EditHeader(model, [](Json& json) {
    json["model.layers.0.mlp.up_proj.weight"]["shape"] = {64, 128};
  });
  ExpectAllFail(model, {model + "/model.safetensors", "model.layers.0.mlp.up_proj.weight",
                        "[64, 128]", "[128, 64]"});
}

}  // namespace
}  // namespace mineru::apps
