// SPDX-License-Identifier: Apache-2.0
// mineru-cpp serve --model DIR: one HTTP server (docs/API.md) with
//   MinerU's API (service/mineru_api.h)        /file_parse, /tasks, /health
//   our document API (service/document_api.h)  /v1/document/parse, /v1/tasks/...
//   the OpenAI API (service/openai_api.h)      /v1/models, /v1/chat/completions
//   /metrics (service/service_metrics.h), the web UI at / (service/web_ui.h), and probes:
//   GET /health/live   200 while the process runs
//   GET /health/ready  200 while serving, 503 once draining
// Documents run through the pipeline as tasks (tasks/task_manager.h) on the same engine that
// answers chat requests, so both share its continuous batching.
//
// SIGTERM or SIGINT drains: readiness turns false, new connections are refused, requests in
// flight get up to 30 s to finish (what has not finished by the last 2 s is answered 503, an
// event stream gets an error event and [DONE]); then running tasks are cancelled and the
// process exits 0, at once if a handler thread did not return (HttpServer::Stop). The signals
// are blocked in every thread (the mask is set before any thread starts) and taken by sigwait
// in the main thread.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "apps/budget_flags.h"
#include "apps/commands.h"
#include "apps/engine_flags.h"
#include "apps/model_options.h"
#include "apps/model_server_flags.h"
#include "apps/model_source.h"
#include "apps/pipeline_backend.h"
#include "apps/process_lifetime.h"
#include "apps/profile_flags.h"
#include "apps/server_flags.h"
#include "apps/task_flags.h"
#include "cache/redis_client.h"
#include "celery/amqp_client.h"
#include "celery/celery_worker.h"
#include "celery/remote_runner.h"
#include "engine/engine.h"
#include "pipeline/generator.h"
#include "service/http_server.h"
#include "service/routes.h"
#include "service/service_metrics.h"
#include "tasks/task_manager.h"

namespace mineru::apps {
namespace {

constexpr std::chrono::seconds kDrainTimeout{30};

struct ServeArgs {
  std::string model;
  std::string served_model_name;  // empty: DefaultModelId(model)
  std::string queue_url;          // empty: documents are parsed here
  ServerFlags server_flags;
  TaskFlags task_flags;
  ImageBudgetFlags image_budget_flags;
  ChatLimitFlags chat_limit_flags;
  ModelLoadOptions load;
  EngineFlags engine_flags;
  ProfileFlags profile_flags;
  ModelServerFlags model_server;
};

// The model id without --served-model-name: a checkpoint directory's own name
// ("MinerU2.5-2509-1.2B" for --model /srv/models/MinerU2.5-2509-1.2B/), so that /v1/models and
// error texts never show a server path; a Hugging Face id as given
// ("opendatalab/MinerU2.5-2509-1.2B", the id vLLM reports for it).
std::string DefaultModelId(const std::string& model) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(model, ec)) return model;
  // Not canonical: a symlink keeps the name the operator typed. "dir/" and "." have no
  // filename of their own, so the absolute, normal form names them.
  fs::path path = fs::absolute(model, ec).lexically_normal();
  if (ec) path = fs::path(model).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  const std::string name = path.filename().string();
  return name.empty() || name == "." || name == ".." ? "mineru" : name;
}

int RunServe(const ServeArgs& args, const GlobalOptions& global) {
  // Flag combinations and URLs first: a mistake there must not wait for the model to load.
  if (args.model.empty() == args.model_server.url.empty()) {
    std::fprintf(stderr, "mineru-cpp: error: serve needs --model DIR or --model-server URL\n");
    return kExitUsage;
  }
  std::optional<jobs::AmqpOptions> amqp_options;
  if (!args.queue_url.empty()) {
    if (args.task_flags.cache_url.empty()) {
      std::fprintf(stderr,
                   "mineru-cpp: error: --queue needs --cache redis://... (where the "
                   "workers store results)\n");
      return kExitUsage;
    }
    auto parsed = jobs::ParseAmqpUrl(args.queue_url);
    if (!parsed) return ReportError(parsed.error());
    amqp_options = *parsed;
  }
  if (!args.image_budget_flags.Check()) return kExitUsage;
  if (const std::string problem = args.server_flags.ApiKeyEnvironmentProblem(); !problem.empty()) {
    std::fprintf(stderr, "mineru-cpp: error: %s\n", problem.c_str());
    return kExitUsage;
  }
  auto signals = TerminationSignals::Block();
  if (!signals) return ReportError(signals.error());

  // Memory for images in flight, shared by chat requests and image documents: declared before
  // everything that holds a reservation of it (the engine holds decoded images).
  ByteBudget image_memory(args.image_budget_flags.max_image_bytes_in_flight);
  // Declared first, destroyed last: the engine, the task manager and the server report to it.
  service::ServiceMetrics metrics;
  const int threads = ResolveThreads(global);
  EngineFlags engine_flags = args.engine_flags;
  jobs::TaskManagerOptions task_options;
  service::ConnectMetrics(metrics, engine_flags.options, task_options);
  auto backend = StartPipelineBackend(
      args.model, args.load, engine_flags, threads, "serve", args.profile_flags, args.model_server,
      [&metrics](const pipeline::RemoteRequestRecord& r) { metrics.ObserveModelServerRequest(r); });
  if (!backend) return ReportError(backend.error());
  engine::Engine* engine = backend->engine.get();
  const pipeline::Profile profile = backend->profile.profile;
  if (backend->remote) {
    metrics.SetModelServerStats([remote = backend->remote.get()] { return remote->Stats(); });
  }

  auto work_dir = WorkDir::Make(args.task_flags.work_dir, "mineru-cpp");
  if (!work_dir) return ReportError(work_dir.error());
  task_options.work_dir = work_dir->path();
  args.task_flags.Apply(task_options);
  backend->Apply(args.profile_flags, task_options.document);
  args.image_budget_flags.Apply(task_options.document.image_budget, &image_memory);
  // API nodes on one Redis answer each other's tasks (tasks/shared_tasks.h).
  task_options.share_tasks = !task_options.cache_url.empty();
  task_options.model_fingerprint = args.task_flags.ModelFingerprint(
      backend->model_fingerprint + args.profile_flags.Fingerprint(profile));
  // One block cache for the pages' answers and the chat API's; outlives both.
  auto block_cache = args.task_flags.MakeBlockCache(task_options.model_fingerprint);
  if (!block_cache) return ReportError(block_cache.error());
  task_options.block_cache = block_cache->get();
  // With --queue, documents go to workers through RabbitMQ and come back through Redis.
  std::unique_ptr<jobs::AmqpConnection> amqp;
  std::unique_ptr<jobs::RedisClient> results;
  std::unique_ptr<jobs::RemoteRunner> runner;
  if (!args.queue_url.empty()) {
    auto redis_options = jobs::ParseRedisUrl(args.task_flags.cache_url);
    if (!redis_options) return ReportError(redis_options.error());
    amqp = std::make_unique<jobs::AmqpConnection>();
    if (Status started = amqp->Start(*amqp_options, jobs::RemoteRunnerTopology()); !started) {
      return ReportError(started.error());
    }
    results = std::make_unique<jobs::RedisClient>(*redis_options);
    runner = std::make_unique<jobs::RemoteRunner>(*amqp, *results);
    task_options.runner = runner.get();
  }
  auto tasks = jobs::TaskManager::Create(backend->generator(), task_options);
  if (!tasks) return ReportError(tasks.error());

  service::HttpServer server;
  service::RouteOptions routes;
  routes.openai.model_id =
      args.served_model_name.empty() ? DefaultModelId(args.model) : args.served_model_name;
  routes.openai.profile = profile;
  routes.openai.cache = (*block_cache)->enabled() ? block_cache->get() : nullptr;
  // MinerU's API answers as the MinerU release whose outputs the profile writes.
  routes.mineru_version = profile == pipeline::Profile::kPro ? service::MineruApiVersion::k3_4
                                                             : service::MineruApiVersion::k2_7;
  args.server_flags.Apply(routes.openai);
  args.image_budget_flags.Apply(routes.openai.limits.images, &image_memory);
  args.chat_limit_flags.Apply(routes.openai.limits);
  // Counted before any image is read; the engine checks the same limit again.
  routes.openai.limits.max_images = engine_flags.options.max_images_per_request;
  args.server_flags.Apply(routes);
  args.task_flags.Apply(routes.multipart);
  args.task_flags.Apply(routes.previews);
  service::AddServiceRoutes(server, engine, **tasks, metrics, routes);

  service::ServerOptions options;
  args.server_flags.Apply(options);
  options.on_request = [&metrics](const service::RequestRecord& r) { metrics.ObserveHttp(r); };
  if (auto started = server.Start(options); !started) return ReportError(started.error());
  if (engine != nullptr) {
    std::fprintf(stderr, "serving model '%s' (%s)\n", routes.openai.model_id.c_str(),
                 args.model.c_str());
  } else {
    std::fprintf(stderr, "documents go to the model server; no OpenAI routes here\n");
  }
  if (!options.api_key.empty()) {
    std::fprintf(stderr, "every route but the probes and the web UI's files needs the API key\n");
  } else if (routes.public_bind) {
    std::fprintf(stderr,
                 "warning: listening on every address without --api-key: whoever reaches the "
                 "port can use the server\n");
  }
  std::fprintf(stderr, "listening on http://%s:%d\n", options.host.c_str(), server.port());

  const char* received = signals->Wait();
  std::fprintf(stderr, "received %s: draining (up to %lld s)\n", received,
               static_cast<long long>(kDrainTimeout.count()));
  server.BeginDrain();
  if (!server.Stop(kDrainTimeout)) {
    // A handler still runs on the engine and the tasks: tearing them down under it could
    // crash, so the process ends here (the default work directory stays behind).
    std::fprintf(stderr, "stopped (a request handler did not return: exiting now)\n");
    std::fflush(nullptr);
    std::_Exit(0);
  }
  std::fprintf(stderr, "stopped\n");
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd =
      app.add_subcommand("serve",
                         "HTTP server: MinerU's API, document tasks, the OpenAI API (MinerU's "
                         "vlm-http-client), /metrics and the web UI");
  auto args = std::make_shared<ServeArgs>();
  cmd->add_option("-m,--model", args->model,
                  "Checkpoint directory, or a Hugging Face id found in the local Hugging Face "
                  "cache (or --model-server)");
  cmd->add_option("--queue", args->queue_url,
                  "RabbitMQ URL: documents are parsed by `mineru-cpp worker` processes reading "
                  "it, results come back through --cache (default: parsed here)");
  cmd->add_option("--served-model-name", args->served_model_name,
                  "Model id reported by /v1/models and required in requests (default: the "
                  "--model directory's name, or the Hugging Face id as given)");
  args->server_flags.Register(*cmd);
  args->task_flags.Register(*cmd);
  args->task_flags.RegisterPreviews(*cmd);
  args->image_budget_flags.Register(*cmd);
  args->chat_limit_flags.Register(*cmd);
  args->profile_flags.Register(*cmd);
  args->load.Register(*cmd);
  args->engine_flags.Register(*cmd);
  args->model_server.Register(*cmd);
  cmd->callback([=, &global] { *exit_code = RunServe(*args, global); });
}

}  // namespace mineru::apps
