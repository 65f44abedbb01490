// SPDX-License-Identifier: Apache-2.0
// mineru-cpp worker --queue amqp://... --cache redis://... --model DIR: a Celery-compatible
// worker (celery/celery_worker.h). Out of the box it serves Celery's default queue ("celery")
// with the Redis URL as the result backend (and the shared document cache), as `celery worker`
// would; --concurrent-tasks documents are parsed at once (the prefetch). The task:
// run_mineru_inference(document_base64, **options): Python clients call
// `app.send_task("run_mineru_inference", args=[base64], kwargs={...})` and read the result with
// `AsyncResult.get()`. Run any number of workers on any number of machines.
//
// SIGTERM or SIGINT: no new deliveries are taken, running parses are cancelled and their
// messages left unacked, so the broker hands them to another worker; exit 0.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/budget_flags.h"
#include "apps/commands.h"
#include "apps/engine_flags.h"
#include "apps/model_options.h"
#include "apps/model_server_flags.h"
#include "apps/model_source.h"
#include "apps/pipeline_backend.h"
#include "apps/process_lifetime.h"
#include "apps/profile_flags.h"
#include "apps/task_flags.h"
#include "cache/redis_client.h"
#include "celery/amqp_client.h"
#include "celery/celery_worker.h"
#include "pipeline/generator.h"
#include "tasks/task_manager.h"

namespace mineru::apps {
namespace {

struct WorkerArgs {
  std::string model;
  std::string queue_url;
  jobs::CeleryWorkerOptions worker;
  int64_t result_ttl_s = jobs::CeleryWorkerOptions::kDefaultResultTtl.count();
  TaskFlags task_flags;
  ImageBudgetFlags image_budget_flags;
  ModelLoadOptions load;
  EngineFlags engine_flags;
  ProfileFlags profile_flags;
  ModelServerFlags model_server;
};

int RunWorker(const WorkerArgs& args, const GlobalOptions& global) {
  if (args.model.empty() == args.model_server.url.empty()) {
    std::fprintf(stderr, "mineru-cpp: error: worker needs --model DIR or --model-server URL\n");
    return kExitUsage;
  }
  if (!args.image_budget_flags.Check()) return kExitUsage;
  // Memory for the image documents being read: outlives the engine and the task manager.
  ByteBudget image_memory(args.image_budget_flags.max_image_bytes_in_flight);
  auto signals = TerminationSignals::Block();
  if (!signals) return ReportError(signals.error());
  auto amqp_options = jobs::ParseAmqpUrl(args.queue_url);
  if (!amqp_options) return ReportError(amqp_options.error());
  if (args.task_flags.cache_url.empty()) {
    std::fprintf(stderr,
                 "mineru-cpp: error: worker needs --cache redis://... (the result "
                 "backend)\n");
    return kExitUsage;
  }
  auto redis_options = jobs::ParseRedisUrl(args.task_flags.cache_url);
  if (!redis_options) return ReportError(redis_options.error());

  auto backend =
      StartPipelineBackend(args.model, args.load, args.engine_flags, ResolveThreads(global),
                           "worker", args.profile_flags, args.model_server);
  if (!backend) return ReportError(backend.error());
  const pipeline::Profile profile = backend->profile.profile;

  jobs::TaskManagerOptions task_options;
  args.task_flags.Apply(task_options);
  backend->Apply(args.profile_flags, task_options.document);
  args.image_budget_flags.Apply(task_options.document.image_budget, &image_memory);
  // The consumer's prefetch is the number of documents parsed at once; the task queue only ever
  // holds what the worker took.
  jobs::CeleryWorkerOptions worker_options = args.worker;
  worker_options.slots = task_options.concurrent_tasks;
  worker_options.result_ttl = std::chrono::seconds(args.result_ttl_s);
  task_options.max_queued_tasks =
      std::max(task_options.max_queued_tasks, static_cast<size_t>(worker_options.slots));
  task_options.model_fingerprint = args.task_flags.ModelFingerprint(
      backend->model_fingerprint + args.profile_flags.Fingerprint(profile));
  auto block_cache = args.task_flags.MakeBlockCache(task_options.model_fingerprint);
  if (!block_cache) return ReportError(block_cache.error());
  task_options.block_cache = block_cache->get();
  auto work_dir = WorkDir::Make(args.task_flags.work_dir, "mineru-worker");
  if (!work_dir) return ReportError(work_dir.error());
  task_options.work_dir = work_dir->path();
  auto tasks = jobs::TaskManager::Create(backend->generator(), task_options);
  if (!tasks) return ReportError(tasks.error());

  jobs::RedisClient results(*redis_options);
  jobs::AmqpConnection amqp;
  if (Status started = amqp.Start(*amqp_options, jobs::CeleryWorkerTopology(worker_options));
      !started) {
    return ReportError(started.error());
  }
  auto worker = jobs::CeleryWorker::Start(**tasks, amqp, results, worker_options);
  if (!worker) return ReportError(worker.error());
  std::fprintf(stderr, "worker ready: task '%s' from queue '%s', %d slot(s), node %s\n",
               worker_options.task_name.c_str(), worker_options.queue.c_str(), worker_options.slots,
               worker_options.hostname.c_str());

  std::fprintf(stderr, "received %s: stopping (running jobs go back to the queue)\n",
               signals->Wait());
  (*worker)->Stop();
  amqp.Close();
  const jobs::CeleryWorkerStats s = (*worker)->Stats();
  std::fprintf(stderr,
               "stopped: %lld received, %lld succeeded, %lld failed, %lld revoked (%lld "
               "terminated), %lld duplicates, %lld dead-lettered\n",
               static_cast<long long>(s.received), static_cast<long long>(s.succeeded),
               static_cast<long long>(s.failed), static_cast<long long>(s.revoked),
               static_cast<long long>(s.terminated), static_cast<long long>(s.duplicates),
               static_cast<long long>(s.dead_lettered));
  worker->reset();
  tasks->reset();
  return 0;
}

}  // namespace

void AddWorkerCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "worker", "Celery-compatible worker: documents from RabbitMQ, results to Redis");
  auto args = std::make_shared<WorkerArgs>();
  cmd->add_option("-m,--model", args->model,
                  "Checkpoint directory, or a Hugging Face id found in the local cache (or "
                  "--model-server)");
  cmd->add_option("--queue", args->queue_url, "RabbitMQ URL (amqp://user:pass@host:port/vhost)")
      ->required();
  cmd->add_option("--task-name", args->worker.task_name, "Celery task name served")
      ->capture_default_str();
  cmd->add_option("--celery-queue", args->worker.queue,
                  "Celery queue (also its exchange and routing key)")
      ->capture_default_str();
  cmd->add_option("-n,--hostname", args->worker.hostname,
                  "Node name for Celery remote control (revoke destinations, the pidbox queue); "
                  "unique per worker")
      ->capture_default_str();
  cmd->add_option("--dead-letter-queue", args->worker.dead_letter_queue,
                  "Queue that keeps poison messages with their reason")
      ->capture_default_str();
  cmd->add_option("--max-deliveries", args->worker.max_deliveries,
                  "Deliveries of one task before it is dead-lettered")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--result-ttl", args->result_ttl_s,
                  "Seconds results stay in Redis (Celery's result_expires)")
      ->check(CLI::Range(int64_t{1}, int64_t{365} * 24 * 3600))
      ->capture_default_str();
  args->task_flags.Register(*cmd);
  args->image_budget_flags.Register(*cmd);
  args->profile_flags.Register(*cmd);
  args->load.Register(*cmd);
  args->engine_flags.Register(*cmd);
  args->model_server.Register(*cmd);
  cmd->callback([=, &global] { *exit_code = RunWorker(*args, global); });
}

}  // namespace mineru::apps
