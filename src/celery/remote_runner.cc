// SPDX-License-Identifier: Apache-2.0
#include "celery/remote_runner.h"

#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <span>
#include <thread>

#include "base/mapped_file.h"
#include "cache/document_codec.h"
#include "celery/celery_amqp.h"
#include "celery/celery_control.h"
#include "celery/celery_protocol.h"
#include "image/data_url.h"
#include "tasks/task.h"

namespace mineru::jobs {
namespace fs = std::filesystem;

namespace {

// Largest document sent to a worker (the message body is its base64 text): RabbitMQ's own
// default message size limit is 128 MiB.
constexpr uint64_t kMaxRemoteDocumentBytes = 64ull << 20;

}  // namespace

Topology RemoteRunnerTopology(const RemoteRunnerOptions& options) {
  return CeleryTaskTopology(options.queue);
}

Result<pipeline::DocumentResult> RemoteRunner::Run(const std::string& input_path,
                                                   const std::string& output_root,
                                                   const pipeline::DocumentOptions& options,
                                                   const pipeline::ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  MINERU_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(input_path, kMaxRemoteDocumentBytes));
  const std::string name = fs::path(input_path).stem().string();
  Json kwargs{{"formula_enable", options.extract.formula},
              {"table_enable", options.extract.table},
              {"image_analysis", options.extract.image_analysis},
              {"file_name", fs::path(input_path).filename().string()},
              {"return_outputs", true}};
  if (options.start_page) kwargs["start_page_id"] = *options.start_page;
  if (options.end_page) kwargs["end_page_id"] = *options.end_page;
  const std::string id = NewUuid4();  // Celery task ids are UUIDs too
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const CeleryEnvelope envelope = EncodeCeleryMessage(
      options_.task_name, id, Json::array({image::Base64Encode(std::span(data, bytes.size()))}),
      kwargs);
  std::string().swap(bytes);
  MINERU_RETURN_IF_ERROR(amqp_.Publish(options_.queue, options_.queue, CeleryToAmqp(envelope)));

  const std::string key = CeleryMetaKey(id);
  int last_pages_done = -1;
  while (true) {
    if (options.cancel && options.cancel->load()) {
      // Tell the workers (AsyncResult.revoke(terminate=True)); the task is cancelled here
      // whether or not the broker took the revoke. While no worker has taken the message (no
      // delivery counted) REVOKED is stored as well, atomically with that check, so a worker
      // that takes it later (none was running, or it started after the broadcast) skips it; a
      // worker that took it hears the broadcast. Best effort: Redis down leaves the broadcast.
      const std::string meta = CeleryResultMeta("REVOKED", CeleryRevokedResult("revoked"),
                                                std::nullopt, id, std::chrono::system_clock::now());
      (void)results_.Command({"EVAL",
                              "if redis.call('EXISTS', KEYS[2]) == 0 then "
                              "return redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') end "
                              "return false",
                              "2", key, CeleryDeliveriesKey(id), meta,
                              std::to_string(options_.result_ttl.count())});
      if (Status revoked = amqp_.Publish(kCeleryControlExchange, "",
                                         EncodeCeleryRevoke({id}, /*terminate=*/true));
          !revoked) {
        return Fail(ErrorCode::kCancelled,
                    "{}: parse cancelled (the revoke of task {} was not "
                    "published: {})",
                    input_path, id, revoked.error().message);
      }
      return Fail(ErrorCode::kCancelled, "{}: parse cancelled", input_path);
    }
    auto stored = results_.Command({"GET", key});
    // Redis unreachable: keep waiting (the worker keeps the message unacked until it can store).
    if (stored && !stored->is_nil()) {
      Json meta = ParseJson(stored->str, "stored celery meta", JsonFileLimits()).value_or(Json());
      const std::string status = meta.is_object() ? meta.value("status", "") : "";
      const Json& result = meta.is_object() ? meta["result"] : meta;
      if (status == "PROGRESS" && result.is_object() && progress) {
        const int done = result.value("pages_done", 0);
        if (done != last_pages_done) {
          last_pages_done = done;
          pipeline::DocumentProgress p;
          p.pages_done = done;
          p.pages_total = result.value("pages_total", 0);
          p.blocks_done = result.value("blocks_done", int64_t{0});
          p.generated_tokens = result.value("generated_tokens", int64_t{0});
          p.last_page_seconds = result.value("last_page_seconds", 0.0);
          progress(p);
        }
      } else if (status == "SUCCESS") {
        auto it = result.is_object() ? result.find("outputs") : result.end();
        if (!result.is_object() || it == result.end() || !it->is_string()) {
          return Fail(ErrorCode::kCorrupt, "task {}: the worker's result has no outputs", id);
        }
        MINERU_ASSIGN_OR_RETURN(std::vector<uint8_t> encoded,
                                image::Base64Decode(it->get<std::string>()));
        MINERU_ASSIGN_OR_RETURN(
            DocumentOutputs outputs,
            ParseDocumentOutputs(
                std::string_view(reinterpret_cast<const char*>(encoded.data()), encoded.size())));
        outputs.name = name;
        pipeline::DocumentResult r;
        r.output_dir = (fs::path(output_root) / name / "vlm").string();
        MINERU_RETURN_IF_ERROR(WriteDocumentOutputs(outputs, r.output_dir));
        Json report = ParseJson(outputs.report, "report", JsonFileLimits()).value_or(Json());
        if (report.is_object()) {
          r.pages = report.value("pages", 0);
          r.requests = report.value("requests", int64_t{0});
          r.cached_requests = report.value("cached_requests", int64_t{0});
          r.failed_blocks = report.value("failed_blocks", int64_t{0});
          for (const Json& f : report.value("failed_pages", Json::array())) {
            r.failed_pages.push_back({f.value("page_idx", 0), f.value("error", "")});
          }
          for (const Json& h : report.value("page_phash", Json::array())) {
            if (h.is_string())
              r.page_hashes.push_back(std::stoull(h.get<std::string>(), nullptr, 16));
          }
        }
        if (progress) {
          pipeline::DocumentProgress p;
          p.pages_done = p.pages_total = r.pages;
          progress(p);
        }
        r.total_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return r;
      } else if (status == "FAILURE" || status == "REVOKED") {
        std::string why = status;
        if (result.is_object() && result.contains("exc_message")) {
          const Json& m = result["exc_message"];
          why = m.is_array() && !m.empty() && m[0].is_string() ? m[0].get<std::string>() : m.dump();
        }
        return Fail(ErrorCode::kInternal, "{}", why);
      }
    }
    std::this_thread::sleep_for(options_.poll_interval);
  }
}

}  // namespace mineru::jobs
