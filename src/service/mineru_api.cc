// SPDX-License-Identifier: Apache-2.0
#include "service/mineru_api.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include "base/json.h"
#include "base/mapped_file.h"
#include "service/api_error.h"
#include "service/task_json.h"
#include "service/upload_form.h"

namespace mineru::service {
namespace {

// The default backend of each release, reported when a request names none.
constexpr std::string_view kDefaultBackend = "vlm-auto-engine";   // MinerU 2.7
constexpr std::string_view kDefaultBackend3_4 = "hybrid-engine";  // MinerU 3.4
// The /health protocol of MinerU 3.4.4.
constexpr int kProtocolVersion = 2;
// MinerU's task cleanup interval, reported by /health (ours runs more often; see TaskManager).
constexpr int kCleanupIntervalSeconds = 300;
// How often a waiting /file_parse looks for its client having gone.
constexpr std::chrono::milliseconds kDisconnectPoll{100};

std::string Dump(const Json& json) { return DumpJson(json); }

// MinerU 3.x answers errors {"detail": ...}, 2.7 {"error": ...}: both keys, one message (without
// server paths, service/api_error.h).
HttpResponse MineruError(int status, std::string_view text) {
  const std::string message = WithoutServerPaths(text);
  HttpResponse r = HttpResponse::Json(status, Dump(Json{{"detail", message}, {"error", message}}));
  if (status == 503) r.headers["Retry-After"] = std::to_string(kRetryAfter.count());
  return r;
}

// The task's status fields with a message (MinerU 3.4's 202 and 409 answers); `error` fills in
// the task's error when it has none.
HttpResponse TaskAnswer(int status, const jobs::TaskInfo& task, std::string_view backend,
                        std::string_view message, std::string_view error = {}) {
  Json json = MineruTaskJson(task, backend);
  json["message"] = message;
  if (!error.empty() && !task.error) json["error"] = error;
  return HttpResponse::Json(status, Dump(json));
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
                   {"zip", a.returns.zip},
                   {"original_file", a.returns.original_file}});
}

// The annotation back; anything missing or of the wrong type (it may come from another node
// through Redis) keeps its default.
Annotation Decode(const std::string& text) {
  Annotation a;
  const Json json = ParseJson(text, "annotation").value_or(Json());
  if (!json.is_object()) return a;
  const auto flag = [&](const char* key, bool fallback) {
    auto it = json.find(key);
    return it != json.end() && it->is_boolean() ? it->get<bool>() : fallback;
  };
  if (auto it = json.find("backend"); it != json.end() && it->is_string()) {
    a.backend = it->get<std::string>();
  }
  a.returns.md = flag("md", true);
  a.returns.middle_json = flag("middle_json", false);
  a.returns.model_output = flag("model_output", false);
  a.returns.content_list = flag("content_list", false);
  a.returns.images = flag("images", false);
  a.returns.zip = flag("zip", false);
  a.returns.original_file = flag("original_file", false);
  return a;
}

// "scan.png" -> ".png"; "" without one.
std::string Extension(const std::string& file_name) {
  const size_t dot = file_name.rfind('.');
  return dot == std::string::npos || dot == 0 ? std::string() : file_name.substr(dot);
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
    HttpResponse r;
    if (final->status == jobs::TaskStatus::kFailed && options_.version == MineruApiVersion::k2_7) {
      r = MineruError(500, final->error.value_or("Failed to process file"));
    } else {
      r = ResultAnswer(*final, annotation, /*file_parse=*/true);
    }
    r.headers["X-MinerU-Task-Id"] = task.id;
    r.headers["X-MinerU-Task-Status"] = std::string(jobs::TaskStatusName(final->status));
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
    // MinerU's max_concurrent_requests bounds the tasks processed at once, its
    // processing_window_size the pages of a document in flight: ours are concurrent_tasks and
    // pages_in_flight. Tasks are queued up to max_queued_tasks (MinerU queues without bound).
    return HttpResponse::Json(
        200, Dump(Json{{"status", "healthy"},
                       {"version", ServiceVersion()},
                       {"protocol_version", kProtocolVersion},
                       {"queued_tasks", c.pending},
                       {"processing_tasks", c.processing},
                       {"completed_tasks", c.completed},
                       {"failed_tasks", c.failed},
                       {"max_concurrent_requests", o.concurrent_tasks},
                       {"processing_window_size", o.document.pages_in_flight},
                       {"task_retention_seconds", o.retention.count()},
                       {"task_cleanup_interval_seconds", kCleanupIntervalSeconds}}));
  }

 private:
  std::variant<HttpResponse, jobs::TaskInfo> SubmitTask(const HttpRequest& request,
                                                        Annotation* annotation) {
    auto upload = ReadUpload(request, options_.multipart);
    if (!upload) return MineruError(400, upload.error().message);
    if (options_.public_bind && !options_.allow_public_http_client &&
        (IsMineruHttpClientBackend(upload->backend) || upload->mineru.server_url)) {
      return MineruError(400,
                         "this server listens on every interface, so *-http-client backends and "
                         "server_url are refused; bind it to 127.0.0.1 or start it with "
                         "--allow-public-http-client");
    }
    annotation->backend = !upload->backend.empty()                     ? upload->backend
                          : options_.version == MineruApiVersion::k3_4 ? kDefaultBackend3_4
                                                                       : kDefaultBackend;
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

  // The result body for a task: its results (with the task's status fields for /file_parse),
  // or why there are none.
  HttpResponse ResultAnswer(const jobs::TaskInfo& task, const Annotation& annotation,
                            bool file_parse) {
    switch (task.status) {
      case jobs::TaskStatus::kPending:
      case jobs::TaskStatus::kProcessing:
        return TaskAnswer(202, task, annotation.backend, "Task result is not ready yet");
      case jobs::TaskStatus::kFailed:
        return TaskAnswer(409, task, annotation.backend, "Task execution failed",
                          "Failed to process file");
      case jobs::TaskStatus::kCancelled:
        return TaskAnswer(409, task, annotation.backend, "Task was cancelled",
                          "Task was cancelled");
      case jobs::TaskStatus::kCompleted:
        break;
    }
    auto outputs = tasks_.Outputs(task.id);
    if (!outputs) return MineruError(500, outputs.error().message);
    if (annotation.returns.zip) {
      auto zip = OutputsZip(*outputs, annotation.returns, Originals(task, annotation.returns));
      if (!zip) return MineruError(500, zip.error().message);
      HttpResponse r;
      r.body = std::move(*zip);
      r.headers["Content-Type"] = "application/zip";
      r.headers["Content-Disposition"] = "attachment; filename=\"" + task.id + ".zip\"";
      return r;
    }
    Json body = MineruResultJson(*outputs, annotation.returns, annotation.backend);
    if (file_parse) {
      // MinerU 3.4: the task's status fields, then backend, version and results.
      const Json status = MineruTaskJson(task, annotation.backend);
      for (auto it = status.begin(); it != status.end(); ++it) {
        if (!body.contains(it.key())) body[it.key()] = it.value();
      }
    }
    return HttpResponse::Json(200, Dump(body));
  }

  // return_original_file: each uploaded file as <name>/<name>_origin<extension>. Only the node
  // that accepted a task keeps its inputs; elsewhere they are left out.
  std::vector<ZipEntry> Originals(const jobs::TaskInfo& task, const ReturnOptions& returns) {
    std::vector<ZipEntry> entries;
    if (!returns.original_file) return entries;
    for (size_t i = 0; i < task.documents.size() && i < task.file_names.size(); ++i) {
      auto path = tasks_.InputPath(task.id, i);
      if (!path) continue;
      // Our own copy of an upload the server accepted: its size was bounded then.
      auto bytes = ReadFileToString(*path, std::numeric_limits<size_t>::max());
      if (!bytes) continue;
      const std::string& name = task.documents[i];
      entries.push_back(
          {name + "/" + name + "_origin" + Extension(task.file_names[i]), std::move(*bytes)});
    }
    return entries;
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
