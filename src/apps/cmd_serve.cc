// SPDX-License-Identifier: Apache-2.0
// mineru-cpp serve --model DIR: the OpenAI-compatible server (service/openai_api.h) that
// MinerU's vlm-http-client backend talks to, plus liveness and readiness probes:
//   GET /health/live   200 while the process runs
//   GET /health/ready  200 while serving, 503 once draining
//
// SIGTERM or SIGINT drains: readiness turns false, new connections are refused, requests in
// flight get up to 30 s to finish; then the process exits 0. The signals are blocked in every
// thread (the mask is set before any thread starts) and taken by sigwait in the main thread.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/commands.h"
#include "apps/engine_flags.h"
#include "apps/model_options.h"
#include "apps/model_source.h"
#include "engine/engine.h"
#include "service/http_server.h"
#include "service/openai_api.h"

namespace mineru::apps {
namespace {

constexpr std::chrono::seconds kDrainTimeout{30};

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string model;
  std::string served_model_name;  // empty: the --model argument as given
  size_t max_body_bytes = service::ServerLimits::kDefaultMaxBodyBytes;
  uint64_t max_image_bytes = image::kDefaultMaxImageBytes;
  int handler_threads = 128;
  int io_threads = 2;
  ModelLoadOptions load;
  EngineFlags engine_flags;
};

int RunServe(const ServeArgs& args, const GlobalOptions& global) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) {
    std::fprintf(stderr, "mineru-cpp: error: cannot block SIGTERM/SIGINT\n");
    return kExitFailure;
  }

  const int threads = ResolveThreads(global);
  auto engine = StartEngine(args.model, args.load, args.engine_flags, threads, "serve");
  if (!engine) return ReportError(engine.error());

  service::HttpServer server;
  service::OpenAiOptions api;
  api.model_id = args.served_model_name.empty() ? args.model : args.served_model_name;
  api.max_image_bytes = args.max_image_bytes;
  service::AddOpenAiRoutes(server, **engine, api);
  server.Route("GET", "/health/live", [](const service::HttpRequest&) {
    return service::HttpResponse::Json(200, R"({"status":"ok"})");
  });
  server.Route("GET", "/health/ready", [&server](const service::HttpRequest&) {
    return server.ready() ? service::HttpResponse::Json(200, R"({"status":"ready"})")
                          : service::HttpResponse::Error(503, "draining", "unavailable_error");
  });

  service::ServerOptions options;
  options.host = args.host;
  options.port = args.port;
  options.io_threads = args.io_threads;
  options.handler_threads = args.handler_threads;
  options.limits.max_body_bytes = args.max_body_bytes;
  if (auto started = server.Start(options); !started) return ReportError(started.error());
  std::fprintf(stderr, "serving model '%s' (%s)\n", api.model_id.c_str(), args.model.c_str());
  std::fprintf(stderr, "listening on http://%s:%d\n", args.host.c_str(), server.port());

  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  std::fprintf(stderr, "received %s: draining (up to %lld s)\n",
               signal_number == SIGINT ? "SIGINT" : "SIGTERM",
               static_cast<long long>(kDrainTimeout.count()));
  server.BeginDrain();
  server.Stop(kDrainTimeout);
  std::fprintf(stderr, "stopped\n");
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd =
      app.add_subcommand("serve", "OpenAI-compatible HTTP server (MinerU's vlm-http-client)");
  auto args = std::make_shared<ServeArgs>();
  cmd->add_option("--host", args->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", args->port, "Port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("-m,--model", args->model,
                  "Checkpoint directory, or a Hugging Face id found in the local Hugging Face "
                  "cache")
      ->required();
  cmd->add_option("--served-model-name", args->served_model_name,
                  "Model id reported by /v1/models and required in requests (default: --model)");
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "Largest request body accepted")
      ->check(CLI::Range(size_t{1}, size_t{1} << 34))
      ->capture_default_str();
  cmd->add_option("--max-image-bytes", args->max_image_bytes,
                  "Largest encoded image inside one request")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 34))
      ->capture_default_str();
  cmd->add_option("--handler-threads", args->handler_threads,
                  "Requests handled at once (each generating request holds one)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--io-threads", args->io_threads, "Socket I/O threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  args->load.Register(*cmd);
  args->engine_flags.Register(*cmd);
  cmd->callback([=, &global] { *exit_code = RunServe(*args, global); });
}

}  // namespace mineru::apps
