// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the mineru-cpp end-to-end tests (tests/apps, and the CLI tests of
// tests/text and tests/image; built once as the mineru_cli_test_util library): a runner that
// starts the binary as a child process (RunProcess of tests/support/subprocess.h: posix_spawn,
// never a shell, so paths with odd characters reach argv untouched), checks of its exit status
// and error messages, per-test scratch folders under ::testing::TempDir() (removed when the tests
// end by the environment cli_test_util.cc registers, once per binary) and .npy helpers.
//
// Contract under test (src/apps/commands.h): exit 0 on success; 1 when the work failed, with one
// "mineru-cpp: error: ..." line on stderr that names the offending file, tensor or field; 2 for a
// bad command line. No input may make the binary die from a signal.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../support/npy.h"
#include "../support/numeric.h"
#include "../support/scratch.h"
#include "../support/subprocess.h"
#include "base/npy.h"

namespace mineru::apps::testing {

inline const std::string kGolden = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny";
inline const std::string kModel = kGolden + "/model";
inline constexpr int64_t kVocab = 151936;
inline constexpr int64_t kPatchDim = 1176;  // 3 channels x 2 frames x 14 x 14

// ---------------------------------------------------------------------------------------------
// Running the binary.

// How a run ended and what it wrote; the fields are documented in tests/support/subprocess.h.
using CliResult = ::mineru::testing_support::ProcessResult;

// Scratch folders and whole-file I/O (tests/support/scratch.h).
using ::mineru::testing_support::ReadFile;
using ::mineru::testing_support::ScratchRoot;
using ::mineru::testing_support::TestDir;
using ::mineru::testing_support::WriteFile;

// Runs mineru-cpp with exactly these arguments. MINERU_THREADS=2 keeps the runs small and the
// same under ctest (which sets it) and when the test binary is started by hand; `extra_env`
// ("NAME=value") is added after it.
CliResult RunCli(const std::vector<std::string>& args,
                 const std::vector<std::string>& extra_env = {});

// The command, how it ended and (the start of) its output, for failure messages. A
// using-declaration rather than an overload of its own: argument-dependent lookup finds the
// support library's Describe for a CliResult anyway, and two would make every call ambiguous.
using ::mineru::testing_support::Describe;

// The process ended by itself (no signal) with this exit code.
::testing::AssertionResult ExitedWith(const CliResult& r, int code);

::testing::AssertionResult Succeeded(const CliResult& r);

// Exit 1 with one error line on stderr holding every needle (file paths, field names).
::testing::AssertionResult FailedWith(const CliResult& r, const std::vector<std::string>& needles);

// Exit 2 with CLI11's explanation on stderr holding every needle.
::testing::AssertionResult UsageError(const CliResult& r,
                                      const std::vector<std::string>& needles = {});

// ---------------------------------------------------------------------------------------------
// Arrays and files.

// Reading arrays (tests/support/npy.h) and comparing them (tests/support/numeric.h).
using ::mineru::testing_support::F32;
using ::mineru::testing_support::I64;
using ::mineru::testing_support::MaxAbs;
using ::mineru::testing_support::MaxDiff;
using ::mineru::testing_support::ReadArray;

void WriteI64(const std::string& path, const std::vector<int64_t>& shape,
              const std::vector<int64_t>& values);

void WriteF32(const std::string& path, const std::vector<int64_t>& shape,
              const std::vector<float>& values);

// Copies the golden model directory (20 MB) so a test can damage its copy.
std::string CopyGoldenModel(const std::string& dir);

}  // namespace mineru::apps::testing
