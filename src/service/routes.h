// SPDX-License-Identifier: Apache-2.0
// Every endpoint of docs/API.md on one server: MinerU's API and our document API on the task
// manager, the OpenAI API on the engine, /metrics, the web UI, and the health probes
// (/health/live always 200; /health/ready 200 until the server drains). `mineru-cpp serve` and
// the web UI's end-to-end test server both wire the service through this one function.
#pragma once

#include "engine/engine.h"
#include "service/http_server.h"
#include "service/mineru_api.h"
#include "service/multipart.h"
#include "service/openai_api.h"
#include "service/page_preview.h"
#include "service/service_metrics.h"
#include "tasks/task_manager.h"

namespace mineru::service {

// Points the task manager's observers (pages, finished tasks, cache lookups) at `metrics`, and
// the engine's finished-request observer; call before creating them.
void ConnectMetrics(ServiceMetrics& metrics, engine::EngineOptions& engine_options,
                    jobs::TaskManagerOptions& task_options);

struct RouteOptions {
  OpenAiOptions openai;       // its profile names the served checkpoint's (default 2509)
  MultipartLimits multipart;  // document uploads (MinerU's API and ours)
  PreviewOptions previews;    // page previews of our document API (service/page_preview.h)
  // MinerU's API (service/mineru_api.h): which release's answers where 2.7 and 3.4 differ, and
  // the rule for *-http-client backends on a server bound to 0.0.0.0 or ::.
  MineruApiVersion mineru_version = MineruApiVersion::k2_7;
  bool public_bind = false;
  bool allow_public_http_client = false;
};

// GET /health/live (200 {"status":"ok"}) and GET /health/ready (200 {"status":"ready"} until the
// server drains, then 503): on the I/O thread, so they answer while every handler thread and the
// engine are busy, and public (no API key), as orchestrators probe without one.
void AddHealthRoutes(HttpServer& server);

// `engine`, `tasks`, `metrics` and `server` must outlive the server's serving. Also points the
// metrics' scrape-time gauges at the engine and the task manager. Without an engine (documents
// go to a model server: `serve --model-server`), the OpenAI routes are not served: the model
// server itself answers chat requests.
void AddServiceRoutes(HttpServer& server, engine::Engine* engine, jobs::TaskManager& tasks,
                      ServiceMetrics& metrics, const RouteOptions& options);

}  // namespace mineru::service
