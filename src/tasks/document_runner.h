// SPDX-License-Identifier: Apache-2.0
// Where a task's document is parsed. By default the task manager runs the pipeline in this
// process (pipeline::ParseDocument on its generator); a runner sends it elsewhere instead
// (celery/remote_runner.h: to workers through RabbitMQ, results back through Redis) and writes the
// outputs it gets back where ParseDocument would have written them.
#pragma once

#include <string>

#include "base/status.h"
#include "pipeline/document.h"

namespace mineru::jobs {

class DocumentRunner {
 public:
  virtual ~DocumentRunner() = default;
  // As pipeline::ParseDocument: outputs into <output_root>/<stem of input_path>/vlm, progress
  // after every page when the runner knows it, kCancelled once options.cancel is set.
  virtual Result<pipeline::DocumentResult> Run(const std::string& input_path,
                                               const std::string& output_root,
                                               const pipeline::DocumentOptions& options,
                                               const pipeline::ProgressFn& progress) = 0;
};

}  // namespace mineru::jobs
