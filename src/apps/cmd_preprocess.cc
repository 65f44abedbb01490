// SPDX-License-Identifier: Apache-2.0
// Placeholder: replaced by the real subcommand.
#include "apps/commands.h"

namespace mineru::apps {

void AddPreprocessCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {}

}  // namespace mineru::apps
