// SPDX-License-Identifier: Apache-2.0
#include "service/routes.h"

#include "service/document_api.h"
#include "service/mineru_api.h"
#include "service/web_ui.h"

namespace mineru::service {

void ConnectMetrics(ServiceMetrics& metrics, engine::EngineOptions& engine_options,
                    jobs::TaskManagerOptions& task_options) {
  engine_options.on_request_finished = [&metrics](const engine::GenerationResult& r) {
    metrics.ObserveEngineRequest(r);
  };
  task_options.on_page = [&metrics](double seconds) { metrics.ObservePage(seconds); };
  task_options.on_task_finished = [&metrics](jobs::TaskStatus status, double seconds) {
    metrics.ObserveTask(jobs::TaskStatusName(status), seconds);
  };
  task_options.on_cache_lookup = [&metrics](std::string_view tier, bool hit) {
    metrics.ObserveCache(tier, hit);
  };
  task_options.on_cache_error = [&metrics](std::string_view tier, const Error&) {
    metrics.ObserveCacheError(tier);
  };
  task_options.on_share_error = [&metrics](const Error&) { metrics.ObserveSharedTaskError(); };
}

void AddHealthRoutes(HttpServer& server) {
  const RouteTraits kProbe{.on_io_thread = true, .public_access = true};
  server.Route(
      "GET", "/health/live",
      [](const HttpRequest&) { return HttpResponse::Json(200, R"({"status":"ok"})"); }, kProbe);
  server.Route(
      "GET", "/health/ready",
      [&server](const HttpRequest&) {
        return server.ready() ? HttpResponse::Json(200, R"({"status":"ready"})")
                              : HttpResponse::Error(503, "draining", "unavailable_error");
      },
      kProbe);
}

void AddServiceRoutes(HttpServer& server, engine::Engine* engine, jobs::TaskManager& tasks,
                      ServiceMetrics& metrics, const RouteOptions& options) {
  if (engine != nullptr) metrics.SetEngineStats([engine] { return engine->Stats(); });
  metrics.SetTaskGauges([&tasks] {
    const jobs::TaskCounts c = tasks.Counts();
    return std::pair<int64_t, int64_t>(c.pending, c.processing);
  });
  // Chat answers use options.openai.cache: the block cache (and its Redis tier) the caller also
  // handed the task manager, so a page's blocks and a chat about them are answered once.
  OpenAiOptions openai = options.openai;
  openai.on_cache_lookup = [&metrics](bool hit) { metrics.ObserveCache("chat", hit); };
  if (engine != nullptr) AddOpenAiRoutes(server, *engine, openai);
  DocumentApiOptions document;
  document.metrics = &metrics;
  document.multipart = options.multipart;
  document.render = tasks.options().document.render;
  document.previews = options.previews;
  AddDocumentRoutes(server, tasks, document);
  MineruApiOptions mineru;
  mineru.metrics = &metrics;
  mineru.multipart = options.multipart;
  mineru.ready = [&server] { return server.ready(); };
  mineru.version = options.mineru_version;
  mineru.public_bind = options.public_bind;
  mineru.allow_public_http_client = options.allow_public_http_client;
  AddMineruRoutes(server, tasks, mineru);
  AddMetricsRoute(server, metrics);
  AddWebUiRoutes(server);
  AddHealthRoutes(server);
}

}  // namespace mineru::service
