// SPDX-License-Identifier: Apache-2.0
// Runs a program as a child process for the tests that check a binary from the outside
// (mineru-cpp, the PDF helper, pdftoppm): posix_spawn and never a shell, so arguments with
// spaces, quotes or other odd characters reach the child's argv exactly as given; stdout and
// stderr captured whole; how the child ended told apart (exit code, signal, killed for hanging),
// because a crash or a hang must fail a test with a readable message rather than pass as some
// exit code or stall the whole test run.
//
// Built once as the mineru_test_support library (tests/CMakeLists.txt). It has no GoogleTest
// dependency: the assertions on a result (expected exit code, error line) belong to each test
// area's own helpers (tests/apps/cli_test_util.h, tests/pdf/pdf_test_util.h).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace mineru::testing_support {

// How long a child may run before RunProcess kills it. Every run in the tests takes a few seconds
// at most; this only turns a hang into a failure instead of a stuck test run.
inline constexpr std::chrono::milliseconds kDefaultProcessTimeout = std::chrono::seconds(120);

struct ProcessResult {
  std::string command;     // the argv, shell-quoted, for failure messages
  bool started = false;    // false: the program could not be started (`error` says why)
  bool exited = false;     // false: ended by a signal (a crash or the timeout) or never started
  int exit_code = -1;      // when `exited`
  int signal = 0;          // when ended by a signal
  bool timed_out = false;  // killed with SIGKILL after `timeout`
  std::string out, err;    // everything the child wrote to stdout and stderr
  // The limit it ran under, for Describe.
  std::chrono::milliseconds timeout{0};
  // Why RunProcess itself failed (could not start the program, lost track of it); kept apart
  // from `err` so that a test's checks of stderr see only what the child wrote.
  std::string error;
};

// Runs `argv` (argv[0] is the program: a path, or a name looked up in PATH) with stdin from
// /dev/null and waits for it. The child inherits this process's environment, except that each
// "NAME=value" of `extra_env` replaces any inherited NAME (so a test's setting wins whatever the
// caller's environment holds). A child still running after `timeout` is killed with SIGKILL.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env = {},
                         std::chrono::milliseconds timeout = kDefaultProcessTimeout);

// The command, how it ended and the start of its output, for failure messages.
std::string Describe(const ProcessResult& r);

}  // namespace mineru::testing_support
