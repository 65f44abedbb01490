// SPDX-License-Identifier: Apache-2.0
// Parses documents on workers (`mineru-cpp worker`) instead of here: each document is published
// to RabbitMQ as a Celery task (run_mineru_inference with the document as base64 and
// "return_outputs": true), confirmed by the broker before Run waits, and its outputs come back
// in the task's Celery result in Redis (celery-task-meta-<id>), where the worker also writes
// PROGRESS states after every page. `serve --queue amqp://... --cache redis://...` uses it: the
// API stays in front, any number of workers parse.
//
// Cancellation (options.cancel, e.g. DELETE /v1/tasks/{id}) publishes a Celery revoke with
// terminate=true for the task (celery/celery_control.h) to every worker's pidbox, then returns
// kCancelled at once: the worker parsing it cancels the parse and stores REVOKED, and a worker
// that has not taken it yet stores REVOKED without parsing when it does. While no worker has
// taken the task, REVOKED is also stored in Redis, so a worker that starts after the broadcast
// skips it too. Best effort: a failed revoke publish is not retried.
#pragma once

#include <chrono>
#include <string>

#include "cache/redis_client.h"
#include "celery/amqp_client.h"
#include "celery/celery_protocol.h"
#include "tasks/document_runner.h"

namespace mineru::jobs {

struct RemoteRunnerOptions {
  static constexpr std::chrono::milliseconds kDefaultPollInterval{100};

  // The workers' task name and queue (celery/celery_protocol.h, as CeleryWorkerOptions).
  std::string task_name{kCeleryTaskName};
  std::string queue{kCeleryQueue};
  // How often the result key is read.
  std::chrono::milliseconds poll_interval = kDefaultPollInterval;
  // Lifetime of the REVOKED result stored for a cancelled task (as the workers' results).
  std::chrono::seconds result_ttl = kCeleryResultTtl;
};

// What the runner's AMQP connection must declare: Celery's queue (options.queue) as the workers
// declare it and the remote control exchange its revokes go to (CeleryTaskTopology).
Topology RemoteRunnerTopology(const RemoteRunnerOptions& options = {});

class RemoteRunner final : public DocumentRunner {
 public:
  // `amqp` must be started with RemoteRunnerTopology(options) (it declares the queue the workers
  // read and the control exchange); both must outlive the runner. Thread-safe (the clients are).
  RemoteRunner(AmqpConnection& amqp, RedisClient& results, RemoteRunnerOptions options = {})
      : amqp_(amqp), results_(results), options_(std::move(options)) {}

  Result<pipeline::DocumentResult> Run(const std::string& input_path,
                                       const std::string& output_root,
                                       const pipeline::DocumentOptions& options,
                                       const pipeline::ProgressFn& progress) override;

 private:
  AmqpConnection& amqp_;
  RedisClient& results_;
  const RemoteRunnerOptions options_;
};

}  // namespace mineru::jobs
