// SPDX-License-Identifier: Apache-2.0
// The shared helpers of cli_test_util.h (the scratch folder and its cleanup are
// tests/support/scratch.h's).
#include "cli_test_util.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/npy.h"

namespace mineru::apps::testing {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp";
constexpr char kErrorPrefix[] = "mineru-cpp: error: ";

}  // namespace

// A fresh directory for the current test.

// Runs mineru-cpp with exactly these arguments. MINERU_THREADS=2 keeps the runs small and the
// same under ctest (which sets it) and when the test binary is started by hand. The slowest run
// here takes well under a second, so the default timeout only catches a hang.
CliResult RunCli(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  std::vector<std::string> argv{kBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env{"MINERU_THREADS=2"};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  return ::mineru::testing_support::RunProcess(argv, env);
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
