// SPDX-License-Identifier: Apache-2.0
// The shared helpers of cli_test_util.h, and the one global environment of the apps_cli_test
// binary: it removes the scratch folder when the tests end.
#include "cli_test_util.h"

#include <fcntl.h>
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
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/npy.h"

extern char** environ;

namespace mineru::apps::testing {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp";
constexpr char kErrorPrefix[] = "mineru-cpp: error: ";
// A hung child is killed after this long; the slowest run here takes well under a second.
constexpr auto kChildTimeout = std::chrono::seconds(120);

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(ScratchRoot(), ec);
  }
};
const auto* const kScratchCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

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
::testing::AssertionResult UsageError(const CliResult& r, const std::vector<std::string>& needles) {
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

}  // namespace mineru::apps::testing
