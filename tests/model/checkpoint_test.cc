// SPDX-License-Identifier: Apache-2.0
// SafetensorsFile, Checkpoint and Model::Load on hand-made bad files and on the checkpoint
// layouts found in the wild (one file or shards, classic or prefixed tensor names, tied or
// untied lm_head, BF16 / F16 / F32). A bad file must come back as an Error (never a crash),
// with the expected code and a message naming the file and the tensor or field at fault.
//
// Files go to fresh folders under ::testing::TempDir(). Valid tiny checkpoints come from the
// committed golden model (20 MB) or from WriteRandomCheckpoint with TinyModelConfig().
#include "model/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/json.h"
#include "base/npy.h"
#include "base/thread_pool.h"
#include "model/greedy.h"
#include "model/model.h"
#include "model/random_checkpoint.h"
#include "model/safetensors.h"
#include "model/weights.h"

namespace mineru::model {
namespace {

namespace fs = std::filesystem;

const std::string kGoldenDir = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny";
const std::string kGoldenModel = kGoldenDir + "/model";
constexpr int kGoldenTensors = 57;

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

class RemoveScratch : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(ScratchRoot(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveScratch =
    ::testing::AddGlobalTestEnvironment(new RemoveScratch);

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

struct OwnedTensor {
  std::string name;
  DType dtype = DType::kBF16;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

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
                         const RandomCheckpointOptions& options) {
  static std::map<std::string, std::string>* made = new std::map<std::string, std::string>;
  const auto it = made->find(name);
  if (it != made->end()) return it->second;
  const std::string dir = (ScratchRoot() / "shared" / name).string();
  fs::remove_all(dir);
  const Status status = WriteRandomCheckpoint(Pool(), config, dir, options);
  EXPECT_TRUE(status) << status.error().ToString();
  (*made)[name] = dir;
  return dir;
}

std::string RandomSeed1() { return SharedRandom("seed1", TinyModelConfig(), {.seed = 1}); }
std::string RandomSeed1Sharded() {
  return SharedRandom("seed1-sharded", TinyModelConfig(),
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

// ---------------------------------------------------------------------------------------------
// SafetensorsFile

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("st");
    path_ = Join(dir_, "test.safetensors");
  }

  // Writes raw bytes to a new file of this test; returns its path.
  std::string Write(std::string_view bytes) {
    const std::string path = Join(dir_, "file" + std::to_string(count_++) + ".safetensors");
    WriteBytes(path, bytes);
    return path;
  }
  // Replaces path_ by a file of the given header text and data, and opens it. (Renamed into
  // place, so files opened before keep their old contents.)
  Result<SafetensorsFile> Open(const std::string& header, const std::string& data,
                               uint64_t max_header = kSafetensorsMaxHeaderBytes) {
    WriteBytes(path_ + ".tmp", LengthPrefix(header.size()) + header + data);
    fs::rename(path_ + ".tmp", path_);
    return SafetensorsFile::Open(path_, max_header);
  }

  std::string dir_;
  std::string path_;  // the file Open writes
  int count_ = 0;
};

TEST_F(SafetensorsTest, ReadsWhatSafetensorsHeaderWrites) {
  const std::vector<OwnedTensor> tensors = {
      {"b.weight", DType::kBF16, {2, 3}, std::vector<uint8_t>(12, 7)},
      {"a.f32", DType::kF32, {3}, std::vector<uint8_t>(12, 9)},
      {"empty", DType::kF16, {0, 4}, {}},
      {"ids", DType::kI64, {1}, std::vector<uint8_t>(8, 1)},
  };
  const std::string path = Join(dir_, "ok.safetensors");
  WriteSafetensors(path, tensors);
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file) << file.error().ToString();
  EXPECT_EQ(file->path(), path);
  EXPECT_EQ(file->metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  ASSERT_EQ(file->tensors().size(), tensors.size());
  for (const OwnedTensor& want : tensors) {
    SCOPED_TRACE(want.name);
    const TensorInfo* got = nullptr;
    for (const TensorInfo& info : file->tensors()) got = info.name == want.name ? &info : got;
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->dtype, want.dtype);
    EXPECT_EQ(got->shape, want.shape);
    EXPECT_EQ(got->bytes, want.data.size());
    const auto data = file->Data(*got);
    EXPECT_EQ(std::vector<uint8_t>(data.begin(), data.end()), want.data);
  }
}

TEST_F(SafetensorsTest, AcceptsHeaderOrderUnlikeDataOrderAndPadding) {
  // Entries need not be listed in offset order; trailing spaces pad the header.
  auto file = Open(R"({"z":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                   R"("a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"__metadata__":{}}   )",
                   "wxyz");
  ASSERT_TRUE(file) << file.error().ToString();
  ASSERT_EQ(file->tensors().size(), 2u);
  for (const TensorInfo& info : file->tensors()) {
    const auto data = file->Data(info);
    EXPECT_EQ(std::string(data.begin(), data.end()), info.name == "z" ? "wx" : "yz");
  }
  // No tensors at all is a valid (empty) file.
  auto empty = Open("{}", "");
  ASSERT_TRUE(empty) << empty.error().ToString();
  EXPECT_TRUE(empty->tensors().empty());
}

TEST_F(SafetensorsTest, MissingFileAndDirectory) {
  const std::string missing = Join(dir_, "missing.safetensors");
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(missing), ErrorCode::kNotFound, {missing}));
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(dir_), ErrorCode::kInvalidArgument, {dir_}));
}

TEST_F(SafetensorsTest, EmptyAndShortFiles) {
  const std::string empty = Write("");
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(empty), ErrorCode::kCorrupt, {empty, "0 bytes"}));
  const std::string short_file = Write(std::string("\x02\x00\x00\x00\x00", 5));
  EXPECT_TRUE(
      FailsWith(SafetensorsFile::Open(short_file), ErrorCode::kCorrupt, {short_file, "5 bytes"}));
  const std::string seven = Write(std::string(7, '\0'));
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(seven), ErrorCode::kCorrupt, {seven, "7 bytes"}));
  // Exactly 8 bytes: a zero-length header, which is not a JSON object.
  const std::string eight = Write(std::string(8, '\0'));
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(eight), ErrorCode::kCorrupt, {eight, "JSON"}));
}

TEST_F(SafetensorsTest, TruncatedData) {
  // The header is intact; the data was cut after 5 of its 8 bytes.
  EXPECT_TRUE(FailsWith(
      Open(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(5, '\0')),
      ErrorCode::kCorrupt, {path_, "'w'", "end 8", "5 bytes", "truncated"}));
  // The last of two tensors lost.
  EXPECT_TRUE(FailsWith(Open(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                             std::string(4, '\0')),
                        ErrorCode::kCorrupt, {path_, "'b'", "truncated"}));
}

TEST_F(SafetensorsTest, HeaderLengthPastEndOfFile) {
  const std::string header = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  // Length field says 1000; 56 bytes follow.
  const std::string path = Write(LengthPrefix(1000) + header + "x");
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(path), ErrorCode::kCorrupt,
                        {path, "1000 bytes", "past the end"}));
  // One byte too many: the header would swallow the data's only byte and more.
  const std::string off_by_one = Write(LengthPrefix(header.size() + 2) + header + "x");
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(off_by_one), ErrorCode::kCorrupt,
                        {off_by_one, "past the end"}));
}

TEST_F(SafetensorsTest, HeaderSizeLimitBoundary) {
  const std::string header = R"({"w":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}  )";
  const uint64_t n = header.size();
  auto at_limit = Open(header, "abc", /*max_header=*/n);
  ASSERT_TRUE(at_limit) << at_limit.error().ToString();
  EXPECT_EQ(at_limit->tensors().size(), 1u);
  EXPECT_TRUE(FailsWith(Open(header, "abc", /*max_header=*/n - 1), ErrorCode::kResourceExhausted,
                        {path_, std::to_string(n) + " bytes", std::to_string(n - 1)}));
  // The default limit (100 MB): the length is refused before anything is read past it, even
  // when it also runs past the end of the file.
  const std::string huge = Write(LengthPrefix(kSafetensorsMaxHeaderBytes + 1) + header);
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(huge), ErrorCode::kResourceExhausted,
                        {huge, std::to_string(kSafetensorsMaxHeaderBytes)}));
  const std::string max64 = Write(LengthPrefix(~uint64_t{0}) + header);
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(max64), ErrorCode::kResourceExhausted, {max64}));
  // Without a limit, the end of the file still stops it.
  EXPECT_TRUE(FailsWith(SafetensorsFile::Open(max64, ~uint64_t{0}), ErrorCode::kCorrupt,
                        {max64, "past the end"}));
}

TEST_F(SafetensorsTest, HeaderNotJson) {
  EXPECT_TRUE(FailsWith(Open(R"({"w": {"dtype": "U8", )", ""), ErrorCode::kCorrupt,
                        {path_, "not valid JSON"}));
  EXPECT_TRUE(FailsWith(Open(R"({"w": nope})", ""), ErrorCode::kCorrupt, {path_, "JSON"}));
  EXPECT_TRUE(FailsWith(Open("\x89PNG\r\n\x1a\n", ""), ErrorCode::kCorrupt, {path_, "JSON"}));
  // JSON followed by garbage.
  EXPECT_TRUE(FailsWith(Open(R"({} {})", ""), ErrorCode::kCorrupt, {path_, "JSON"}));
  // A tensor name that is not UTF-8.
  EXPECT_TRUE(FailsWith(Open("{\"\xff\xfe\": {}}", ""), ErrorCode::kCorrupt, {path_, "JSON"}));
}

TEST_F(SafetensorsTest, HeaderNotAnObject) {
  EXPECT_TRUE(FailsWith(Open("[1, 2, 3]", ""), ErrorCode::kCorrupt, {path_, "not a JSON object"}));
  EXPECT_TRUE(FailsWith(Open(R"("text")", ""), ErrorCode::kCorrupt, {path_, "not a JSON object"}));
  EXPECT_TRUE(FailsWith(Open("42", ""), ErrorCode::kCorrupt, {path_, "not a JSON object"}));
  // Leading whitespace: the format requires the header to start with '{'.
  EXPECT_TRUE(FailsWith(Open(" {}", ""), ErrorCode::kCorrupt, {path_, "not a JSON object"}));
  // An entry that is not an object.
  EXPECT_TRUE(FailsWith(Open(R"({"w": [0, 1]})", ""), ErrorCode::kCorrupt, {path_, "'w'"}));
  EXPECT_TRUE(FailsWith(Open(R"({"__metadata__": [1]})", ""), ErrorCode::kCorrupt,
                        {path_, "'__metadata__'"}));
  EXPECT_TRUE(FailsWith(Open(R"({"__metadata__": {"format": 1}})", ""), ErrorCode::kCorrupt,
                        {path_, "'format'"}));
}

TEST_F(SafetensorsTest, DeeplyNestedHeaderIsAnErrorNotACrash) {
  // 200,000 levels inside one entry: the parser and the destructor must not recurse that deep.
  const int depth = 200000;
  const std::string header = R"({"w":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
  EXPECT_TRUE(FailsWith(Open(header, ""), ErrorCode::kCorrupt, {path_, "'w'"}));
}

TEST_F(SafetensorsTest, UnknownDType) {
  for (const std::string dtype : {"F8_E4M3", "Q4", "f32", "", "BF8"}) {
    SCOPED_TRACE(dtype);
    EXPECT_TRUE(FailsWith(
        Open(R"({"w":{"dtype":")" + dtype + R"(","shape":[1],"data_offsets":[0,1]}})", "x"),
        ErrorCode::kUnsupported, {path_, "'w'", "unknown dtype '" + dtype + "'"}));
  }
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,1]}})", "x"),
                        ErrorCode::kCorrupt, {path_, "'w'", "'dtype'"}));
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", "x"),
                        ErrorCode::kCorrupt, {path_, "'w'", "'dtype'"}));
}

TEST_F(SafetensorsTest, ShapeSizeMismatch) {
  // F32 [3] needs 12 bytes; the offsets give 8.
  EXPECT_TRUE(FailsWith(
      Open(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
      ErrorCode::kCorrupt, {path_, "'w'", "8 bytes", "need 12"}));
  // BF16 [2, 2] needs 8 bytes; 16 given.
  EXPECT_TRUE(FailsWith(
      Open(R"({"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,16]}})", std::string(16, '\0')),
      ErrorCode::kCorrupt, {path_, "'w'", "need 8"}));
  // A zero dimension needs no bytes.
  EXPECT_TRUE(FailsWith(
      Open(R"({"w":{"dtype":"F32","shape":[0,5],"data_offsets":[0,4]}})", std::string(4, '\0')),
      ErrorCode::kCorrupt, {path_, "'w'", "need 0"}));
  // A shape whose byte count overflows 64 bits.
  EXPECT_TRUE(FailsWith(
      Open(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
           std::string(8, '\0')),
      ErrorCode::kCorrupt, {path_, "'w'", "overflows"}));
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", std::string(4, 0)),
                        ErrorCode::kCorrupt, {path_, "'w'", "'shape'"}));
  EXPECT_TRUE(FailsWith(
      Open(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", std::string(4, 0)),
      ErrorCode::kCorrupt, {path_, "'w'", "'shape'"}));
}

TEST_F(SafetensorsTest, NegativeDimension) {
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,0]}})", ""),
                        ErrorCode::kCorrupt, {path_, "'w'", "negative dimension -2"}));
  // Two negatives whose product is positive are still refused.
  EXPECT_TRUE(FailsWith(
      Open(R"({"w":{"dtype":"U8","shape":[-2,-2],"data_offsets":[0,4]}})", std::string(4, '\0')),
      ErrorCode::kCorrupt, {path_, "'w'", "negative dimension"}));
}

TEST_F(SafetensorsTest, DataOffsetsMustBeAnInterval) {
  const std::string data(8, '\0');
  for (const std::string offsets : {"[0]", "[0,4,8]", "[]", R"("0-8")", "{}", "null", "8"}) {
    SCOPED_TRACE(offsets);
    EXPECT_TRUE(
        FailsWith(Open(R"({"w":{"dtype":"U8","shape":[8],"data_offsets":)" + offsets + "}}", data),
                  ErrorCode::kCorrupt, {path_, "'w'", "data_offsets"}));
  }
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"dtype":"U8","shape":[8]}})", data), ErrorCode::kCorrupt,
                        {path_, "'w'", "data_offsets"}));
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[8,4]}})", data),
                        ErrorCode::kCorrupt, {path_, "'w'", "[8, 4]", "not an interval"}));
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[-4,0]}})", data),
                        ErrorCode::kCorrupt, {path_, "'w'", "not an interval"}));
  EXPECT_TRUE(FailsWith(Open(R"({"w":{"dtype":"U8","shape":[8],"data_offsets":[0.0,8.0]}})", data),
                        ErrorCode::kCorrupt, {path_, "'w'", "data_offsets"}));
}

TEST_F(SafetensorsTest, OverlappingTensors) {
  EXPECT_TRUE(FailsWith(Open(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                             std::string(12, '\0')),
                        ErrorCode::kCorrupt, {path_, "'a'", "'b'", "overlap"}));
  // Two names for the same bytes.
  EXPECT_TRUE(FailsWith(Open(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                             std::string(8, '\0')),
                        ErrorCode::kCorrupt, {path_, "'a'", "'b'", "overlap"}));
  // One inside another.
  EXPECT_TRUE(FailsWith(Open(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
                             std::string(8, '\0')),
                        ErrorCode::kCorrupt, {path_, "'a'", "'b'", "overlap"}));
}

TEST_F(SafetensorsTest, HoleBetweenTensors) {
  EXPECT_TRUE(FailsWith(Open(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                             std::string(12, '\0')),
                        ErrorCode::kCorrupt, {path_, "4 unused bytes", "'b'"}));
  // A hole before the first tensor.
  EXPECT_TRUE(FailsWith(
      Open(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})", std::string(6, '\0')),
      ErrorCode::kCorrupt, {path_, "2 unused bytes", "'a'"}));
}

TEST_F(SafetensorsTest, TrailingBytes) {
  EXPECT_TRUE(FailsWith(
      Open(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(11, '\0')),
      ErrorCode::kCorrupt, {path_, "3 bytes after the last tensor"}));
  EXPECT_TRUE(FailsWith(Open("{}", "xy"), ErrorCode::kCorrupt, {path_, "2 bytes after"}));
}

TEST_F(SafetensorsTest, DuplicateTensorName) {
  // nlohmann keeps the last of duplicate keys; the format forbids them.
  EXPECT_TRUE(FailsWith(Open(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                             std::string(8, '\0')),
                        ErrorCode::kCorrupt, {path_, "'a'", "twice"}));
  // Nested duplicate keys inside an entry are not tensor names.
  auto nested = Open(R"({"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                     std::string(4, '\0'));
  EXPECT_TRUE(nested) << nested.error().ToString();
}

// ---------------------------------------------------------------------------------------------
// Checkpoint::Open and Model::Load

TEST(CheckpointOpenTest, GoldenCheckpoint) {
  auto checkpoint = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->dir(), kGoldenModel);
  EXPECT_EQ(static_cast<int>(checkpoint->tensors().size()), kGoldenTensors);
  EXPECT_EQ(checkpoint->files(), std::vector<std::string>{Join(kGoldenModel, "model.safetensors")});
  EXPECT_FALSE(checkpoint->Has("lm_head.weight"));
  EXPECT_TRUE(checkpoint->tied_embeddings());
  EXPECT_EQ(checkpoint->config().text.hidden_size, 64);
  EXPECT_EQ(checkpoint->num_bytes(), 2 * static_cast<uint64_t>(checkpoint->num_parameters()));
  for (const auto& [name, tensor] : checkpoint->tensors()) {
    EXPECT_EQ(tensor.info->dtype, DType::kBF16) << name;
  }
  // A few exact shapes of the golden model.
  const int64_t embed[] = {151936, 64};
  EXPECT_TRUE(checkpoint->Matrix("model.embed_tokens.weight", embed));
  const int64_t patch[] = {64, 3, 2, 14, 14};
  auto patch_view = checkpoint->Matrix("visual.patch_embed.proj.weight", patch);
  ASSERT_TRUE(patch_view) << patch_view.error().ToString();
  EXPECT_EQ(patch_view->rows, 64);
  EXPECT_EQ(patch_view->cols, 3 * 2 * 14 * 14);
  EXPECT_TRUE(FailsWith(checkpoint->Vector("model.norm.weight", 63), ErrorCode::kCorrupt,
                        {"model.norm.weight", "[64]", "[63]"}));
  EXPECT_TRUE(FailsWith(checkpoint->Vector("model.nope", 64), ErrorCode::kNotFound,
                        {"model.nope", kGoldenModel}));
}

TEST(CheckpointOpenTest, MissingDirectory) {
  const std::string dir = FreshDir("x") + "/does-not-exist";
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound, {dir}));
  EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kNotFound, {dir}));
  // A file is not a checkpoint directory either.
  const std::string file = Join(kGoldenModel, "config.json");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(file), ErrorCode::kNotFound, {file}));
}

TEST(CheckpointOpenTest, MissingOrBadConfigJson) {
  const std::string dir = FreshDir("ckpt");
  fs::create_symlink(fs::absolute(Join(kGoldenModel, "model.safetensors")),
                     Join(dir, "model.safetensors"));
  const std::string config = Join(dir, "config.json");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound, {config}));

  WriteBytes(config, R"({"model_type": "qwen2_vl", )");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {config, "JSON"}));

  Json json = ReadJson(Join(kGoldenModel, "config.json"));
  json.erase("intermediate_size");
  WriteJsonFile(config, json);
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {config, "'intermediate_size'"}));
  EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kCorrupt, {config, "'intermediate_size'"}));

  json = ReadJson(Join(kGoldenModel, "config.json"));
  json["vision_config"].erase("embed_dim");
  WriteJsonFile(config, json);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {config, "vision_config", "'embed_dim'"}));

  // Over the JSON size limit.
  json = ReadJson(Join(kGoldenModel, "config.json"));
  WriteJsonFile(config, json);
  CheckpointLimits limits;
  limits.max_json_bytes = 100;
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir, limits), ErrorCode::kResourceExhausted, {config}));
  EXPECT_TRUE(Checkpoint::Open(dir));
}

TEST(CheckpointOpenTest, NoWeightFiles) {
  const std::string dir = FreshDir("ckpt");
  fs::copy_file(Join(kGoldenModel, "config.json"), Join(dir, "config.json"));
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound,
                        {dir, "model.safetensors", "model.safetensors.index.json"}));
  // A broken model.safetensors is reported with its path.
  WriteBytes(Join(dir, "model.safetensors"), "tiny");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {Join(dir, "model.safetensors"), "too short"}));
  // The header limit applies to checkpoint files.
  fs::remove(Join(dir, "model.safetensors"));
  fs::create_symlink(fs::absolute(Join(kGoldenModel, "model.safetensors")),
                     Join(dir, "model.safetensors"));
  CheckpointLimits limits;
  limits.max_header_bytes = 1000;
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir, limits), ErrorCode::kResourceExhausted,
                        {Join(dir, "model.safetensors")}));
}

TEST(CheckpointOpenTest, WrongShapeNamesTensorAndFile) {
  // [64, 128] stored as [128, 64]: same bytes, so only the config can tell.
  const std::string dir = EditedGolden("ckpt", [](std::vector<OwnedTensor>& tensors) {
    Named(tensors, "model.layers.1.mlp.down_proj.weight").shape = {128, 64};
  });
  const std::string file = Join(dir, "model.safetensors");
  ASSERT_TRUE(Checkpoint::Open(dir));  // shapes are the config's business, checked on bind
  EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kCorrupt,
                        {file, "'model.layers.1.mlp.down_proj.weight'", "[128, 64]", "[64, 128]"}));

  // A norm weight stored 2-D.
  const std::string dir2 = EditedGolden("ckpt2", [](std::vector<OwnedTensor>& tensors) {
    Named(tensors, "visual.blocks.0.norm1.bias").shape = {8, 8};
  });
  EXPECT_TRUE(FailsWith(
      Model::Load(dir2), ErrorCode::kCorrupt,
      {Join(dir2, "model.safetensors"), "'visual.blocks.0.norm1.bias'", "[8, 8]", "[64]"}));

  // The patch embedding flattened to 2-D is not the Conv3d shape the config implies.
  const std::string dir3 = EditedGolden("ckpt3", [](std::vector<OwnedTensor>& tensors) {
    Named(tensors, "visual.patch_embed.proj.weight").shape = {64, 1176};
  });
  EXPECT_TRUE(FailsWith(Model::Load(dir3), ErrorCode::kCorrupt,
                        {"'visual.patch_embed.proj.weight'", "[64, 1176]", "[64, 3, 2, 14, 14]"}));
}

TEST(CheckpointOpenTest, NonKernelDTypeIsUnsupported) {
  const std::string dir = EditedGolden("ckpt", [](std::vector<OwnedTensor>& tensors) {
    OwnedTensor& norm = Named(tensors, "model.norm.weight");
    norm.dtype = DType::kI64;
    norm.data.assign(64 * 8, 0);
  });
  const std::string file = Join(dir, "model.safetensors");
  ASSERT_TRUE(Checkpoint::Open(dir));
  EXPECT_TRUE(
      FailsWith(Model::Load(dir), ErrorCode::kUnsupported, {file, "'model.norm.weight'", "I64"}));

  const std::string dir2 = EditedGolden("ckpt2", [](std::vector<OwnedTensor>& tensors) {
    OwnedTensor& q = Named(tensors, "model.layers.0.self_attn.q_proj.weight");
    q.dtype = DType::kF64;
    q.data.assign(64 * 64 * 8, 0);
  });
  EXPECT_TRUE(FailsWith(Model::Load(dir2), ErrorCode::kUnsupported,
                        {"'model.layers.0.self_attn.q_proj.weight'", "F64"}));
}

TEST(CheckpointOpenTest, MissingTensorIsNamed) {
  for (const std::string name :
       {"visual.blocks.1.mlp.fc2.bias", "model.embed_tokens.weight", "model.norm.weight",
        "visual.merger.mlp.2.weight", "model.layers.1.self_attn.k_proj.bias"}) {
    SCOPED_TRACE(name);
    const std::string dir = EditedGolden("ckpt", [&](std::vector<OwnedTensor>& tensors) {
      std::erase_if(tensors, [&](const OwnedTensor& t) { return t.name == name; });
    });
    auto checkpoint = Checkpoint::Open(dir);
    ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
    EXPECT_EQ(static_cast<int>(checkpoint->tensors().size()), kGoldenTensors - 1);
    EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kNotFound, {dir, "'" + name + "'"}));
  }
}

// ---------------------------------------------------------------------------------------------
// Sharded checkpoints

TEST(ShardedCheckpointTest, SameWeightsAsOneFile) {
  const std::string single = RandomSeed1();
  auto one = Model::Load(single);
  ASSERT_TRUE(one) << one.error().ToString();
  EXPECT_FALSE(fs::exists(Join(single, "model.safetensors.index.json")));
  const Checkpoint& a = (*one)->checkpoint();
  EXPECT_EQ(static_cast<int>(a.tensors().size()), kGoldenTensors);

  for (const uint64_t shard_bytes : {uint64_t{4} << 20, uint64_t{128} << 10}) {
    for (const TensorNaming naming : {TensorNaming::kClassic, TensorNaming::kPrefixed}) {
      SCOPED_TRACE(std::to_string(shard_bytes) +
                   (naming == TensorNaming::kClassic ? " classic" : " prefixed"));
      const std::string dir = FreshDir("sharded");
      const Status written =
          WriteRandomCheckpoint(Pool(), TinyModelConfig(), dir,
                                {.seed = 1, .naming = naming, .max_shard_bytes = shard_bytes});
      ASSERT_TRUE(written) << written.error().ToString();
      EXPECT_FALSE(fs::exists(Join(dir, "model.safetensors")));
      ASSERT_TRUE(fs::exists(Join(dir, "model.safetensors.index.json")));
      const std::vector<std::string> shards = ShardFiles(dir);
      ASSERT_GE(shards.size(), 2u);
      for (size_t i = 0; i < shards.size(); ++i) {
        EXPECT_EQ(shards[i],
                  fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size()));
      }
      // Every shard but one holding a single bigger tensor stays within the limit.
      for (const std::string& shard : shards) {
        auto file = SafetensorsFile::Open(Join(dir, shard));
        ASSERT_TRUE(file) << file.error().ToString();
        uint64_t bytes = 0;
        for (const TensorInfo& info : file->tensors()) bytes += info.bytes;
        if (file->tensors().size() > 1) {
          EXPECT_LE(bytes, shard_bytes) << shard;
        }
      }

      auto many = Model::Load(dir);
      ASSERT_TRUE(many) << many.error().ToString();
      const Checkpoint& b = (*many)->checkpoint();
      EXPECT_EQ(b.files().size(), shards.size());
      // The fingerprint covers config and tensors, not how they are split or named in files.
      EXPECT_EQ((*many)->fingerprint(), (*one)->fingerprint());
      EXPECT_EQ(b.tensors().size(), a.tensors().size());
      EXPECT_EQ(b.num_parameters(), a.num_parameters());
      EXPECT_EQ(b.num_bytes(), a.num_bytes());
      for (const auto& [name, tensor] : a.tensors()) {
        SCOPED_TRACE(name);
        const auto it = b.tensors().find(name);
        ASSERT_NE(it, b.tensors().end());
        const auto x = tensor.file->Data(*tensor.info);
        const auto y = it->second.file->Data(*it->second.info);
        ASSERT_EQ(x.size(), y.size());
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0);
      }
    }
  }
}

// Sharded checkpoints with one file replaced; the shards themselves are symlinks to a shared
// valid checkpoint.
class BadIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = RandomSeed1Sharded();
    shards_ = ShardFiles(source_);
    ASSERT_GE(shards_.size(), 3u);
    index_ = ReadJson(Join(source_, "model.safetensors.index.json"));
    ASSERT_TRUE(index_["weight_map"].is_object());
  }

  // A copy whose index is `index`; returns the folder.
  std::string WithIndex(const Json& index) {
    const std::string dir = LinkedCopy(source_, "ckpt");
    Replace(Join(dir, "model.safetensors.index.json"), index.dump(2));
    return dir;
  }
  std::string IndexPath(const std::string& dir) {
    return Join(dir, "model.safetensors.index.json");
  }

  std::string source_;
  std::vector<std::string> shards_;
  Json index_;
};

TEST_F(BadIndexTest, ValidIndexLoads) {
  auto model = Model::Load(source_);
  ASSERT_TRUE(model) << model.error().ToString();
  EXPECT_EQ(model->get()->checkpoint().files().size(), shards_.size());
}

TEST_F(BadIndexTest, WeightMapMissingOrNotAnObject) {
  Json index = index_;
  index.erase("weight_map");
  std::string dir = WithIndex(index);
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "weight_map"}));
  index["weight_map"] = Json::array({shards_[0]});
  dir = WithIndex(index);
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "weight_map"}));
  dir = WithIndex(Json::array({index_}));
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "weight_map"}));
  dir = LinkedCopy(source_, "ckpt");
  Replace(IndexPath(dir), R"({"weight_map": {"a": )");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "JSON"}));
}

TEST_F(BadIndexTest, ShardNamesMustBePlainFileNames) {
  const std::string tensor = "model.norm.weight";
  const std::string holder = index_["weight_map"][tensor].get<std::string>();
  for (const std::string& bad :
       std::vector<std::string>{"../" + holder, "./" + holder, "sub/" + holder, "..", ".", "",
                                "/etc/passwd", "..\\" + holder}) {
    SCOPED_TRACE(bad);
    Json index = index_;
    index["weight_map"][tensor] = bad;
    const std::string dir = WithIndex(index);
    // Make the escape target real, so only the name check can stop it.
    std::error_code ec;
    fs::create_symlink(fs::absolute(Join(source_, holder)), fs::path(dir).parent_path() / holder,
                       ec);
    EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                          {IndexPath(dir), "'" + tensor + "'", "invalid file name"}));
  }
  Json index = index_;
  index["weight_map"][tensor] = 3;
  const std::string dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {IndexPath(dir), "'" + tensor + "'", "invalid file name"}));
}

TEST_F(BadIndexTest, TensorNotInItsShard) {
  // Point a tensor at a shard that exists but does not hold it.
  const std::string tensor = "visual.merger.mlp.2.bias";
  const std::string holder = index_["weight_map"][tensor].get<std::string>();
  const std::string other = holder == shards_[0] ? shards_[1] : shards_[0];
  Json index = index_;
  index["weight_map"][tensor] = other;
  std::string dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {Join(dir, other), "'" + tensor + "'", "model.safetensors.index.json"}));
  // A tensor no shard holds.
  index = index_;
  index["weight_map"]["visual.extra.weight"] = shards_[0];
  dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {Join(dir, shards_[0]), "'visual.extra.weight'"}));
  // A shard file that is not there.
  index = index_;
  index["weight_map"][tensor] = "model-00099-of-00099.safetensors";
  dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound,
                        {Join(dir, "model-00099-of-00099.safetensors")}));
}

TEST_F(BadIndexTest, UnindexedTensorIsMissing) {
  // The index is authoritative: a tensor stored in a shard but not listed is not loaded.
  Json index = index_;
  index["weight_map"].erase("model.layers.0.mlp.up_proj.weight");
  const std::string dir = WithIndex(index);
  auto checkpoint = Checkpoint::Open(dir);
  ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
  EXPECT_FALSE(checkpoint->Has("model.layers.0.mlp.up_proj.weight"));
  EXPECT_TRUE(
      FailsWith(Model::Load(dir), ErrorCode::kNotFound, {"'model.layers.0.mlp.up_proj.weight'"}));
}

TEST_F(BadIndexTest, ShardCountLimitBoundary) {
  const int n = static_cast<int>(shards_.size());
  CheckpointLimits limits;
  limits.max_shards = n;
  auto at_limit = Checkpoint::Open(source_, limits);
  ASSERT_TRUE(at_limit) << at_limit.error().ToString();
  EXPECT_EQ(static_cast<int>(at_limit->files().size()), n);
  limits.max_shards = n - 1;
  EXPECT_TRUE(FailsWith(
      Checkpoint::Open(source_, limits), ErrorCode::kResourceExhausted,
      {IndexPath(source_), std::to_string(n) + " shards", "limit of " + std::to_string(n - 1)}));
  // The JSON size limit applies to the index too.
  limits = {};
  limits.max_json_bytes = 2000;
  EXPECT_TRUE(FailsWith(Checkpoint::Open(source_, limits), ErrorCode::kResourceExhausted,
                        {IndexPath(source_)}));
}

TEST_F(BadIndexTest, SingleFileWinsOverIndex) {
  // Like transformers: with both present, model.safetensors is used and the index ignored.
  const std::string dir = WithIndex(Json::array());
  fs::create_symlink(fs::absolute(Join(kGoldenModel, "model.safetensors")),
                     Join(dir, "model.safetensors"));
  auto checkpoint = Checkpoint::Open(dir);
  ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->files(), std::vector<std::string>{Join(dir, "model.safetensors")});
}

// ---------------------------------------------------------------------------------------------
// Tensor naming

// single_doc of the golden data: one 400x300 document page and its prompt.
struct DocInputs {
  std::vector<float> pixels;
  std::vector<GreedyRequest> requests;
};

DocInputs SingleDoc(const ModelConfig& config) {
  const std::string dir = kGoldenDir + "/single_doc";
  DocInputs inputs;
  auto ids = ReadNpy(dir + "/input_ids.npy");
  auto mask = ReadNpy(dir + "/attention_mask.npy");
  auto grid = ReadNpy(dir + "/image_grid_thw.npy");
  auto pixels = ReadNpy(kGoldenDir + "/images/doc_400x300.pixel_values.npy");
  EXPECT_TRUE(ids && mask && grid && pixels);
  if (!ids || !mask || !grid || !pixels) return inputs;
  const std::vector<int64_t> grid_values = *grid->ToI64();
  std::vector<ImageGrid> grids;
  for (size_t i = 0; i + 2 < grid_values.size(); i += 3) {
    grids.push_back({grid_values[i], grid_values[i + 1], grid_values[i + 2]});
  }
  auto requests = RequestsFromPaddedBatch(*ids->ToI64(), *mask->ToI64(), ids->shape[0],
                                          ids->shape[1], grids, config);
  EXPECT_TRUE(requests) << requests.error().ToString();
  if (requests) inputs.requests = std::move(*requests);
  inputs.pixels = *pixels->ToF32();
  return inputs;
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

TEST(TensorNamingTest, PrefixedNamesLoadLikeClassic) {
  const std::string classic = RandomSeed1();
  const std::string prefixed = SharedRandom("seed1-prefixed", TinyModelConfig(),
                                            {.seed = 1, .naming = TensorNaming::kPrefixed});
  // The file really holds the transformers >= 4.52 names.
  auto file = SafetensorsFile::Open(Join(prefixed, "model.safetensors"));
  ASSERT_TRUE(file) << file.error().ToString();
  std::vector<std::string> names;
  for (const TensorInfo& info : file->tensors()) names.push_back(info.name);
  for (const char* name :
       {"model.visual.patch_embed.proj.weight", "model.language_model.embed_tokens.weight",
        "model.language_model.layers.1.mlp.down_proj.weight", "model.language_model.norm.weight",
        "model.visual.merger.ln_q.bias"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "model.embed_tokens.weight"), names.end());

  auto a = Model::Load(classic);
  auto b = Model::Load(prefixed);
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ((*a)->fingerprint(), (*b)->fingerprint());
  std::vector<std::string> canonical_a, canonical_b;
  for (const auto& [name, tensor] : (*a)->checkpoint().tensors()) canonical_a.push_back(name);
  for (const auto& [name, tensor] : (*b)->checkpoint().tensors()) canonical_b.push_back(name);
  EXPECT_EQ(canonical_a, canonical_b);
  EXPECT_EQ((*b)->checkpoint().tensors().at("model.norm.weight").info->name,
            "model.language_model.norm.weight");
  ExpectSameOutputs(Greedy(**a, 2), Greedy(**b, 2));
}

TEST(TensorNamingTest, CanonicalNames) {
  EXPECT_EQ(CanonicalTensorName("model.visual.blocks.0.attn.qkv.weight"),
            "visual.blocks.0.attn.qkv.weight");
  EXPECT_EQ(CanonicalTensorName("model.language_model.layers.3.mlp.up_proj.weight"),
            "model.layers.3.mlp.up_proj.weight");
  EXPECT_EQ(CanonicalTensorName("visual.merger.ln_q.weight"), "visual.merger.ln_q.weight");
  EXPECT_EQ(CanonicalTensorName("model.norm.weight"), "model.norm.weight");
  EXPECT_EQ(CanonicalTensorName("lm_head.weight"), "lm_head.weight");
  EXPECT_EQ(CanonicalTensorName("model.visual"), "model.visual");
}

TEST(TensorNamingTest, SameTensorUnderBothNamesIsCorrupt) {
  // Only Checkpoint::Open matters here: a few tensors beside the golden config are enough.
  const std::vector<OwnedTensor> golden = ReadTensors(Join(kGoldenModel, "model.safetensors"));
  auto copy = [&](const std::string& name, const std::string& stored_as) {
    for (const OwnedTensor& t : golden) {
      if (t.name == name) return OwnedTensor{stored_as, t.dtype, t.shape, t.data};
    }
    ADD_FAILURE() << name;
    return OwnedTensor{};
  };
  for (const auto& [classic, prefixed] : std::vector<std::pair<std::string, std::string>>{
           {"visual.merger.ln_q.bias", "model.visual.merger.ln_q.bias"},
           {"model.norm.weight", "model.language_model.norm.weight"}}) {
    SCOPED_TRACE(classic);
    const std::string dir = FreshDir("ckpt");
    fs::copy_file(Join(kGoldenModel, "config.json"), Join(dir, "config.json"));
    WriteSafetensors(Join(dir, "model.safetensors"),
                     {copy("visual.blocks.0.norm1.bias", "visual.blocks.0.norm1.bias"),
                      copy(classic, classic), copy(classic, prefixed)});
    EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                          {"'" + classic + "'", "stored twice", "'" + prefixed + "'",
                           Join(dir, "model.safetensors")}));
  }
  // Across two shards of an index.
  const std::string dir = FreshDir("sharded");
  fs::copy_file(Join(kGoldenModel, "config.json"), Join(dir, "config.json"));
  WriteSafetensors(Join(dir, "a.safetensors"), {copy("model.norm.weight", "model.norm.weight")});
  WriteSafetensors(Join(dir, "b.safetensors"),
                   {copy("model.norm.weight", "model.language_model.norm.weight")});
  WriteJsonFile(Join(dir, "model.safetensors.index.json"),
                {{"weight_map",
                  {{"model.norm.weight", "a.safetensors"},
                   {"model.language_model.norm.weight", "b.safetensors"}}}});
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {"'model.norm.weight'", "stored twice", Join(dir, "a.safetensors"),
                         Join(dir, "b.safetensors")}));
}

// ---------------------------------------------------------------------------------------------
// lm_head

TEST(LmHeadTest, NoLmHeadMeansTiedWhateverTheConfigSays) {
  const std::string dir = LinkedCopy(RandomSeed1(), "ckpt");
  Json config = TinyModelConfig();
  config["tie_word_embeddings"] = false;
  Replace(Join(dir, "config.json"), config.dump(2));
  auto model = Model::Load(dir);
  ASSERT_TRUE(model) << model.error().ToString();
  const Checkpoint& checkpoint = (*model)->checkpoint();
  EXPECT_FALSE(checkpoint.config().tie_word_embeddings);
  EXPECT_FALSE(checkpoint.Has("lm_head.weight"));
  EXPECT_TRUE(checkpoint.tied_embeddings());
  const DecoderWeights& w = (*model)->weights().decoder;
  EXPECT_EQ(w.lm_head.data, w.embed_tokens.data);
  EXPECT_EQ(w.lm_head.rows, 151936);
  EXPECT_EQ(w.lm_head.cols, 64);
}

TEST(LmHeadTest, UntiedUsesLmHeadWeight) {
  Json config = TinyModelConfig();
  config["tie_word_embeddings"] = false;
  const std::string dir = SharedRandom("seed1-untied", config, {.seed = 1});
  auto model = Model::Load(dir);
  ASSERT_TRUE(model) << model.error().ToString();
  const Checkpoint& checkpoint = (*model)->checkpoint();
  ASSERT_TRUE(checkpoint.Has("lm_head.weight"));
  EXPECT_FALSE(checkpoint.tied_embeddings());
  EXPECT_EQ(static_cast<int>(checkpoint.tensors().size()), kGoldenTensors + 1);
  const DecoderWeights& w = (*model)->weights().decoder;
  EXPECT_NE(w.lm_head.data, w.embed_tokens.data);
  const CheckpointTensor& head = checkpoint.tensors().at("lm_head.weight");
  EXPECT_EQ(w.lm_head.data, head.file->Data(*head.info).data());
  EXPECT_EQ(w.lm_head.rows, 151936);
  EXPECT_EQ(w.lm_head.cols, 64);

  // The same files with tie_word_embeddings true: lm_head.weight is stored but unused.
  const std::string tied = LinkedCopy(dir, "tied");
  config["tie_word_embeddings"] = true;
  Replace(Join(tied, "config.json"), config.dump(2));
  auto tied_model = Model::Load(tied);
  ASSERT_TRUE(tied_model) << tied_model.error().ToString();
  EXPECT_TRUE((*tied_model)->checkpoint().tied_embeddings());
  EXPECT_EQ((*tied_model)->weights().decoder.lm_head.data,
            (*tied_model)->weights().decoder.embed_tokens.data);
}

TEST(LmHeadTest, UntiedLmHeadOfWrongShape) {
  Json config = TinyModelConfig();
  config["tie_word_embeddings"] = false;
  const std::string source = SharedRandom("seed1-untied", config, {.seed = 1});
  const std::string dir = FreshDir("ckpt");
  fs::copy_file(Join(source, "config.json"), Join(dir, "config.json"));
  std::vector<OwnedTensor> tensors = ReadTensors(Join(source, "model.safetensors"));
  Named(tensors, "lm_head.weight").shape = {64, 151936};
  WriteSafetensors(Join(dir, "model.safetensors"), tensors);
  EXPECT_TRUE(FailsWith(
      Model::Load(dir), ErrorCode::kCorrupt,
      {Join(dir, "model.safetensors"), "'lm_head.weight'", "[64, 151936]", "[151936, 64]"}));
}

// ---------------------------------------------------------------------------------------------
// Weight dtypes

// The golden checkpoint with every tensor converted from BF16 by `convert` (one bf16 value in,
// the bytes of one value out).
std::string ConvertedGolden(const std::string& name, DType dtype,
                            const std::function<void(uint16_t, uint8_t*)>& convert) {
  return EditedGolden(name, [&](std::vector<OwnedTensor>& tensors) {
    for (OwnedTensor& t : tensors) {
      ASSERT_EQ(t.dtype, DType::kBF16) << t.name;
      const size_t n = t.data.size() / 2;
      std::vector<uint8_t> out(n * DTypeSize(dtype));
      for (size_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, t.data.data() + 2 * i, 2);
        convert(bits, out.data() + i * DTypeSize(dtype));
      }
      t.dtype = dtype;
      t.data = std::move(out);
    }
  });
}

// Max |a - b| over two logit vectors of the same size.
double MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, std::fabs(double{a[i]} - double{b[i]}));
  }
  return m;
}

TEST(WeightDTypeTest, F32CopyGivesBitIdenticalOutputs) {
  const std::string f32 = ConvertedGolden("f32", DType::kF32, [](uint16_t bits, uint8_t* out) {
    const float value = Bf16ToF32(bits);  // exact
    std::memcpy(out, &value, 4);
  });
  auto bf16_model = Model::Load(kGoldenModel);
  auto f32_model = Model::Load(f32);
  ASSERT_TRUE(bf16_model) << bf16_model.error().ToString();
  ASSERT_TRUE(f32_model) << f32_model.error().ToString();
  // Weights stay in their stored dtype (views into the mapping, not converted copies).
  EXPECT_EQ((*bf16_model)->weights().decoder.embed_tokens.dtype, DType::kBF16);
  EXPECT_EQ((*f32_model)->weights().decoder.embed_tokens.dtype, DType::kF32);
  EXPECT_EQ((*f32_model)->weights().vision.patch_embed.dtype, DType::kF32);
  EXPECT_EQ((*f32_model)->checkpoint().num_bytes(), 2 * (*bf16_model)->checkpoint().num_bytes());
  EXPECT_NE((*f32_model)->fingerprint(), (*bf16_model)->fingerprint());  // dtype is hashed

  // Kernels widen every dtype exactly to float32 and then do the same arithmetic.
  const GreedyResult bf16_out = Greedy(**bf16_model, 4);
  ASSERT_EQ(bf16_out.sequences.size(), 1u);
  EXPECT_EQ(bf16_out.sequences[0].generated.size(), 4u);
  ExpectSameOutputs(bf16_out, Greedy(**f32_model, 4));
}

TEST(WeightDTypeTest, F16CopyGivesBitIdenticalOutputs) {
  // Not every golden weight fits f16: a few embedding and weight values lie below f16's normal
  // range (2^-14) with more significant bits than its subnormals (steps of 2^-24) hold. So the
  // f16 copy is compared with a bf16 copy of the same f16-rounded values (which bf16 holds
  // exactly: at most 8 significant bits), and with the original only loosely.
  int64_t inexact = 0, inexact_normal = 0;
  const std::string f16 = ConvertedGolden("f16", DType::kF16, [&](uint16_t bits, uint8_t* out) {
    const float value = Bf16ToF32(bits);
    const uint16_t half = F32ToF16(value);
    if (std::bit_cast<uint32_t>(F16ToF32(half)) != std::bit_cast<uint32_t>(value)) {
      ++inexact;
      if (std::fabs(value) >= 0x1p-14f) ++inexact_normal;
    }
    std::memcpy(out, &half, 2);
  });
  EXPECT_EQ(inexact_normal, 0);  // in f16's normal range bf16 values convert exactly
  EXPECT_LT(inexact, 1000);      // 139 of 10 million in the committed checkpoint
  int64_t not_bf16 = 0;
  const std::string rounded =
      ConvertedGolden("bf16-rounded", DType::kBF16, [&](uint16_t bits, uint8_t* out) {
        const float value = F16ToF32(F32ToF16(Bf16ToF32(bits)));
        const uint16_t back = F32ToBf16(value);
        if (std::bit_cast<uint32_t>(Bf16ToF32(back)) != std::bit_cast<uint32_t>(value)) {
          ++not_bf16;
        }
        std::memcpy(out, &back, 2);
      });
  ASSERT_EQ(not_bf16, 0);

  auto original = Model::Load(kGoldenModel);
  auto f16_model = Model::Load(f16);
  auto bf16_model = Model::Load(rounded);
  ASSERT_TRUE(original) << original.error().ToString();
  ASSERT_TRUE(f16_model) << f16_model.error().ToString();
  ASSERT_TRUE(bf16_model) << bf16_model.error().ToString();
  EXPECT_EQ((*f16_model)->weights().decoder.layers[1].down.dtype, DType::kF16);
  EXPECT_EQ((*f16_model)->weights().decoder.embed_tokens.dtype, DType::kF16);
  EXPECT_NE((*f16_model)->fingerprint(), (*bf16_model)->fingerprint());

  const GreedyResult f16_out = Greedy(**f16_model, 4);
  ExpectSameOutputs(Greedy(**bf16_model, 4), f16_out);
  // Against the unrounded weights: changes under 2^-25 move the logits by far less than
  // the golden tests' 1e-4 and leave the greedy ids alone.
  const GreedyResult original_out = Greedy(**original, 4);
  ASSERT_EQ(original_out.sequences.size(), 1u);
  ASSERT_EQ(f16_out.sequences.size(), 1u);
  EXPECT_EQ(original_out.sequences[0].generated, f16_out.sequences[0].generated);
  EXPECT_LE(MaxDiff(original_out.sequences[0].logits_last, f16_out.sequences[0].logits_last), 1e-4);
}

// ---------------------------------------------------------------------------------------------
// Fingerprint

TEST(FingerprintTest, StableAcrossLoads) {
  auto a = Checkpoint::Open(kGoldenModel);
  auto b = Model::Load(kGoldenModel);
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ(a->fingerprint().size(), 64u);
  EXPECT_EQ(a->fingerprint().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a->fingerprint(), (*b)->fingerprint());
  // A copy elsewhere has the same fingerprint: the path is not part of it.
  const std::string copy = LinkedCopy(kGoldenModel, "copy");
  auto c = Checkpoint::Open(copy);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->fingerprint(), a->fingerprint());
  // So is config.json written in another layout (keys sorted, whitespace dropped).
  Replace(Join(copy, "config.json"), ReadJson(Join(kGoldenModel, "config.json")).dump());
  auto d = Checkpoint::Open(copy);
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->fingerprint(), a->fingerprint());
}

TEST(FingerprintTest, ChangesWithOneWeightByte) {
  auto original = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(original) << original.error().ToString();
  const std::string bytes = ReadBytes(Join(kGoldenModel, "model.safetensors"));
  // A big tensor (sampled in windows) and a small one (hashed whole).
  for (const std::string name : {"model.embed_tokens.weight", "visual.blocks.0.norm1.bias",
                                 "model.layers.1.mlp.down_proj.weight"}) {
    SCOPED_TRACE(name);
    const CheckpointTensor& tensor = original->tensors().at(name);
    const uint64_t at = tensor.info->offset + std::min<uint64_t>(tensor.info->bytes - 1, 1001);
    ASSERT_LT(at - tensor.info->offset, 4096u);
    const std::string dir = LinkedCopy(kGoldenModel, "flipped");
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
    Replace(Join(dir, "model.safetensors"), flipped);
    auto changed = Checkpoint::Open(dir);
    ASSERT_TRUE(changed) << changed.error().ToString();
    EXPECT_NE(changed->fingerprint(), original->fingerprint());
  }
}

TEST(FingerprintTest, ChangesWithConfigValue) {
  auto original = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(original) << original.error().ToString();
  Json config = ReadJson(Join(kGoldenModel, "config.json"));
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, Json>>{{"max_position_embeddings", 16384},
                                                 {"rms_norm_eps", 1e-5},
                                                 {"eos_token_id", Json::array({151645, 151643})}}) {
    SCOPED_TRACE(key);
    Json edited = config;
    edited[key] = value;
    const std::string dir = LinkedCopy(kGoldenModel, "config");
    Replace(Join(dir, "config.json"), edited.dump(2));
    auto changed = Checkpoint::Open(dir);
    ASSERT_TRUE(changed) << changed.error().ToString();
    EXPECT_NE(changed->fingerprint(), original->fingerprint());
  }
}

TEST(FingerprintTest, RandomCheckpointsBySeed) {
  const std::string seed1 = RandomSeed1();
  const std::string seed2 = SharedRandom("seed2", TinyModelConfig(), {.seed = 2});
  auto a = Checkpoint::Open(seed1);
  auto b = Checkpoint::Open(seed2);
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_NE(a->fingerprint(), b->fingerprint());
  auto golden = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(golden);
  EXPECT_NE(a->fingerprint(), golden->fingerprint());

  // The same seed gives the same bytes whatever the thread count.
  const std::string again = FreshDir("seed1-one-thread");
  ThreadPool one_thread(1);
  const Status written = WriteRandomCheckpoint(one_thread, TinyModelConfig(), again, {.seed = 1});
  ASSERT_TRUE(written) << written.error().ToString();
  EXPECT_TRUE(ReadBytes(Join(again, "model.safetensors")) ==
              ReadBytes(Join(seed1, "model.safetensors")));
  auto c = Checkpoint::Open(again);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->fingerprint(), a->fingerprint());
}

}  // namespace
}  // namespace mineru::model
