// SPDX-License-Identifier: Apache-2.0
#include "service/task_json.h"

#include <fmt/format.h>

#include <ctime>
#include <span>

#include "image/data_url.h"
#include "service/api_error.h"
#include "service/zip_writer.h"

namespace mineru::service {
namespace {

Json OptionalTime(const std::optional<jobs::WallClock::time_point>& t) {
  return t ? Json(Iso8601(*t)) : Json(nullptr);
}

// A task's error as clients see it: without the server paths (input files in the work
// directory) that the pipeline's messages name.
Json OptionalError(const std::optional<std::string>& s) {
  return s ? Json(WithoutServerPaths(*s)) : Json(nullptr);
}

// A JSON output file as an object (null when, against expectation, it is not JSON).
Json Parsed(const std::string& text) {
  return ParseJson(text, "output", JsonFileLimits()).value_or(Json(nullptr));
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

}  // namespace

std::string_view ServiceVersion() { return "mineru-cpp 0.1.0"; }

std::string Iso8601(jobs::WallClock::time_point t) {
  const std::time_t seconds = jobs::WallClock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

Json TaskJson(const jobs::TaskInfo& task, std::string_view prefix) {
  const std::string url = fmt::format("{}/{}", prefix, task.id);
  const jobs::TaskProgress& p = task.progress;
  return Json{{"task_id", task.id},
              {"status", jobs::TaskStatusName(task.status)},
              {"file_names", task.file_names},
              {"documents", task.documents},
              {"created_at", Iso8601(task.created_at)},
              {"started_at", OptionalTime(task.started_at)},
              {"completed_at", OptionalTime(task.completed_at)},
              {"error", OptionalError(task.error)},
              {"queued_ahead", task.queued_ahead},
              {"cache_hits", task.cache_hits},
              {"near_duplicates", task.near_duplicates},
              {"progress",
               {{"documents_done", p.documents_done},
                {"documents_total", p.documents_total},
                {"pages_done", p.pages_done},
                {"pages_total", p.pages_total},
                {"blocks_done", p.blocks_done},
                {"generated_tokens", p.generated_tokens}}},
              {"status_url", url},
              {"events_url", url + "/events"},
              {"result_url", url + "/result"}};
}

Json MineruTaskJson(const jobs::TaskInfo& task, std::string_view backend) {
  Json json{{"task_id", task.id},
            {"status", jobs::TaskStatusName(task.status)},
            {"backend", backend},
            {"file_names", task.file_names},
            {"created_at", Iso8601(task.created_at)},
            {"started_at", OptionalTime(task.started_at)},
            {"completed_at", OptionalTime(task.completed_at)},
            {"error", OptionalError(task.error)},
            {"status_url", "/tasks/" + task.id},
            {"result_url", "/tasks/" + task.id + "/result"}};
  if (task.status == jobs::TaskStatus::kPending) json["queued_ahead"] = task.queued_ahead;
  switch (task.status) {
    case jobs::TaskStatus::kPending:
      json["message"] = "Task submitted successfully";
      break;
    case jobs::TaskStatus::kProcessing:
      json["message"] = "Task is being processed";
      break;
    case jobs::TaskStatus::kCompleted:
      json["message"] = "Task completed";
      break;
    case jobs::TaskStatus::kFailed:
      json["message"] = "Task failed";
      break;
    case jobs::TaskStatus::kCancelled:
      json["message"] = "Task cancelled";
      break;
  }
  return json;
}

Json ResultJson(const std::string& task_id, const std::vector<jobs::DocumentOutputs>& docs) {
  Json documents = Json::array();
  for (const jobs::DocumentOutputs& d : docs) {
    Json images = Json::array();
    for (const auto& [name, bytes] : d.images) images.push_back(name);
    documents.push_back({{"name", d.name},
                         {"markdown", d.markdown},
                         {"middle_json", Parsed(d.middle_json)},
                         {"content_list", Parsed(d.content_list)},
                         {"model_json", Parsed(d.model_json)},
                         {"report", Parsed(d.report)},
                         {"images", std::move(images)}});
    if (!d.content_list_v2.empty()) documents.back()["content_list_v2"] = Parsed(d.content_list_v2);
  }
  return Json{{"task_id", task_id}, {"documents", std::move(documents)}};
}

Json MineruResultJson(const std::vector<jobs::DocumentOutputs>& docs, const ReturnOptions& returns,
                      std::string_view backend) {
  Json results = Json::object();
  for (const jobs::DocumentOutputs& d : docs) {
    Json r = Json::object();
    if (returns.md) r["md_content"] = d.markdown;
    if (returns.middle_json) r["middle_json"] = d.middle_json;
    if (returns.model_output) r["model_output"] = d.model_json;
    if (returns.content_list) r["content_list"] = d.content_list;
    if (returns.images) {
      Json images = Json::object();
      for (const auto& [name, bytes] : d.images) {
        images[name] = image::MakeDataUrl(OutputImageMime(name), Bytes(bytes));
      }
      r["images"] = std::move(images);
    }
    results[d.name] = std::move(r);
  }
  return Json{{"backend", backend}, {"version", ServiceVersion()}, {"results", std::move(results)}};
}

std::string_view OutputImageMime(std::string_view name) {
  if (name.ends_with(".jpg") || name.ends_with(".jpeg")) return "image/jpeg";
  if (name.ends_with(".png")) return "image/png";
  if (name.ends_with(".gif")) return "image/gif";
  if (name.ends_with(".bmp")) return "image/bmp";
  if (name.ends_with(".webp")) return "image/webp";
  return "application/octet-stream";
}

ReturnOptions AllOutputs() {
  ReturnOptions all;
  all.md = all.middle_json = all.model_output = all.content_list = all.images = true;
  all.content_list_v2 = all.layout_pdf = true;
  return all;
}

Result<std::string> OutputsZip(const std::vector<jobs::DocumentOutputs>& docs,
                               const ReturnOptions& returns, std::span<const ZipEntry> extra) {
  ZipWriter zip;
  for (const jobs::DocumentOutputs& d : docs) {
    const std::string base = d.name + "/" + d.name;
    if (returns.md) MINERU_RETURN_IF_ERROR(zip.Add(base + ".md", d.markdown));
    if (returns.middle_json) MINERU_RETURN_IF_ERROR(zip.Add(base + "_middle.json", d.middle_json));
    if (returns.model_output) MINERU_RETURN_IF_ERROR(zip.Add(base + "_model.json", d.model_json));
    if (returns.content_list) {
      MINERU_RETURN_IF_ERROR(zip.Add(base + "_content_list.json", d.content_list));
    }
    if (returns.content_list_v2 && !d.content_list_v2.empty()) {
      MINERU_RETURN_IF_ERROR(zip.Add(base + "_content_list_v2.json", d.content_list_v2));
    }
    if (returns.layout_pdf && !d.layout_pdf.empty()) {
      MINERU_RETURN_IF_ERROR(zip.Add(base + "_layout.pdf", d.layout_pdf));
    }
    if (returns.images) {
      for (const auto& [name, bytes] : d.images) {
        MINERU_RETURN_IF_ERROR(zip.Add(d.name + "/images/" + name, bytes));
      }
    }
  }
  for (const ZipEntry& entry : extra) MINERU_RETURN_IF_ERROR(zip.Add(entry.path, entry.bytes));
  return zip.Finish();
}

}  // namespace mineru::service
