// SPDX-License-Identifier: Apache-2.0
// A Celery-compatible worker: consumes Celery protocol v2 messages (celery/celery_protocol.h) for
// one task name from RabbitMQ (celery/amqp_client.h), parses the document through a TaskManager
// (so the result cache, single flight, block cache and deadlines apply), stores the result in
// Celery's Redis result format (SETEX + PUBLISH of celery-task-meta-<id>) and only then acks:
// a worker killed mid-job loses nothing, the broker redelivers the message.
//
// The task: `run_mineru_inference(document_base64, **options)`; options are MinerU's form
// fields: formula_enable, table_enable, start_page_id, end_page_id, return_middle_json,
// return_model_output, return_content_list (md_content is always returned), file_name, and
// return_outputs (every output file, for `serve --queue`). The result is {"md_content",
// "content_list"?, "middle_json"?, "model_output"?, "outputs"?, "pages", "cache_hit"}; while a
// document is parsed, a PROGRESS state {"pages_done", "pages_total", ...} after every page.
//
// Outcomes, per delivery (Celery 5.2's worker semantics: celery/app/trace.py,
// celery/worker/request.py):
//   decodable, not expired, first delivery ..... parsed; SUCCESS stored, then ack
//   the document cannot be parsed ............... FAILURE (RuntimeError or ValueError), ack
//   `expires` passed ............................ REVOKED stored, ack
//   a SUCCESS is already stored ................. ack, nothing rerun (a duplicate delivery)
//   undecodable, other task name, or delivered
//   more than max_deliveries times .............. FAILURE stored when the id is known, the
//                                                  message copied to the dead-letter queue
//                                                  with its headers and x-mineru-reason, ack
//   Redis refuses the result ..................... retried with backoff; never acked before
//                                                  the result is stored (after
//                                                  kStoreAttempts, nack with requeue)
//   its id was revoked (remote control) ......... REVOKED ('revoked') stored, never parsed, ack
//   revoked with terminate=true while parsed .... the parse is cancelled (TaskManager::Cancel),
//                                                  REVOKED ('terminated') stored, ack
// Revokes arrive on this worker's pidbox queue (celery/celery_control.h), as Celery's do: the
// worker remembers up to max_revoked_ids ids for revoke_expiry (Celery's REVOKES_MAX and
// REVOKE_EXPIRES), in memory only, so a worker started after a revoke does not know it. A revoke
// without terminate lets a running parse finish (Celery's semantics); revokes naming other
// workers in `destination` are ignored; no reply is sent to a client that asks for one.
// Celery's own queue is declared as Celery declares it (durable, no arguments), so Python
// clients and this worker can both declare it; the dead-letter queue is our own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "cache/redis_client.h"
#include "celery/amqp_client.h"
#include "celery/celery_control.h"
#include "celery/celery_protocol.h"

namespace mineru::jobs {

class TaskManager;  // tasks/task_manager.h

struct CeleryWorkerOptions {
  static constexpr int kDefaultMaxDeliveries = 3;
  static constexpr std::chrono::seconds kDefaultResultTtl = kCeleryResultTtl;

  std::string task_name{kCeleryTaskName};
  std::string queue{kCeleryQueue};
  std::string dead_letter_queue{kCeleryDeadLetterQueue};
  // Documents parsed at once: the consumer's prefetch.
  int slots = 1;
  // Deliveries of one task id after which it is dead-lettered (counted in Redis under
  // CeleryDeliveriesKey, so across workers and restarts).
  int max_deliveries = kDefaultMaxDeliveries;
  // SETEX time of stored results and delivery counters.
  std::chrono::seconds result_ttl = kDefaultResultTtl;

  static constexpr size_t kDefaultMaxRevokedIds = 50'000;             // Celery's REVOKES_MAX
  static constexpr std::chrono::seconds kDefaultRevokeExpiry{10800};  // REVOKE_EXPIRES, 3 h
  // The node name revokes may address (`destination`) and the pidbox queue's name
  // ("<hostname>.celery.pidbox"). Give each worker on one machine its own.
  std::string hostname = DefaultCeleryHostname();
  // Revoked ids remembered (the oldest forgotten first) and for how long.
  size_t max_revoked_ids = kDefaultMaxRevokedIds;
  std::chrono::seconds revoke_expiry = kDefaultRevokeExpiry;
};

// What the worker needs declared on its AMQP connection (pass to AmqpConnection::Start):
// CeleryTaskTopology (celery/celery_control.h) of options.queue and options.dead_letter_queue,
// plus this worker's pidbox queue (options.hostname) bound to the control exchange.
Topology CeleryWorkerTopology(const CeleryWorkerOptions& options);

struct CeleryWorkerStats {
  // revoked counts every REVOKED stored (expired, revoked, terminated); terminated the parses
  // a revoke stopped; control_rejected the pidbox messages that did not decode.
  int64_t received = 0, succeeded = 0, failed = 0, revoked = 0, duplicates = 0, dead_lettered = 0,
          redelivered = 0, terminated = 0, control_rejected = 0;
};

class CeleryWorker {
 public:
  // Starts consuming options.queue and the pidbox queue. `amqp` must be started with
  // CeleryWorkerTopology(options);
  // `tasks`, `amqp` and `results` must outlive the worker.
  static Result<std::unique_ptr<CeleryWorker>> Start(TaskManager& tasks, AmqpConnection& amqp,
                                                     RedisClient& results,
                                                     const CeleryWorkerOptions& options);
  // Stop(): running jobs are cancelled and left unacked (the broker redelivers them).
  ~CeleryWorker();
  CeleryWorker(const CeleryWorker&) = delete;
  CeleryWorker& operator=(const CeleryWorker&) = delete;

  // Stops taking deliveries, cancels running jobs (their messages stay unacked) and joins the
  // job threads. Idempotent.
  void Stop();
  CeleryWorkerStats Stats() const;

  class Impl;

 private:
  explicit CeleryWorker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::jobs
