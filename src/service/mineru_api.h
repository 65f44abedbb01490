// SPDX-License-Identifier: Apache-2.0
// MinerU's own HTTP API (`mineru-api`, spec mineru.md 4.2 and ecosystem.md), on the task
// manager, with its field names, answers and error bodies, so MinerU's clients and
// submit/poll integrations work unchanged:
//
//   POST   /file_parse          parse and wait: 200 JSON results or results.zip
//   POST   /tasks               202 task
//   GET    /tasks/{id}          task | 404
//   GET    /tasks/{id}/result   200 results | 202 not yet | 409 failed or cancelled
//   DELETE /tasks/{id}          cancel and delete
//   GET    /health              200 {"status": "healthy", ...} | 503 while draining
//
// Every backend value is accepted and answered by the VLM two-step pipeline. A full task queue
// is MinerU's capacity answer: 503 {"detail": "Server is at maximum capacity: N. ..."} with
// Retry-After. A /file_parse client that disconnects cancels and deletes its task.
#pragma once

#include <functional>

#include "jobs/task_manager.h"
#include "service/http_server.h"
#include "service/multipart.h"
#include "service/service_metrics.h"

namespace mineru::service {

struct MineruApiOptions {
  MultipartLimits multipart;
  std::function<bool()> ready;        // /health: false -> 503 (unset: always ready)
  ServiceMetrics* metrics = nullptr;  // counts refusals for a full queue when set
};

// Registers the routes; `tasks` must outlive the server.
void AddMineruRoutes(HttpServer& server, jobs::TaskManager& tasks, const MineruApiOptions& options);

}  // namespace mineru::service
