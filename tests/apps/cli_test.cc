// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the mineru-cpp binary: each test runs it as a child process (posix_spawn,
// never a shell, so paths with odd characters reach argv untouched) and checks the exit status,
// the files it writes and the words of its error messages. The numeric checks repeat a few of
// the golden parity checks (tests/model/golden_test.cc) through the command line, to prove the
// CLI feeds the same inputs to the model and lays its outputs out the way the reference does.
//
// Contract under test (src/apps/commands.h): exit 0 on success; 1 when the work failed, with one
// "mineru-cpp: error: ..." line on stderr that names the offending file, tensor or field; 2 for a
// bad command line. No input may make the binary die from a signal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/json.h"
#include "base/npy.h"

extern char** environ;

namespace mineru {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp";
const std::string kGolden = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny";
const std::string kModel = kGolden + "/model";
constexpr char kErrorPrefix[] = "mineru-cpp: error: ";
constexpr int64_t kVocab = 151936;
constexpr int64_t kPatchDim = 1176;  // 3 channels x 2 frames x 14 x 14
// A hung child is killed after this long; the slowest run here takes well under a second.
constexpr auto kChildTimeout = std::chrono::seconds(120);

// ---------------------------------------------------------------------------------------------
// Running the binary.

struct CliResult {
  std::string command;  // for failure messages
  bool started = false;
  bool exited = false;  // false: ended by a signal (a crash) or never started
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// Root of everything this binary writes; removed when the run ends.
const std::string& ScratchRoot() {
  static const std::string root = [] {
    std::string dir = ::testing::TempDir();
    if (!dir.empty() && dir.back() != '/') dir += '/';
    dir += "mineru_cli_test_" + std::to_string(::getpid());
    fs::create_directories(dir);
    return dir;
  }();
  return root;
}

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(ScratchRoot(), ec);
  }
};
const auto* const kScratchCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

// A fresh directory for the current test.
std::string TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ScratchRoot() + "/" + info->test_suite_name() + "." + info->name();
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
}

// Runs mineru-cpp with exactly these arguments. MINERU_THREADS=2 keeps the runs small and the
// same under ctest (which sets it) and when the test binary is started by hand.
CliResult RunCli(const std::vector<std::string>& args) {
  static int counter = 0;
  CliResult result;
  result.command = kBinary;
  for (const std::string& arg : args) result.command += " '" + arg + "'";
  const std::string capture = ScratchRoot() + "/run" + std::to_string(counter++);
  const std::string out_path = capture + ".out", err_path = capture + ".err";

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "MINERU_THREADS=", 15) != 0) env_strings.emplace_back(*e);
  }
  env_strings.emplace_back("MINERU_THREADS=2");
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{kBinary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  const int spawn_error =
      posix_spawn(&pid, kBinary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    result.err = "cannot start " + kBinary + ": " + std::strerror(spawn_error);
    return result;
  }
  result.started = true;

  // Polls rather than blocks so that a hang is reported as a failure, not a stuck test run.
  const auto deadline = std::chrono::steady_clock::now() + kChildTimeout;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  std::error_code ec;
  fs::remove(out_path, ec);
  fs::remove(err_path, ec);
  return result;
}

std::string Describe(const CliResult& r) {
  std::ostringstream s;
  s << "\ncommand: " << r.command << "\n";
  if (!r.started) {
    s << "not started";
  } else if (r.timed_out) {
    s << "killed after " << kChildTimeout.count() << " s (hung)";
  } else if (r.exited) {
    s << "exit code " << r.exit_code;
  } else {
    s << "killed by signal " << r.signal << " (" << strsignal(r.signal) << ")";
  }
  s << "\nstdout: " << r.out.substr(0, 2000) << "\nstderr: " << r.err.substr(0, 2000);
  return s.str();
}

// The process ended by itself (no signal) with this exit code.
::testing::AssertionResult ExitedWith(const CliResult& r, int code) {
  if (!r.exited) return ::testing::AssertionFailure() << "did not exit normally" << Describe(r);
  if (r.exit_code != code) {
    return ::testing::AssertionFailure() << "expected exit code " << code << Describe(r);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Succeeded(const CliResult& r) { return ExitedWith(r, 0); }

// Exit 1 with one error line on stderr holding every needle (file paths, field names).
::testing::AssertionResult FailedWith(const CliResult& r, const std::vector<std::string>& needles) {
  if (auto exited = ExitedWith(r, 1); !exited) return exited;
  if (r.err.rfind(kErrorPrefix, 0) != 0) {
    return ::testing::AssertionFailure()
           << "stderr does not start with '" << kErrorPrefix << "'" << Describe(r);
  }
  for (const std::string& needle : needles) {
    if (r.err.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "stderr does not mention '" << needle << "'" << Describe(r);
    }
  }
  return ::testing::AssertionSuccess();
}

// Exit 2 with CLI11's explanation on stderr holding every needle.
::testing::AssertionResult UsageError(const CliResult& r,
                                      const std::vector<std::string>& needles = {}) {
  if (auto exited = ExitedWith(r, 2); !exited) return exited;
  if (r.err.empty()) return ::testing::AssertionFailure() << "stderr is empty" << Describe(r);
  for (const std::string& needle : needles) {
    if (r.err.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "stderr does not mention '" << needle << "'" << Describe(r);
    }
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------
// Arrays and files.

NpyArray ReadArray(const std::string& path) {
  auto array = ReadNpy(path);
  EXPECT_TRUE(array) << array.error().ToString();
  if (!array) {
    NpyArray empty;
    empty.shape = {0};
    return empty;
  }
  return std::move(*array);
}

std::vector<float> F32(const NpyArray& array) {
  auto values = array.ToF32();
  EXPECT_TRUE(values) << values.error().ToString();
  return values ? std::move(*values) : std::vector<float>{};
}
std::vector<float> F32(const std::string& path) { return F32(ReadArray(path)); }

std::vector<int64_t> I64(const NpyArray& array) {
  auto values = array.ToI64();
  EXPECT_TRUE(values) << values.error().ToString();
  return values ? std::move(*values) : std::vector<int64_t>{};
}
std::vector<int64_t> I64(const std::string& path) { return I64(ReadArray(path)); }

void WriteI64(const std::string& path, const std::vector<int64_t>& shape,
              const std::vector<int64_t>& values) {
  const Status status = WriteNpy(path, DType::kI64, shape, values.data());
  ASSERT_TRUE(status) << status.error().ToString();
}

void WriteF32(const std::string& path, const std::vector<int64_t>& shape,
              const std::vector<float>& values) {
  const Status status = WriteNpy(path, DType::kF32, shape, values.data());
  ASSERT_TRUE(status) << status.error().ToString();
}

double MaxAbs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a) m = std::max(m, double{std::fabs(x)});
  return m;
}

double MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = a.size() == b.size() ? 0 : INFINITY;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    m = std::max(m, double{std::fabs(a[i] - b[i])});
  }
  return m;
}

// Copies the golden model directory (20 MB) so a test can damage its copy.
std::string CopyGoldenModel(const std::string& dir) {
  const std::string copy = dir + "/model";
  fs::create_directories(copy);
  for (const char* name : {"config.json", "model.safetensors"}) {
    fs::copy_file(kModel + "/" + name, copy + "/" + name);
  }
  return copy;
}

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
                                std::to_string(seed), "-o",       dir};
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
  const CliResult r = RunCli({"make-model", "--config", config, "--seed", "5", "-o", dir + "/m"});
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
      FailedWith(RunCli({"make-model", "--config", config, "-o", dir + "/m"}), {config, "JSON"}));
  const std::string missing = dir + "/missing.json";
  EXPECT_TRUE(FailedWith(RunCli({"make-model", "--config", missing, "-o", dir + "/m"}), {missing}));
  // Valid JSON that is not a Qwen2-VL config: the field is named.
  WriteFile(config, "{}");
  EXPECT_TRUE(
      FailedWith(RunCli({"make-model", "--config", config, "-o", dir + "/m"}), {"model_type"}));
}

TEST(MakeModelTest, OutputIsAFile) {
  const std::string dir = TestDir();
  WriteFile(dir + "/file", "x");
  EXPECT_TRUE(
      FailedWith(RunCli({"make-model", "--config", "tiny", "-o", dir + "/file"}), {dir + "/file"}));
}

// ---------------------------------------------------------------------------------------------
// debug-forward: parity with the golden fp32 files

TEST(DebugForwardTest, SingleDocMatchesGolden) {
  const std::string dump = TestDir() + "/dump";
  const std::string golden = kGolden + "/single_doc";
  const CliResult r = RunCli({"debug-forward", "--model", kModel, "--pixel-values",
                              kGolden + "/images/doc_400x300.pixel_values.npy", "--grid-thw",
                              golden + "/image_grid_thw.npy", "--input-ids",
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

  const CliResult r = RunCli(
      {"debug-forward", "--model", kModel, "--pixel-values", dir + "/pixels.npy", "--grid-thw",
       golden + "/image_grid_thw.npy", "--input-ids", golden + "/input_ids.npy", "--attention-mask",
       golden + "/attention_mask.npy", "--all-logits", "--trace", "--dump", dump});
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
    std::vector<std::string> args{"debug-forward", "--model", model, "--input-ids", ids,
                                  "--dump",        dump};
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
}  // namespace mineru
