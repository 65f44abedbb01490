// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the mineru-cpp command line, `inspect` and `make-model`: usage errors
// (exit 2, nothing written), the checkpoint summary in text and JSON, the byte limits, and
// random checkpoints whose fingerprint depends on the seed but not on sharding or tensor names.
// Each test runs the binary as a child process (see cli_test_util.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli_test_util.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::Describe;
using testing::FailedWith;
using testing::kModel;
using testing::kVocab;
using testing::ReadFile;
using testing::RunCli;
using testing::Succeeded;
using testing::TestDir;
using testing::UsageError;
using testing::WriteFile;

// The fields of `inspect` text output that identify a checkpoint.
std::string FingerprintOf(const CliResult& inspect) {
  std::smatch match;
  static const std::regex kLine("fingerprint:  sha256:([0-9a-f]{64})\n");
  return std::regex_search(inspect.out, match, kLine) ? match[1].str() : "";
}

Json InspectJson(const std::string& dir) {
  const CliResult r = RunCli({"inspect", "--json", dir});
  EXPECT_TRUE(Succeeded(r));
  Json json = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << "not JSON" << Describe(r);
  return json.is_object() ? json : Json::object();
}

// ---------------------------------------------------------------------------------------------
// Command line.

TEST(CliUsageTest, NoSubcommand) { EXPECT_TRUE(UsageError(RunCli({}), {"subcommand"})); }

TEST(CliUsageTest, UnknownSubcommand) {
  EXPECT_TRUE(UsageError(RunCli({"frobnicate"})));
  EXPECT_TRUE(UsageError(RunCli({"frobnicate", kModel})));
}

TEST(CliUsageTest, MissingRequiredOption) {
  EXPECT_TRUE(UsageError(RunCli({"inspect"}), {"dir"}));
  EXPECT_TRUE(UsageError(RunCli({"make-model", "--config", "tiny"}), {"--output"}));
  EXPECT_TRUE(
      UsageError(RunCli({"debug-forward", "--model", kModel, "--input-ids", "x.npy"}), {"--dump"}));
  EXPECT_TRUE(UsageError(RunCli({"debug-forward", "--dump", TestDir(), "--input-ids", "x.npy"}),
                         {"--model"}));
}

TEST(CliUsageTest, BadOptionValues) {
  const std::string dir = TestDir();
  EXPECT_TRUE(UsageError(RunCli({"debug-forward", "--model", kModel, "--input-ids", "x.npy",
                                 "--dump", dir, "--steps", "-1"}),
                         {"--steps"}));
  EXPECT_TRUE(UsageError(RunCli({"debug-forward", "--model", kModel, "--input-ids", "x.npy",
                                 "--dump", dir, "--steps", "many"}),
                         {"--steps"}));
  EXPECT_TRUE(
      UsageError(RunCli({"make-model", "--config", "tiny", "-o", dir + "/m", "--naming", "weird"}),
                 {"--naming"}));
  EXPECT_TRUE(UsageError(RunCli({"--threads", "-1", "inspect", kModel}), {"--threads"}));
  EXPECT_TRUE(UsageError(RunCli({"inspect", kModel, "--no-such-flag"}), {"--no-such-flag"}));
  EXPECT_FALSE(fs::exists(dir + "/m")) << "a rejected command line must not write anything";
}

TEST(CliUsageTest, VersionAndHelp) {
  const CliResult version = RunCli({"--version"});
  ASSERT_TRUE(Succeeded(version));
  EXPECT_NE(version.out.find("mineru-cpp"), std::string::npos) << Describe(version);
  const CliResult help = RunCli({"debug-forward", "--help"});
  ASSERT_TRUE(Succeeded(help));
  EXPECT_NE(help.out.find("--max-npy-bytes"), std::string::npos) << Describe(help);
}

// Negative values for the unsigned byte limits would be wrapped by CLI11 2.1 to about 2^64,
// silently turning a limit off (and "--seed -1" into seed 2^64 - 1): they are usage errors.
TEST(CliUsageTest, NegativeLimitsAreRejected) {
  const std::string dir = TestDir();
  EXPECT_TRUE(UsageError(RunCli({"inspect", kModel, "--max-header-bytes", "-1"})));
  EXPECT_TRUE(UsageError(RunCli({"inspect", kModel, "--max-json-bytes", "-1"})));
  EXPECT_TRUE(UsageError(RunCli({"inspect", kModel, "--max-shards", "-1"})));
  EXPECT_TRUE(UsageError(
      RunCli({"make-model", "--config", "tiny", "-o", dir + "/m", "--max-shard-bytes", "-1"})));
}

// CLI11 alone reports "A subcommand is required" for a misspelt subcommand; main names it.
TEST(CliUsageTest, UnknownSubcommandIsNamed) {
  EXPECT_TRUE(UsageError(RunCli({"frobnicate"}), {"frobnicate"}));
}

// ---------------------------------------------------------------------------------------------
// inspect

TEST(InspectTest, GoldenModelText) {
  const CliResult r = RunCli({"inspect", kModel});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_NE(r.out.find("parameters:   10,055,808 (20,111,616 bytes"), std::string::npos)
      << Describe(r);
  EXPECT_NE(r.out.find("tensors:      57 in 1 file(s): BF16 x57"), std::string::npos)
      << Describe(r);
  EXPECT_NE(r.out.find("architecture: qwen2_vl"), std::string::npos) << Describe(r);
  EXPECT_NE(r.out.find("tied (no lm_head.weight)"), std::string::npos) << Describe(r);
  EXPECT_EQ(FingerprintOf(r).size(), 64u) << Describe(r);
  EXPECT_TRUE(r.err.empty()) << Describe(r);
}

TEST(InspectTest, GoldenModelJsonMatchesText) {
  const CliResult text = RunCli({"inspect", kModel});
  ASSERT_TRUE(Succeeded(text));
  const Json json = InspectJson(kModel);
  EXPECT_EQ(json.value("parameters", int64_t{0}), 10055808);
  EXPECT_EQ(json.value("bytes", int64_t{0}), 20111616);
  EXPECT_EQ(json.value("tensors", 0), 57);
  EXPECT_EQ(json.value("fingerprint", std::string()), FingerprintOf(text));
  EXPECT_EQ(json.value("model_type", std::string()), "qwen2_vl");
  EXPECT_EQ(json.value("config_layout", std::string()), "root");
  EXPECT_EQ(json.value("tied_embeddings", false), true);
  EXPECT_EQ(json.value("dtypes", Json::object()), Json({{"BF16", 57}}));
  ASSERT_TRUE(json.contains("files") && json["files"].is_array());
  EXPECT_EQ(json["files"].size(), 1u);
  ASSERT_TRUE(json.contains("text") && json["text"].is_object());
  EXPECT_EQ(json["text"].value("vocab_size", int64_t{0}), kVocab);
  EXPECT_EQ(json["text"].value("mrope_section", Json()), Json({2, 3, 3}));
  ASSERT_TRUE(json.contains("vision") && json["vision"].is_object());
  EXPECT_EQ(json["vision"].value("depth", 0), 2);
  EXPECT_EQ(json["vision"].value("patch_size", 0), 14);
}

TEST(InspectTest, MissingDirectory) {
  const std::string missing = TestDir() + "/no_such_model";
  EXPECT_TRUE(FailedWith(RunCli({"inspect", missing}), {missing}));
}

// The limit is inclusive: a header of exactly --max-header-bytes loads, one byte less refuses.
TEST(InspectTest, MaxHeaderBytesBoundary) {
  const std::string bytes = ReadFile(kModel + "/model.safetensors").substr(0, 8);
  ASSERT_EQ(bytes.size(), 8u);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | static_cast<uint8_t>(bytes[i]);
  ASSERT_GT(header, 0u);
  EXPECT_TRUE(Succeeded(RunCli({"inspect", kModel, "--max-header-bytes", std::to_string(header)})));
  EXPECT_TRUE(
      FailedWith(RunCli({"inspect", kModel, "--max-header-bytes", std::to_string(header - 1)}),
                 {"model.safetensors", "limit", std::to_string(header)}));
}

TEST(InspectTest, MaxJsonBytesBoundary) {
  const uint64_t size = fs::file_size(kModel + "/config.json");
  EXPECT_TRUE(Succeeded(RunCli({"inspect", kModel, "--max-json-bytes", std::to_string(size)})));
  EXPECT_TRUE(FailedWith(RunCli({"inspect", kModel, "--max-json-bytes", std::to_string(size - 1)}),
                         {"config.json", "limit"}));
}

// ---------------------------------------------------------------------------------------------
// make-model

// Writes `--config tiny --seed seed` plus `extra` into dir; the run must succeed.
void MakeTiny(const std::string& dir, int seed, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"make-model",         "--config", "tiny", "--seed",
                                std::to_string(seed), "-o",       dir,    "--no-tokenizer"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = RunCli(args);
  ASSERT_TRUE(Succeeded(r));
  EXPECT_NE(r.out.find("wrote " + dir), std::string::npos) << Describe(r);
}

TEST(MakeModelTest, SameSeedSameBytesAndFingerprint) {
  const std::string dir = TestDir();
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/a", 3));
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/b", 3));
  const std::string a = ReadFile(dir + "/a/model.safetensors");
  EXPECT_GT(a.size(), 20000000u);
  EXPECT_TRUE(a == ReadFile(dir + "/b/model.safetensors")) << "same seed, different bytes";

  const CliResult inspect_a = RunCli({"inspect", dir + "/a"});
  const CliResult inspect_b = RunCli({"inspect", dir + "/b"});
  ASSERT_TRUE(Succeeded(inspect_a));
  ASSERT_TRUE(Succeeded(inspect_b));
  EXPECT_NE(inspect_a.out.find("parameters:   10,055,808"), std::string::npos)
      << Describe(inspect_a);
  EXPECT_NE(inspect_a.out.find("tensors:      57 in 1 file(s)"), std::string::npos)
      << Describe(inspect_a);
  ASSERT_EQ(FingerprintOf(inspect_a).size(), 64u) << Describe(inspect_a);
  EXPECT_EQ(FingerprintOf(inspect_a), FingerprintOf(inspect_b));
  // The weights are random, not the golden ones.
  EXPECT_NE(FingerprintOf(inspect_a), FingerprintOf(RunCli({"inspect", kModel})));
}

TEST(MakeModelTest, DifferentSeedDifferentFingerprint) {
  const std::string dir = TestDir();
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/s3", 3));
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/s4", 4));
  const Json s3 = InspectJson(dir + "/s3"), s4 = InspectJson(dir + "/s4");
  EXPECT_EQ(s3.value("parameters", int64_t{0}), s4.value("parameters", int64_t{-1}));
  EXPECT_NE(s3.value("fingerprint", std::string("3")), s4.value("fingerprint", std::string("4")));
}

// Sharding and the newer tensor names change the files, not the checkpoint: the fingerprint
// is taken over canonical names and tensor contents.
TEST(MakeModelTest, ShardedAndPrefixedKeepTheFingerprint) {
  const std::string dir = TestDir();
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/one", 3));
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/sharded", 3, {"--max-shard-bytes", "4000000"}));
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/prefixed", 3, {"--naming", "prefixed"}));
  EXPECT_TRUE(fs::exists(dir + "/sharded/model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(dir + "/sharded/model.safetensors"));

  const Json one = InspectJson(dir + "/one");
  const Json sharded = InspectJson(dir + "/sharded");
  const Json prefixed = InspectJson(dir + "/prefixed");
  ASSERT_EQ(one.value("fingerprint", std::string()).size(), 64u);
  EXPECT_EQ(one.value("parameters", int64_t{0}), 10055808);
  EXPECT_EQ(sharded.value("parameters", int64_t{0}), 10055808);
  EXPECT_EQ(sharded.value("tensors", 0), 57);
  EXPECT_GT(sharded.value("files", Json::array()).size(), 1u);
  EXPECT_EQ(sharded.value("fingerprint", std::string()), one.value("fingerprint", std::string()));
  EXPECT_EQ(prefixed.value("parameters", int64_t{0}), 10055808);
  EXPECT_EQ(prefixed.value("fingerprint", std::string()), one.value("fingerprint", std::string()));
  // The prefixed files really hold the new names.
  EXPECT_NE(ReadFile(dir + "/prefixed/model.safetensors").find("model.language_model."),
            std::string::npos);
}

TEST(MakeModelTest, ShardedWithMissingShardNamesIt) {
  const std::string dir = TestDir();
  ASSERT_NO_FATAL_FAILURE(MakeTiny(dir + "/m", 3, {"--max-shard-bytes", "4000000"}));
  std::string shard;
  for (const auto& entry : fs::directory_iterator(dir + "/m")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("model-", 0) == 0) shard = std::max(shard, name);
  }
  ASSERT_FALSE(shard.empty());
  fs::remove(dir + "/m/" + shard);
  EXPECT_TRUE(FailedWith(RunCli({"inspect", dir + "/m"}), {shard}));
}

TEST(MakeModelTest, ConfigFile) {
  const std::string dir = TestDir();
  const std::string config = dir + "/my config.json";  // a space must survive as one argument
  fs::copy_file(kModel + "/config.json", config);
  const CliResult r =
      RunCli({"make-model", "--config", config, "--seed", "5", "-o", dir + "/m", "--no-tokenizer"});
  ASSERT_TRUE(Succeeded(r));
  const Json json = InspectJson(dir + "/m");
  EXPECT_EQ(json.value("parameters", int64_t{0}), 10055808);
  EXPECT_EQ(json.value("tensors", 0), 57);
}

TEST(MakeModelTest, BrokenConfigFile) {
  const std::string dir = TestDir();
  const std::string config = dir + "/broken.json";
  WriteFile(config, "{\"model_type\": \"qwen2_vl\",\n");
  EXPECT_TRUE(
      FailedWith(RunCli({"make-model", "--config", config, "-o", dir + "/m", "--no-tokenizer"}),
                 {config, "JSON"}));
  const std::string missing = dir + "/missing.json";
  EXPECT_TRUE(FailedWith(
      RunCli({"make-model", "--config", missing, "-o", dir + "/m", "--no-tokenizer"}), {missing}));
  // Valid JSON that is not a Qwen2-VL config: the field is named.
  WriteFile(config, "{}");
  EXPECT_TRUE(
      FailedWith(RunCli({"make-model", "--config", config, "-o", dir + "/m", "--no-tokenizer"}),
                 {"model_type"}));
}

TEST(MakeModelTest, OutputIsAFile) {
  const std::string dir = TestDir();
  WriteFile(dir + "/file", "x");
  EXPECT_TRUE(
      FailedWith(RunCli({"make-model", "--config", "tiny", "-o", dir + "/file", "--no-tokenizer"}),
                 {dir + "/file"}));
}

}  // namespace
}  // namespace mineru::apps
