// SPDX-License-Identifier: Apache-2.0
// Our submit-poll document API on the task manager (docs/API.md):
//
//   POST   /v1/document/parse                       202 task (multipart form or a raw document)
//   GET    /v1/tasks/{id}                           the task, with progress
//   GET    /v1/tasks/{id}/events                    SSE: "progress" events, then one "done"
//   GET    /v1/tasks/{id}/result                    200 outputs | 202 not yet | 409 failed
//   GET    /v1/tasks/{id}/zip                       the outputs as a ZIP
//   GET    /v1/tasks/{id}/files/{doc}/images/{name} one output image
//   GET    /v1/tasks/{id}/pages/{doc}/{page}        a page preview (JPEG; service/page_preview.h:
//                                                   cached, at most max_renders at once, 503)
//   DELETE /v1/tasks/{id}                           cancel and delete
//
// Errors use the API error shape (service/api_error.h); a full queue is 429 with Retry-After.
#pragma once

#include "image/pdf/render_options.h"
#include "service/http_server.h"
#include "service/multipart.h"
#include "service/page_preview.h"
#include "service/service_metrics.h"
#include "tasks/task_manager.h"

namespace mineru::service {

struct DocumentApiOptions {
  MultipartLimits multipart;
  pdf::RenderOptions render;          // page previews: helper path and limits
  PreviewOptions previews;            // page previews: cache and concurrency cap
  ServiceMetrics* metrics = nullptr;  // counts refusals for a full queue when set
};

// Registers the routes; `tasks` must outlive the server.
void AddDocumentRoutes(HttpServer& server, jobs::TaskManager& tasks,
                       const DocumentApiOptions& options);

}  // namespace mineru::service
