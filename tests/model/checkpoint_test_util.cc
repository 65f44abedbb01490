// SPDX-License-Identifier: Apache-2.0
// The shared helpers of checkpoint_test_util.h, and the one global environment of the
// model_checkpoint_test binary: it removes the scratch folder when the tests end.
#include "checkpoint_test_util.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../support/npy.h"
#include "base/json.h"
#include "base/npy.h"
#include "base/thread_pool.h"
#include "devtools/random_checkpoint.h"
#include "model/greedy.h"
#include "model/model.h"
#include "model/safetensors.h"

namespace mineru::model::testing {
namespace {

namespace fs = std::filesystem;

class RemoveScratch : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(ScratchRoot(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveScratch =
    ::testing::AddGlobalTestEnvironment(new RemoveScratch);

// single_doc of the golden data: one 400x300 document page and its prompt.
struct DocInputs {
  std::vector<float> pixels;
  std::vector<GreedyRequest> requests;
};

DocInputs SingleDoc(const ModelConfig& config) {
  const std::string dir = kGoldenDir + "/single_doc";
  DocInputs inputs;
  const NpyArray ids = testing_support::ReadArray(dir + "/input_ids.npy");
  const std::vector<int64_t> mask = testing_support::I64(dir + "/attention_mask.npy");
  const std::vector<int64_t> grid_values = testing_support::I64(dir + "/image_grid_thw.npy");
  std::vector<float> pixels =
      testing_support::F32(kGoldenDir + "/images/doc_400x300.pixel_values.npy");
  if (ids.shape.size() != 2 || mask.empty() || grid_values.empty() || pixels.empty()) {
    return inputs;  // the reads failed the test
  }
  std::vector<ImageGrid> grids;
  for (size_t i = 0; i + 2 < grid_values.size(); i += 3) {
    grids.push_back({grid_values[i], grid_values[i + 1], grid_values[i + 2]});
  }
  auto requests = RequestsFromPaddedBatch(testing_support::I64(ids), mask, ids.shape[0],
                                          ids.shape[1], grids, config);
  EXPECT_TRUE(requests) << requests.error().ToString();
  if (requests) inputs.requests = std::move(*requests);
  inputs.pixels = std::move(pixels);
  return inputs;
}

}  // namespace

ThreadPool& Pool() {
  static ThreadPool* pool = new ThreadPool(2);
  return *pool;
}

// This process's scratch folder; removed when the tests end.
const fs::path& ScratchRoot() {
  static const fs::path root =
      fs::path(::testing::TempDir()) / ("mineru_checkpoint_test." + std::to_string(::getpid()));
  return root;
}

// A fresh empty folder for the running test.
std::string FreshDir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      ScratchRoot() / (std::string(info->test_suite_name()) + "." + info->name()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string Join(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

void WriteBytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteJsonFile(const std::string& path, const Json& json) { WriteBytes(path, json.dump(2)); }

Json ReadJson(const std::string& path) {
  auto json = ReadJsonFile(path, 1 << 24);
  EXPECT_TRUE(json) << json.error().ToString();
  return json ? *json : Json();
}

// The 8-byte little-endian length that starts a safetensors file.
std::string LengthPrefix(uint64_t length) {
  std::string bytes(8, '\0');
  for (int b = 0; b < 8; ++b) bytes[static_cast<size_t>(b)] = static_cast<char>(length >> (8 * b));
  return bytes;
}

std::vector<OwnedTensor> ReadTensors(const std::string& path) {
  auto file = SafetensorsFile::Open(path);
  EXPECT_TRUE(file) << file.error().ToString();
  std::vector<OwnedTensor> tensors;
  if (!file) return tensors;
  for (const TensorInfo& info : file->tensors()) {
    const auto data = file->Data(info);
    tensors.push_back({info.name, info.dtype, info.shape, {data.begin(), data.end()}});
  }
  return tensors;
}

// Writes tensors in the given order with SafetensorsHeader (header padded to 8 bytes).
void WriteSafetensors(const std::string& path, const std::vector<OwnedTensor>& tensors) {
  std::vector<TensorToWrite> entries;
  for (const OwnedTensor& t : tensors) entries.push_back({t.name, t.dtype, t.shape, t.data});
  const std::string header = SafetensorsHeader(entries, {{"format", "pt"}});
  std::string bytes = LengthPrefix(header.size()) + header;
  for (const OwnedTensor& t : tensors) bytes.append(t.data.begin(), t.data.end());
  WriteBytes(path, bytes);
}

OwnedTensor& Named(std::vector<OwnedTensor>& tensors, const std::string& name) {
  for (OwnedTensor& t : tensors) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no tensor " << name;
  static OwnedTensor none;
  return none;
}

// Copies the golden checkpoint's config.json and rewrites its weights through `edit`.
std::string EditedGolden(const std::string& name,
                         const std::function<void(std::vector<OwnedTensor>&)>& edit) {
  const std::string dir = FreshDir(name);
  fs::copy_file(Join(kGoldenModel, "config.json"), Join(dir, "config.json"));
  std::vector<OwnedTensor> tensors = ReadTensors(Join(kGoldenModel, "model.safetensors"));
  edit(tensors);
  WriteSafetensors(Join(dir, "model.safetensors"), tensors);
  return dir;
}

// Symlinks every file of `from` into a fresh folder, so a test can replace one of them.
std::string LinkedCopy(const std::string& from, const std::string& name) {
  const std::string dir = FreshDir(name);
  for (const auto& entry : fs::directory_iterator(from)) {
    fs::create_symlink(fs::absolute(entry.path()), fs::path(dir) / entry.path().filename());
  }
  return dir;
}

// Replaces a linked file by a real one with new contents.
void Replace(const std::string& path, std::string_view bytes) {
  fs::remove(path);
  WriteBytes(path, bytes);
}

// Random tiny checkpoints, written once per process and shared (tests only read them).
std::string SharedRandom(const std::string& name, const Json& config,
                         const devtools::RandomCheckpointOptions& options) {
  static std::map<std::string, std::string>* made = new std::map<std::string, std::string>;
  const auto it = made->find(name);
  if (it != made->end()) return it->second;
  const std::string dir = (ScratchRoot() / "shared" / name).string();
  fs::remove_all(dir);
  const Status status = devtools::WriteRandomCheckpoint(Pool(), config, dir, options);
  EXPECT_TRUE(status) << status.error().ToString();
  (*made)[name] = dir;
  return dir;
}

std::string RandomSeed1() {
  return SharedRandom("seed1", devtools::TinyModelConfig(), {.seed = 1});
}
std::string RandomSeed1Sharded() {
  return SharedRandom("seed1-sharded", devtools::TinyModelConfig(),
                      {.seed = 1, .max_shard_bytes = uint64_t{128} << 10});
}

std::vector<std::string> ShardFiles(const std::string& dir) {
  std::vector<std::string> shards;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("model-", 0) == 0) shards.push_back(file);
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

GreedyResult Greedy(const Model& model, int steps) {
  const DocInputs inputs = SingleDoc(model.config());
  GreedyOptions options;
  options.steps = steps;
  auto result = RunGreedy(model, Pool(), inputs.pixels, inputs.requests, options);
  EXPECT_TRUE(result) << result.error().ToString();
  return result ? std::move(*result) : GreedyResult{};
}

// Same generated ids and bit-identical logits and vision output.
void ExpectSameOutputs(const GreedyResult& a, const GreedyResult& b) {
  ASSERT_EQ(a.sequences.size(), 1u);
  ASSERT_EQ(b.sequences.size(), 1u);
  EXPECT_EQ(a.sequences[0].generated, b.sequences[0].generated);
  const std::vector<float>& x = a.sequences[0].logits_last;
  const std::vector<float>& y = b.sequences[0].logits_last;
  ASSERT_EQ(x.size(), y.size());
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0);
  ASSERT_EQ(a.vision.size(), b.vision.size());
  EXPECT_EQ(std::memcmp(a.vision.data(), b.vision.data(), a.vision.size() * sizeof(float)), 0);
}

}  // namespace mineru::model::testing
