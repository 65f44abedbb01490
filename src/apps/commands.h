// SPDX-License-Identifier: Apache-2.0
// The subcommands of mineru-cpp. Each Add* registers its options and a callback on the app;
// the callback stores the process exit code in *exit_code.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"

namespace mineru::apps {

// Exit codes: 0 success, 1 the work failed (bad input, I/O), 2 bad command line.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct GlobalOptions {
  int threads = 0;  // 0: MINERU_THREADS, else all hardware threads
};

// Prints "mineru-cpp: error: <kind>: <message>" to stderr and returns kExitFailure.
int ReportError(const Error& error);
int ResolveThreads(const GlobalOptions& options);

void AddInspectCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddMakeModelCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddDebugForwardCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddBenchCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddQuantizeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddPackCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddBenchHttpCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddWorkerCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddTokenizeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddPreprocessCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddRenderCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddParseCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);
void AddServeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace mineru::apps
