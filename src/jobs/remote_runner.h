// SPDX-License-Identifier: Apache-2.0
// Parses documents on workers (`mineru-cpp worker`) instead of here: each document is published
// to RabbitMQ as a Celery task (run_mineru_inference with the document as base64 and
// "return_outputs": true), confirmed by the broker before Run waits, and its outputs come back
// in the task's Celery result in Redis (celery-task-meta-<id>), where the worker also writes
// PROGRESS states after every page. `serve --queue amqp://... --cache redis://...` uses it: the
// API stays in front, any number of workers parse.
//
// Cancellation stops the waiting (Run returns kCancelled at once); the worker finishes the
// document and stores a result nobody reads, which expires with the result TTL.
#pragma once

#include <chrono>
#include <string>

#include "jobs/amqp_client.h"
#include "jobs/celery_worker.h"
#include "jobs/document_runner.h"
#include "jobs/redis_client.h"

namespace mineru::jobs {

struct RemoteRunnerOptions {
  static constexpr std::chrono::milliseconds kDefaultPollInterval{100};

  // The worker's task name and queue (CeleryWorkerOptions).
  std::string task_name = CeleryWorkerOptions{}.task_name;
  std::string queue = CeleryWorkerOptions{}.queue;
  // How often the result key is read.
  std::chrono::milliseconds poll_interval = kDefaultPollInterval;
};

class RemoteRunner final : public DocumentRunner {
 public:
  // `amqp` must be started with CeleryWorkerTopology (it declares the queue the workers read);
  // both must outlive the runner. Thread-safe (the clients are).
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
