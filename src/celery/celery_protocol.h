// SPDX-License-Identifier: Apache-2.0
// Celery message protocol v2 (as Celery 5.2 / kombu 5.2 send it over AMQP) and Celery's result
// backend record: decoding task messages for our worker, encoding them for our publisher, and
// writing results a Python AsyncResult reads.
//
// Every decode error names what is wrong; the worker treats a decode error as a poison message
// (FAILURE stored where an id is known, message dead-lettered), never as a crash.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace mineru::jobs {

using CeleryTime = std::chrono::system_clock::time_point;

// Largest message body accepted: RabbitMQ's default max_message_size (128 MiB); a document travels
// base64-encoded inside the body, so this also bounds the document size on this path.
inline constexpr size_t kCeleryMaxBodyBytes = size_t{128} << 20;
// Nesting limit for the body JSON ([args, kwargs, embed] plus the caller's options).
inline constexpr int kCeleryMaxJsonDepth = 32;
// Longest id, task name, group or timestamp header accepted.
inline constexpr size_t kCeleryMaxFieldBytes = 1024;
// Celery truncates argsrepr/kwargsrepr (argsrepr_maxsize, kwargsrepr_maxsize) to this length.
inline constexpr size_t kCeleryReprMaxBytes = 1024;

inline constexpr std::string_view kCeleryContentType = "application/json";

// --- What the publisher (celery/remote_runner.h) and the worker (celery/celery_worker.h) agree on

// The task `mineru-cpp worker` runs and `serve --queue` publishes (MinerU's name for it).
inline constexpr std::string_view kCeleryTaskName = "run_mineru_inference";
// Celery's default queue, which is also its exchange and routing key.
inline constexpr std::string_view kCeleryQueue = "celery";
// Where the worker copies messages it will not run (our own queue, not Celery's).
inline constexpr std::string_view kCeleryDeadLetterQueue = "celery.mineru.dead";
// SETEX time of stored results and delivery counters: Celery's result_expires (1 day).
inline constexpr std::chrono::seconds kCeleryResultTtl{24 * 3600};
// The Redis key counting deliveries of Celery task `id` (across workers); the publisher deletes
// it with the result when it cancels a task.
inline std::string CeleryDeliveriesKey(std::string_view id) {
  return "mineru:celery:deliveries:" + std::string(id);
}

struct CeleryLimits {
  size_t max_body_bytes = kCeleryMaxBodyBytes;
  int max_json_depth = kCeleryMaxJsonDepth;
  size_t max_field_bytes = kCeleryMaxFieldBytes;
  // Chains, callbacks, errbacks and chords are not run by our worker; refusing them keeps a
  // workflow from silently stopping half-way. When false they decode with
  // has_callbacks_or_chain set and the embed kept.
  bool refuse_workflows = true;
};

// What an AMQP delivery carries. headers is the AMQP header table converted to JSON.
struct CeleryEnvelope {
  std::string content_type;
  std::string content_encoding;
  std::string correlation_id;
  std::string reply_to;
  std::optional<int> priority;
  int delivery_mode = 2;  // persistent, Celery's task_default_delivery_mode
  Json headers = Json::object();
  std::string body;
};

struct CeleryTaskMessage {
  std::string id, task, root_id, parent_id, group;
  std::optional<std::string> eta, expires;  // as sent (ISO-8601)
  std::optional<CeleryTime> eta_time, expires_time;
  int retries = 0;
  std::optional<int> priority;
  Json args = Json::array();
  Json kwargs = Json::object();
  Json embed = Json::object();  // {"callbacks", "errbacks", "chain", "chord"}
  bool has_callbacks_or_chain = false;
  bool ignore_result = false;
  std::optional<double> time_limit, soft_time_limit;  // seconds; hard limit first on the wire
  std::string origin;
  std::string reply_to;
};

Result<CeleryTaskMessage> DecodeCeleryMessage(const CeleryEnvelope& in,
                                              const CeleryLimits& limits = {});

// ISO-8601 as Python writes and reads it: "YYYY-MM-DD[T ]HH:MM:SS[.f{1,9}][Z|±HH:MM|±HHMM]"
// (also date-only and minute precision). A value without an offset is UTC, as Celery with its
// default timezone treats it. Precision beyond microseconds is truncated. Times outside what
// CeleryTime holds (years 1677-2262) saturate at its first or last microsecond.
Result<CeleryTime> ParseCeleryTime(std::string_view text);
// Aware UTC, like datetime.isoformat(): "2030-01-02T03:04:05.678901+00:00"; the fraction is
// omitted when the microseconds are zero, exactly as Python does.
std::string FormatCeleryTime(CeleryTime time);
// Naive UTC as Celery 5.2 writes date_done: "2024-05-06T07:08:09.123456".
std::string FormatCeleryDateDone(CeleryTime time);

// Celery revokes a task whose expiry lies strictly before now.
bool ExpiresPassed(const CeleryTaskMessage& message, CeleryTime now);
// True while an eta is still in the future (the message must be held, not run).
bool EtaPending(const CeleryTaskMessage& message, CeleryTime now);

struct CeleryPublishOptions {
  std::optional<std::string> eta, expires;  // ISO-8601, e.g. from FormatCeleryTime
  std::optional<int> priority;              // absent: 0, as kombu sends
  int retries = 0;
  std::string root_id, parent_id, group;  // empty: root_id = id, the others null
  std::string origin;                     // empty: "gen<pid>@<host>" like Celery
  std::string reply_to;
  bool ignore_result = false;
};

// The message Celery 5.2.6 publishes for send_task(task, args, kwargs, ...). args must be an
// array and kwargs an object (a caller contract, checked). The body is written as kombu's json
// serializer writes it.
CeleryEnvelope EncodeCeleryMessage(std::string_view task, std::string_view id, const Json& args,
                                   const Json& kwargs, const CeleryPublishOptions& options = {});

// --- Result backend -----------------------------------------------------------------------------

inline constexpr std::string_view kCeleryMetaKeyPrefix = "celery-task-meta-";
std::string CeleryMetaKey(std::string_view task_id);

struct CeleryResultExtras {
  std::optional<std::string> group_id, parent_id;  // written only when set, as Celery does
  Json children = Json::array();  // a worker always has a request, so Celery writes []
};

// Celery's stored meta, byte for byte as Celery 5.2's json backend writes it:
// {"status", "result", "traceback", "children", "date_done"[, "group_id"][, "parent_id"],
//  "task_id"}. date_done is null for states that are not ready (PENDING, RECEIVED, STARTED,
// RETRY), as in Celery. Nested objects in result are written in key order (see PyJsonDumps).
std::string CeleryResultMeta(std::string_view status, const Json& result,
                             const std::optional<std::string>& traceback, std::string_view task_id,
                             CeleryTime date_done, const CeleryResultExtras& extras = {});

// Celery's serialized exception: {"exc_type", "exc_message": [message], "exc_module"}.
Json CeleryExceptionResult(std::string_view exc_type, std::string_view message,
                           std::string_view exc_module = "builtins");
// What Celery 5.2.6 stores when a worker revokes a task (reason "expired" for an expired one):
// TaskRevokedError from celery.exceptions, status REVOKED, traceback null.
Json CeleryRevokedResult(std::string_view reason = "expired");

// The "status" of a stored meta ("SUCCESS", "REVOKED", "PROGRESS", ...); empty for text that is
// not a meta.
std::string StoredCeleryStatus(std::string_view existing_json);

// True when an existing stored meta is SUCCESS; Celery never overwrites it (duplicate execution
// after redelivery must not clobber a good result). Unparseable text is not a success.
inline bool IsFinalSuccess(std::string_view existing_json) {
  return StoredCeleryStatus(existing_json) == "SUCCESS";
}

}  // namespace mineru::jobs
