// SPDX-License-Identifier: Apache-2.0
// mineru-cpp: one binary, one subcommand per job.
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "apps/commands.h"

namespace mineru::apps {

int ReportError(const Error& error) {
  std::fprintf(stderr, "mineru-cpp: error: %s\n", error.ToString().c_str());
  return kExitFailure;
}

int ResolveThreads(const GlobalOptions& options) {
  if (options.threads > 0) return options.threads;
  if (const char* env = std::getenv("MINERU_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

}  // namespace mineru::apps

int main(int argc, char** argv) {
  using namespace mineru::apps;
  // Buffers of a megabyte or more (activations of a vision pass, quantized rows, request
  // bodies) are mapped fresh and returned to the system when freed. glibc's default raises this
  // threshold after each large free, up to 32 MiB, and then keeps such buffers in its heap:
  // hundreds of MB of a finished page would stay resident.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  CLI::App app{"mineru-cpp: MinerU2.5 document parsing (Qwen2-VL) in C++"};
  app.set_version_flag("--version", "mineru-cpp 0.1.0");
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--threads", global.threads,
                 "Compute threads (default: $MINERU_THREADS, else all hardware threads)")
      ->check(CLI::Range(0, 4096));
  int exit_code = 0;
  AddParseCommand(app, global, &exit_code);
  AddServeCommand(app, global, &exit_code);
  AddInspectCommand(app, global, &exit_code);
  AddMakeModelCommand(app, global, &exit_code);
  AddDebugForwardCommand(app, global, &exit_code);
  AddBenchCommand(app, global, &exit_code);
  AddQuantizeCommand(app, global, &exit_code);
  AddPackCommand(app, global, &exit_code);
  AddBenchHttpCommand(app, global, &exit_code);
  AddWorkerCommand(app, global, &exit_code);
  AddTokenizeCommand(app, global, &exit_code);
  AddPreprocessCommand(app, global, &exit_code);
  AddRenderCommand(app, global, &exit_code);
  // CLI11 reports a mistyped subcommand only as "A subcommand is required": name it.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads") {
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->check_name(arg);
    }
    if (!known) {
      std::fprintf(stderr, "mineru-cpp: error: unknown subcommand '%s' (see mineru-cpp --help)\n",
                   arg.c_str());
      return kExitUsage;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  return exit_code;
}
