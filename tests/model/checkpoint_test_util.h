// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the checkpoint tests (safetensors_test.cc, checkpoint_test.cc and
// checkpoint_dtype_test.cc, one binary): an error matcher, fresh scratch folders under
// ::testing::TempDir() (removed when the tests end by the environment checkpoint_test_util.cc
// registers, once per binary), safetensors files written by hand, tiny random checkpoints shared
// by the tests, and greedy runs over the golden single_doc inputs.
//
// Valid tiny checkpoints come from the committed golden model (20 MB) or from
// WriteRandomCheckpoint with TinyModelConfig().
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/json.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "devtools/random_checkpoint.h"
#include "model/greedy.h"
#include "model/model.h"

namespace mineru::model::testing {

inline const std::string kGoldenDir = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny";
inline const std::string kGoldenModel = kGoldenDir + "/model";
inline constexpr int kGoldenTensors = 57;

// Passes when `result` is an error of `code` whose message contains every part.
template <class T>
::testing::AssertionResult FailsWith(const Result<T>& result, ErrorCode code,
                                     const std::vector<std::string>& parts) {
  if (result) return ::testing::AssertionFailure() << "succeeded, expected an error";
  const Error& error = result.error();
  if (error.code != code) {
    return ::testing::AssertionFailure() << "code " << ErrorCodeName(error.code) << ", expected "
                                         << ErrorCodeName(code) << ": " << error.message;
  }
  for (const std::string& part : parts) {
    if (error.message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks \"" << part << "\": " << error.message;
    }
  }
  return ::testing::AssertionSuccess() << error.ToString();
}

// A two-thread pool shared by the whole binary.
ThreadPool& Pool();

// This process's scratch folder; removed when the tests end.
const std::filesystem::path& ScratchRoot();

// A fresh empty folder for the running test.
std::string FreshDir(const std::string& name);

std::string Join(const std::string& dir, const std::string& name);

void WriteBytes(const std::string& path, std::string_view bytes);
std::string ReadBytes(const std::string& path);
void WriteJsonFile(const std::string& path, const Json& json);
Json ReadJson(const std::string& path);

// The 8-byte little-endian length that starts a safetensors file.
std::string LengthPrefix(uint64_t length);

struct OwnedTensor {
  std::string name;
  DType dtype = DType::kBF16;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

std::vector<OwnedTensor> ReadTensors(const std::string& path);

// Writes tensors in the given order with SafetensorsHeader (header padded to 8 bytes).
void WriteSafetensors(const std::string& path, const std::vector<OwnedTensor>& tensors);

// The tensor of that name (a test failure, and a dummy, when there is none).
OwnedTensor& Named(std::vector<OwnedTensor>& tensors, const std::string& name);

// Copies the golden checkpoint's config.json and rewrites its weights through `edit`.
std::string EditedGolden(const std::string& name,
                         const std::function<void(std::vector<OwnedTensor>&)>& edit);

// Symlinks every file of `from` into a fresh folder, so a test can replace one of them.
std::string LinkedCopy(const std::string& from, const std::string& name);

// Replaces a linked file by a real one with new contents.
void Replace(const std::string& path, std::string_view bytes);

// Random tiny checkpoints, written once per process and shared (tests only read them).
std::string SharedRandom(const std::string& name, const Json& config,
                         const devtools::RandomCheckpointOptions& options);
std::string RandomSeed1();
std::string RandomSeed1Sharded();

// The shard files (model-*) of a checkpoint folder, sorted.
std::vector<std::string> ShardFiles(const std::string& dir);

// `steps` greedy steps of `model` on single_doc of the golden data (one 400x300 document page
// and its prompt).
GreedyResult Greedy(const Model& model, int steps);

// Same generated ids and bit-identical logits and vision output.
void ExpectSameOutputs(const GreedyResult& a, const GreedyResult& b);

}  // namespace mineru::model::testing
