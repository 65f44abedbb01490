// SPDX-License-Identifier: Apache-2.0
#include "service/mineru_api.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <variant>

#include "service/api_error.h"
#include "service/task_json.h"
#include "service/upload_form.h"

namespace mineru::service {
namespace {

// MinerU 2.7's default backend, reported when a request names none.
constexpr std::string_view kDefaultBackend = "vlm-auto-engine";
// MinerU's task cleanup interval, reported by /health (ours runs more often; see TaskManager).
constexpr int kCleanupIntervalSeconds = 300;
// How often a waiting /file_parse looks for its client having gone.
constexpr std::chrono::milliseconds kDisconnectPoll{100};

std::string Dump(const Json& json) { return DumpJson(json); }

HttpResponse MineruError(int status, std::string_view message) {
  HttpResponse r = HttpResponse::Json(status, Dump(Json{{"error", message}}));
  if (status == 503) r.headers["Retry-After"] = std::to_string(kRetryAfter.count());
  return r;
}

// What a task remembers for MinerU's answers (TaskInfo::annotation).
struct Annotation {
  std::string backend{kDefaultBackend};
  ReturnOptions returns;
};

std::string Encode(const Annotation& a) {
  return Dump(Json{{"backend", a.backend},
                   {"md", a.returns.md},
                   {"middle_json", a.returns.middle_json},
                   {"model_output", a.returns.model_output},
                   {"content_list", a.returns.content_list},
                   {"images", a.returns.images},
                   {"zip", a.returns.zip}});
}

Annotation Decode(const std::string& text) {
  Annotation a;
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return a;
  a.backend = json.value("backend", std::string(kDefaultBackend));
  a.returns.md = json.value("md", true);
  a.returns.middle_json = json.value("middle_json", false);
  a.returns.model_output = json.value("model_output", false);
  a.returns.content_list = json.value("content_list", false);
  a.returns.images = json.value("images", false);
  a.returns.zip = json.value("zip", false);
  return a;
}

class MineruApi {
 public:
  MineruApi(jobs::TaskManager& tasks, MineruApiOptions options)
      : tasks_(tasks), options_(std::move(options)) {}

  HttpResponse FileParse(const HttpRequest& request) {
    Annotation annotation;
    auto submitted = SubmitTask(request, &annotation);
    if (std::holds_alternative<HttpResponse>(submitted)) {
      return std::get<HttpResponse>(std::move(submitted));
    }
    const jobs::TaskInfo task = std::get<jobs::TaskInfo>(submitted);

    // Wait for the final state, or for the client to leave (then its task goes too).
    struct Waiter {
      std::mutex mutex;
      std::condition_variable done;
      std::optional<jobs::TaskInfo> final;
    };
    auto waiter = std::make_shared<Waiter>();
    tasks_.Subscribe(task.id, [waiter](const jobs::TaskInfo& info) {
      if (jobs::IsFinal(info.status)) {
        std::lock_guard lock(waiter->mutex);
        waiter->final = info;
        waiter->done.notify_all();
      }
      return true;
    });
    std::optional<jobs::TaskInfo> final;
    {
      std::unique_lock lock(waiter->mutex);
      while (!waiter->final) {
        if (request.disconnected->load()) break;
        waiter->done.wait_for(lock, kDisconnectPoll);
      }
      final = waiter->final;
    }
    if (!final) {
      tasks_.Delete(task.id);
      return MineruError(499, "client closed the request");
    }
    HttpResponse r = ResultAnswer(*final, annotation, /*file_parse=*/true);
    r.headers["X-MinerU-Task-Status-Url"] = "/tasks/" + task.id;
    r.headers["X-MinerU-Task-Result-Url"] = "/tasks/" + task.id + "/result";
    return r;
  }

  HttpResponse Submit(const HttpRequest& request) {
    Annotation annotation;
    auto submitted = SubmitTask(request, &annotation);
    if (std::holds_alternative<HttpResponse>(submitted)) {
      return std::get<HttpResponse>(std::move(submitted));
    }
    const jobs::TaskInfo& task = std::get<jobs::TaskInfo>(submitted);
    return HttpResponse::Json(202, Dump(MineruTaskJson(task, annotation.backend)));
  }

  HttpResponse Get(const HttpRequest& request) {
    std::optional<jobs::TaskInfo> task = tasks_.Get(request.Param("id"));
    if (!task) return MineruError(404, "Task not found");
    return HttpResponse::Json(200, Dump(MineruTaskJson(*task, Decode(task->annotation).backend)));
  }

  HttpResponse Result(const HttpRequest& request) {
    std::optional<jobs::TaskInfo> task = tasks_.Get(request.Param("id"));
    if (!task) return MineruError(404, "Task not found");
    return ResultAnswer(*task, Decode(task->annotation), /*file_parse=*/false);
  }

  HttpResponse Delete(const HttpRequest& request) {
    std::optional<jobs::TaskInfo> last = tasks_.Delete(request.Param("id"));
    if (!last) return MineruError(404, "Task not found");
    return HttpResponse::Json(200, Dump(MineruTaskJson(*last, Decode(last->annotation).backend)));
  }

  HttpResponse Health(const HttpRequest&) {
    const bool ready = !options_.ready || options_.ready();
    if (!ready) {
      HttpResponse r =
          HttpResponse::Json(503, Dump(Json{{"status", "unhealthy"},
                                            {"version", ServiceVersion()},
                                            {"error", "the server is shutting down"}}));
      r.headers["Retry-After"] = std::to_string(kRetryAfter.count());
      return r;
    }
    const jobs::TaskCounts c = tasks_.Counts();
    const jobs::TaskManagerOptions& o = tasks_.options();
    return HttpResponse::Json(
        200, Dump(Json{{"status", "healthy"},
                       {"version", ServiceVersion()},
                       {"protocol_version", 1},
                       {"queued_tasks", c.pending},
                       {"processing_tasks", c.processing},
                       {"completed_tasks", c.completed},
                       {"failed_tasks", c.failed},
                       {"max_concurrent_requests", o.max_queued_tasks},
                       {"processing_window_size", o.concurrent_tasks},
                       {"task_retention_seconds", o.retention.count()},
                       {"task_cleanup_interval_seconds", kCleanupIntervalSeconds}}));
  }

 private:
  std::variant<HttpResponse, jobs::TaskInfo> SubmitTask(const HttpRequest& request,
                                                        Annotation* annotation) {
    auto upload = ReadUpload(request, options_.multipart);
    if (!upload) return MineruError(400, upload.error().message);
    if (!upload->backend.empty()) annotation->backend = upload->backend;
    annotation->returns = upload->returns;
    auto task = tasks_.Submit(std::move(upload->files), upload->options, Encode(*annotation));
    if (task) return *task;
    switch (task.error().code) {
      case ErrorCode::kResourceExhausted:
        if (task.error().message.find("files in one task") != std::string::npos) {
          return MineruError(400, task.error().message);
        }
        if (options_.metrics) options_.metrics->ObserveQueueFull();
        {
          HttpResponse r = HttpResponse::Json(
              503, Dump(Json{{"detail", fmt::format("Server is at maximum capacity: {}. Please "
                                                    "try again later.",
                                                    tasks_.options().max_queued_tasks)}}));
          r.headers["Retry-After"] = std::to_string(kRetryAfter.count());
          return r;
        }
      case ErrorCode::kUnavailable:
        return MineruError(503, task.error().message);
      case ErrorCode::kInvalidArgument:
        return MineruError(400, task.error().message);
      default:
        return MineruError(500, task.error().message);
    }
  }

  // The /file_parse body for a task: its results, or why there are none.
  HttpResponse ResultAnswer(const jobs::TaskInfo& task, const Annotation& annotation,
                            bool file_parse) {
    switch (task.status) {
      case jobs::TaskStatus::kPending:
      case jobs::TaskStatus::kProcessing:
        return HttpResponse::Json(202, Dump(MineruTaskJson(task, annotation.backend)));
      case jobs::TaskStatus::kFailed:
        return MineruError(file_parse ? 500 : 409, task.error.value_or("Failed to process file"));
      case jobs::TaskStatus::kCancelled:
        return MineruError(409, "Task was cancelled");
      case jobs::TaskStatus::kCompleted:
        break;
    }
    auto outputs = tasks_.Outputs(task.id);
    if (!outputs) return MineruError(500, outputs.error().message);
    if (annotation.returns.zip) {
      auto zip = OutputsZip(*outputs, annotation.returns);
      if (!zip) return MineruError(500, zip.error().message);
      HttpResponse r;
      r.body = std::move(*zip);
      r.headers["Content-Type"] = "application/zip";
      r.headers["Content-Disposition"] = "attachment; filename=\"results.zip\"";
      return r;
    }
    return HttpResponse::Json(
        200, Dump(MineruResultJson(*outputs, annotation.returns, annotation.backend)));
  }

  jobs::TaskManager& tasks_;
  const MineruApiOptions options_;
};

}  // namespace

void AddMineruRoutes(HttpServer& server, jobs::TaskManager& tasks,
                     const MineruApiOptions& options) {
  auto api = std::make_shared<MineruApi>(tasks, options);
  server.Route("POST", "/file_parse", [api](const HttpRequest& r) { return api->FileParse(r); });
  server.Route("POST", "/tasks", [api](const HttpRequest& r) { return api->Submit(r); });
  server.Route("GET", "/tasks/{id}", [api](const HttpRequest& r) { return api->Get(r); });
  server.Route("GET", "/tasks/{id}/result", [api](const HttpRequest& r) { return api->Result(r); });
  server.Route("DELETE", "/tasks/{id}", [api](const HttpRequest& r) { return api->Delete(r); });
  server.Route("GET", "/health", [api](const HttpRequest& r) { return api->Health(r); });
}

}  // namespace mineru::service
