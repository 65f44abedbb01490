// SPDX-License-Identifier: Apache-2.0
// MinerU's own HTTP API (`mineru-api`: MinerU 2.7.6 and 3.4.4 mineru/cli/fast_api.py), on the
// task manager, with its field names, answers and error bodies, so MinerU's clients and
// submit/poll integrations work unchanged:
//
//   POST   /file_parse          parse and wait: 200 the task's status fields plus backend,
//                               version and results, or a ZIP ({task id}.zip)
//   POST   /tasks               202 task
//   GET    /tasks/{id}          task | 404
//   GET    /tasks/{id}/result   200 {backend, version, results} or the ZIP | 202 not yet (task
//                               + message) | 409 failed or cancelled (task + message)
//   DELETE /tasks/{id}          cancel and delete
//   GET    /health              200 {"status": "healthy", "protocol_version": 2, ...} | 503
//                               while draining
//
// Form fields and their checks: service/upload_form.h and service/mineru_form.h (a bad backend,
// effort, parse_method or lang_list is 400). Every backend is answered by the VLM two-step
// pipeline; server_url is never contacted.
//
// Errors carry their message under both "detail" (MinerU 3.x, FastAPI's HTTPException) and
// "error" (MinerU 2.7's JSONResponse), so clients of either release read them. A full task
// queue is MinerU's capacity answer: 503 {"detail": "Server is at maximum capacity: N. ..."}
// with Retry-After. A /file_parse client that disconnects cancels and deletes its task. Every
// final /file_parse answer has the headers X-MinerU-Task-Id, X-MinerU-Task-Status,
// X-MinerU-Task-Status-Url and X-MinerU-Task-Result-Url.
//
// Where the two releases answer differently (not just with more fields), `version` chooses:
//                      2.7                            3.4
//   no backend sent    reported as vlm-auto-engine    hybrid-engine
//   /file_parse, task  500 {"error": "Failed to       409 the task's status fields +
//   failed             process file: ..."}            "message": "Task execution failed"
#pragma once

#include <functional>

#include "service/http_server.h"
#include "service/multipart.h"
#include "service/service_metrics.h"
#include "tasks/task_manager.h"

namespace mineru::service {

// Which mineru-api release's answer to give where 2.7 and 3.4 differ.
enum class MineruApiVersion { k2_7, k3_4 };

struct MineruApiOptions {
  MultipartLimits multipart;
  MineruApiVersion version = MineruApiVersion::k2_7;
  // MinerU 3.4's rule for a server reachable from anywhere (bound to 0.0.0.0 or ::): the
  // *-http-client backends and server_url are refused (400) unless allow_public_http_client
  // (--allow-public-http-client) is set.
  bool public_bind = false;
  bool allow_public_http_client = false;
  std::function<bool()> ready;        // /health: false -> 503 (unset: always ready)
  ServiceMetrics* metrics = nullptr;  // counts refusals for a full queue when set
};

// Registers the routes; `tasks` must outlive the server.
void AddMineruRoutes(HttpServer& server, jobs::TaskManager& tasks, const MineruApiOptions& options);

}  // namespace mineru::service
