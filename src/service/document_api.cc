// SPDX-License-Identifier: Apache-2.0
#include "service/document_api.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <memory>
#include <variant>

#include "base/mapped_file.h"
#include "service/api_error.h"
#include "service/page_preview.h"
#include "service/task_json.h"
#include "service/upload_form.h"

namespace mineru::service {
namespace {

constexpr std::string_view kPrefix = "/v1/tasks";

HttpResponse JsonResponse(int status, const Json& json) {
  return HttpResponse::Json(status, DumpJson(json));
}

// Output images and previews: immutable for the task's life, so the browser may keep them.
HttpResponse ImageResponse(std::string bytes, std::string_view mime = "image/jpeg") {
  HttpResponse r;
  r.body = std::move(bytes);
  r.headers["Content-Type"] = std::string(mime);
  r.headers["Cache-Control"] = "private, max-age=3600";
  return r;
}

HttpResponse UnknownTask(const std::string& id) {
  return ApiError(404, fmt::format("task '{}' not found", id), "not_found_error");
}

// A non-negative index from a path segment; nullopt when it is not one.
std::optional<size_t> Index(const std::string& text) {
  size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

class DocumentApi {
 public:
  DocumentApi(jobs::TaskManager& tasks, DocumentApiOptions options)
      : tasks_(tasks), options_(std::move(options)), previews_(options_.previews) {}

  HttpResponse Submit(const HttpRequest& request) {
    auto upload = ReadUpload(request, options_.multipart);
    if (!upload) {
      return upload.error().code == ErrorCode::kUnsupported
                 ? ApiError(415, upload.error().message, "invalid_request_error")
                 : ApiErrorFor(upload.error());
    }
    // A permanent limit (413 naming it), checked here so that kResourceExhausted from Submit
    // is only the queue, a condition that passes (429 with Retry-After).
    const size_t max_files = tasks_.options().max_task_files;
    if (upload->files.size() > max_files) {
      return ApiError(413,
                      fmt::format("{} files in one task; the limit is {} (max_task_files, "
                                  "--max-task-files)",
                                  upload->files.size(), max_files),
                      "invalid_request_error", "max_task_files");
    }
    auto task = tasks_.Submit(std::move(upload->files), upload->options);
    if (!task) {
      if (task.error().code == ErrorCode::kResourceExhausted) {
        if (options_.metrics) options_.metrics->ObserveQueueFull();
        return ApiError(429, task.error().message, "rate_limit_error", "rate_limit_exceeded");
      }
      return ApiErrorFor(task.error());
    }
    HttpResponse r = JsonResponse(202, TaskJson(*task, kPrefix));
    r.headers["Location"] = fmt::format("{}/{}", kPrefix, task->id);
    return r;
  }

  HttpResponse Get(const HttpRequest& request) {
    const std::string id = request.Param("id");
    std::optional<jobs::TaskInfo> task = tasks_.Get(id);
    if (!task) return UnknownTask(id);
    return JsonResponse(200, TaskJson(*task, kPrefix));
  }

  HttpResponse Events(const HttpRequest& request) {
    const std::string id = request.Param("id");
    if (!tasks_.Get(id)) return UnknownTask(id);
    jobs::TaskManager* tasks = &tasks_;
    return HttpResponse::EventStream([tasks, id](std::shared_ptr<SseWriter> writer) {
      const uint64_t token = tasks->Subscribe(id, [writer](const jobs::TaskInfo& info) {
        const bool final = jobs::IsFinal(info.status);
        const std::string data = DumpJson(TaskJson(info, kPrefix));
        const bool sent = writer->Send(final ? "done" : "progress", data);
        if (final) writer->Close();
        return sent && !final;
      });
      if (token == 0) {  // deleted between the check and the subscription
        writer->Send("error", ApiErrorBody("task not found", "not_found_error"));
        writer->Close();
      }
    });
  }

  HttpResponse Result(const HttpRequest& request) {
    const std::string id = request.Param("id");
    auto outputs = OutputsOrAnswer(id);
    if (std::holds_alternative<HttpResponse>(outputs)) return std::get<HttpResponse>(outputs);
    return JsonResponse(200, ResultJson(id, std::get<std::vector<jobs::DocumentOutputs>>(outputs)));
  }

  HttpResponse Zip(const HttpRequest& request) {
    const std::string id = request.Param("id");
    auto outputs = OutputsOrAnswer(id);
    if (std::holds_alternative<HttpResponse>(outputs)) return std::get<HttpResponse>(outputs);
    auto zip = OutputsZip(std::get<std::vector<jobs::DocumentOutputs>>(outputs), AllOutputs());
    if (!zip) return ApiErrorFor(zip.error());
    HttpResponse r;
    r.status = 200;
    r.body = std::move(*zip);
    r.headers["Content-Type"] = "application/zip";
    r.headers["Content-Disposition"] = "attachment; filename=\"results.zip\"";
    return r;
  }

  HttpResponse Image(const HttpRequest& request) {
    const std::string id = request.Param("id");
    const std::string name = request.Param("name");
    const std::optional<size_t> doc = Index(request.Param("doc"));
    if (!doc) return ApiError(404, "the document is a 0-based number", "not_found_error");
    // Output images are named <sha256>.<ext>: anything else (a path, a hidden file) is not one.
    if (name.empty() || name[0] == '.' || name.find('/') != std::string::npos ||
        name.find('\\') != std::string::npos) {
      return ApiError(404, fmt::format("no image '{}'", name), "not_found_error");
    }
    if (!tasks_.Get(id)) return UnknownTask(id);
    auto bytes = tasks_.OutputImage(id, *doc, name);
    if (!bytes) return ApiErrorFor(bytes.error());
    return ImageResponse(std::move(*bytes), OutputImageMime(name));
  }

  HttpResponse Page(const HttpRequest& request) {
    const std::string id = request.Param("id");
    const std::optional<size_t> doc = Index(request.Param("doc"));
    const std::optional<size_t> page = Index(request.Param("page"));
    if (!doc || !page || *page > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return ApiError(404, "document and page are 0-based numbers", "not_found_error");
    }
    auto input = tasks_.InputPath(id, *doc);
    if (!input) return ApiErrorFor(input.error());
    // Task ids are never reused and a task's inputs never change: "<id>/<doc>" names the bytes.
    auto jpeg = previews_.Get(fmt::format("{}/{}", id, *doc), *input, static_cast<int>(*page),
                              options_.render);
    if (!jpeg) return ApiErrorFor(jpeg.error());  // a full render cap: 503 with Retry-After
    return ImageResponse(std::string(**jpeg));
  }

  HttpResponse Delete(const HttpRequest& request) {
    const std::string id = request.Param("id");
    std::optional<jobs::TaskInfo> last = tasks_.Delete(id);
    if (!last) return UnknownTask(id);
    return JsonResponse(200, TaskJson(*last, kPrefix));
  }

 private:
  // The outputs of a completed task, or the answer for one that has none (yet).
  std::variant<HttpResponse, std::vector<jobs::DocumentOutputs>> OutputsOrAnswer(
      const std::string& id) {
    std::optional<jobs::TaskInfo> task = tasks_.Get(id);
    if (!task) return UnknownTask(id);
    switch (task->status) {
      case jobs::TaskStatus::kPending:
      case jobs::TaskStatus::kProcessing:
        return JsonResponse(202, TaskJson(*task, kPrefix));
      case jobs::TaskStatus::kFailed:
        return ApiError(409, fmt::format("task failed: {}", task->error.value_or("unknown")),
                        "task_failed");
      case jobs::TaskStatus::kCancelled:
        return ApiError(409, "task was cancelled", "task_cancelled");
      case jobs::TaskStatus::kCompleted:
        break;
    }
    auto outputs = tasks_.Outputs(id);
    if (!outputs) return ApiErrorFor(outputs.error());
    return std::move(*outputs);
  }

  jobs::TaskManager& tasks_;
  const DocumentApiOptions options_;
  PagePreviews previews_;
};

}  // namespace

void AddDocumentRoutes(HttpServer& server, jobs::TaskManager& tasks,
                       const DocumentApiOptions& options) {
  auto api = std::make_shared<DocumentApi>(tasks, options);
  server.Route("POST", "/v1/document/parse",
               [api](const HttpRequest& r) { return api->Submit(r); });
  server.Route("GET", "/v1/tasks/{id}", [api](const HttpRequest& r) { return api->Get(r); });
  server.Route("GET", "/v1/tasks/{id}/events",
               [api](const HttpRequest& r) { return api->Events(r); });
  server.Route("GET", "/v1/tasks/{id}/result",
               [api](const HttpRequest& r) { return api->Result(r); });
  server.Route("GET", "/v1/tasks/{id}/zip", [api](const HttpRequest& r) { return api->Zip(r); });
  server.Route("GET", "/v1/tasks/{id}/files/{doc}/images/{name}",
               [api](const HttpRequest& r) { return api->Image(r); });
  server.Route("GET", "/v1/tasks/{id}/pages/{doc}/{page}",
               [api](const HttpRequest& r) { return api->Page(r); });
  server.Route("DELETE", "/v1/tasks/{id}", [api](const HttpRequest& r) { return api->Delete(r); });
}

}  // namespace mineru::service
