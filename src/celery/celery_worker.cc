// SPDX-License-Identifier: Apache-2.0
#include "celery/celery_worker.h"

#include <fmt/format.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/blocking_queue.h"
#include "base/server_paths.h"
#include "cache/document_codec.h"
#include "celery/celery_amqp.h"
#include "celery/celery_protocol.h"
#include "image/data_url.h"
#include "tasks/task_manager.h"

namespace mineru::jobs {
namespace {

// Attempts to store one result before the delivery is handed back to the broker (nack with
// requeue), and the backoff between them (doubling).
constexpr int kStoreAttempts = 8;
constexpr std::chrono::milliseconds kStoreBackoff{200};
constexpr std::chrono::milliseconds kMaxStoreBackoff{5000};
// How often a job waiting for its task looks at its progress (Stop and revokes wake it at once).
constexpr std::chrono::milliseconds kStopPoll{100};
// Unacked pidbox messages at once: each is handled on the I/O thread in microseconds.
constexpr uint16_t kControlPrefetch = 16;
// Undecodable control messages written to stderr; later ones are only counted.
constexpr int64_t kLoggedControlErrors = 10;

// The task id of a message that may not decode: the `id` header, else the correlation id.
std::string IdOf(const Message& m) {
  if (const AmqpValue* id = FindField(m.headers, "id")) {
    if (const auto* s = std::get_if<std::string>(&id->value)) return *s;
  }
  return m.correlation_id;
}

bool BoolOption(const Json& kwargs, const char* name, bool fallback) {
  auto it = kwargs.find(name);
  return it != kwargs.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// Task options from the kwargs; kInvalidArgument naming a field of the wrong type.
Result<ParseOptions> OptionsFrom(const Json& kwargs) {
  ParseOptions o;
  for (const char* flag : {"formula_enable", "table_enable", "image_analysis"}) {
    auto it = kwargs.find(flag);
    if (it != kwargs.end() && !it->is_boolean()) {
      return Fail(ErrorCode::kInvalidArgument, "{} must be true or false", flag);
    }
  }
  o.formula = BoolOption(kwargs, "formula_enable", true);
  o.table = BoolOption(kwargs, "table_enable", true);
  if (auto it = kwargs.find("image_analysis"); it != kwargs.end()) {
    o.image_analysis = it->get<bool>();  // checked to be a boolean above
  }
  for (const char* page : {"start_page_id", "end_page_id"}) {
    auto it = kwargs.find(page);
    if (it == kwargs.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Fail(ErrorCode::kInvalidArgument, "{} must be a page number (0 or more)", page);
    }
    const int64_t value = it->get<int64_t>();
    if (std::string_view(page) == "start_page_id") {
      if (value > 0) o.start_page = static_cast<int>(std::min<int64_t>(value, 1 << 30));
    } else if (value < 99999) {
      o.end_page = static_cast<int>(value);
    }
  }
  return o;
}

}  // namespace

Topology CeleryWorkerTopology(const CeleryWorkerOptions& options) {
  Topology t = CeleryTaskTopology(options.queue, options.dead_letter_queue);
  t.queues.push_back(CeleryPidboxQueueSpec(options.hostname));
  t.bindings.push_back(CeleryPidboxBinding(options.hostname));
  return t;
}

class CeleryWorker::Impl {
 public:
  Impl(TaskManager& tasks, AmqpConnection& amqp, RedisClient& results,
       const CeleryWorkerOptions& options)
      : tasks_(tasks),
        amqp_(amqp),
        results_(results),
        options_(options),
        revoked_(options.max_revoked_ids, options.revoke_expiry) {}

  ~Impl() { Stop(); }

  Status Start() {
    // The mailbox first, so that a revoke sent just before a task's delivery is known when it
    // arrives.
    MINERU_RETURN_IF_ERROR(amqp_.Consume(CeleryPidboxQueueName(options_.hostname), kControlPrefetch,
                                         [this](Delivery d) { OnControl(std::move(d)); }));
    for (int i = 0; i < options_.slots; ++i) threads_.emplace_back([this] { Work(); });
    // At most `slots` deliveries are unacked (the prefetch), so the queue needs no bound of its
    // own; one refused after Stop is left unacked and redelivered elsewhere.
    return amqp_.Consume(options_.queue, static_cast<uint16_t>(options_.slots),
                         [this](Delivery d) { queue_.TryPush(std::move(d)); });
  }

  void Stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      // Queued deliveries stay unacked: the broker redelivers them.
      queue_.CloseAndTake();
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  CeleryWorkerStats Stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  void Count(int64_t CeleryWorkerStats::*field) {
    std::lock_guard lock(mutex_);
    ++(stats_.*field);
  }

  bool stopping() const {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // A pidbox message, on the AMQP I/O thread: only bookkeeping under the lock, no I/O. kombu
  // consumes the mailbox without acks; we ack everything at once (a command that does not
  // decode never will).
  void OnControl(Delivery d) {
    auto command = DecodeCeleryControl(d.message);
    if (!command) {
      int64_t rejected;
      {
        std::lock_guard lock(mutex_);
        rejected = ++stats_.control_rejected;
      }
      // Logged a few times only: the broker's input must not flood the log.
      if (rejected <= kLoggedControlErrors) {
        std::fprintf(stderr, "worker: ignored a control message: %s\n",
                     command.error().message.c_str());
      }
    } else if (command->revoke && AddressedTo(*command, options_.hostname)) {
      const auto now = CeleryRevokedIds::Clock::now();
      {
        std::lock_guard lock(mutex_);
        for (const std::string& id : command->revoke->task_ids) {
          revoked_.Add(id, now);
          if (auto it = running_.find(id); it != running_.end() && command->revoke->terminate) {
            it->second.terminate = true;
          }
        }
      }
      changed_.notify_all();  // wakes the jobs waiting on their parse
    }
    amqp_.Ack(d.tag);
  }

  bool Revoked(const std::string& id) {
    std::lock_guard lock(mutex_);
    return revoked_.Contains(id, CeleryRevokedIds::Clock::now());
  }

  void Work() {
    while (std::optional<Delivery> d = queue_.Pop()) {
      {
        std::lock_guard lock(mutex_);
        ++stats_.received;
        if (d->redelivered) ++stats_.redelivered;
      }
      Handle(*d);
    }
  }

  void Handle(const Delivery& d) {
    const std::string id = IdOf(d.message);
    auto message = DecodeCeleryMessage(CeleryFromAmqp(d.message));
    if (!message) return Poison(d, id, "undecodable message: " + message.error().message);
    if (message->task != options_.task_name) {
      return Poison(d, id,
                    fmt::format("task '{}' is not registered here (this worker runs '{}')",
                                message->task, options_.task_name),
                    "NotRegistered", "celery.exceptions");
    }
    // A SUCCESS already stored (the message came back after its ack was lost): nothing to redo.
    if (auto stored = results_.Command({"GET", CeleryMetaKey(id)});
        stored && !stored->is_nil() && IsFinalSuccess(stored->str)) {
      Count(&CeleryWorkerStats::duplicates);
      amqp_.Ack(d.tag);
      return;
    }
    if (ExpiresPassed(*message, std::chrono::system_clock::now())) {
      return Discard(d, id, "expired");
    }
    // Celery's "Discarding revoked task": never parsed, REVOKED('revoked') stored.
    if (Revoked(id)) return Discard(d, id, "revoked");
    std::string stored_status;
    const int64_t deliveries = CountDelivery(id, &stored_status);
    if (stored_status == "REVOKED") {
      // The publisher revoked it before any worker took it (RemoteRunner stores REVOKED only
      // while no delivery is counted, and this read follows the count), e.g. while no worker
      // ran: never parsed.
      Count(&CeleryWorkerStats::revoked);
      amqp_.Ack(d.tag);
      return;
    }
    if (deliveries > options_.max_deliveries) {
      return Poison(d, id,
                    fmt::format("delivered {} times (the limit is {}): each attempt ended "
                                "without a result",
                                deliveries, options_.max_deliveries));
    }
    Json result;
    std::optional<std::pair<std::string, std::string>> failure;  // (exc_type, message)
    const Outcome outcome = Run(*message, &result, &failure);
    if (outcome == Outcome::kStopping) return;  // left unacked
    const auto now = std::chrono::system_clock::now();
    std::string meta;
    if (outcome != Outcome::kDone) {
      meta = CeleryResultMeta(
          "REVOKED",
          CeleryRevokedResult(outcome == Outcome::kTerminated ? "terminated" : "revoked"),
          std::nullopt, id, now);
    } else if (failure) {
      // The client reads the text (exc_message, traceback): the task's input and work
      // directory are named by their file names only.
      const std::string text = WithoutServerPaths(failure->second);
      meta =
          CeleryResultMeta("FAILURE", CeleryExceptionResult(failure->first, text), text, id, now);
    } else {
      meta = CeleryResultMeta("SUCCESS", result, std::nullopt, id, now);
    }
    if (!Store(id, meta)) {
      amqp_.Nack(d.tag, /*requeue=*/true);
      return;
    }
    if (outcome == Outcome::kTerminated) Count(&CeleryWorkerStats::terminated);
    Count(outcome != Outcome::kDone ? &CeleryWorkerStats::revoked
          : failure                 ? &CeleryWorkerStats::failed
                                    : &CeleryWorkerStats::succeeded);
    amqp_.Ack(d.tag);
  }

  // kDone: *result or *failure is set. kRevoked: revoked before the parse started;
  // kTerminated: a revoke with terminate=true cancelled it. kStopping: the worker is stopping
  // (the parse was cancelled; the message must stay unacked).
  enum class Outcome { kDone, kRevoked, kTerminated, kStopping };

  // The running parse of a Celery task, for revokes with terminate=true.
  struct Running {
    int deliveries = 0;  // of this id being parsed here at once (a redelivery racing an ack)
    bool terminate = false;
  };

  // Registers the running parse; false when its id was revoked meanwhile (between the check in
  // Handle and now), so it must not run.
  bool Register(const std::string& id) {
    std::lock_guard lock(mutex_);
    ++running_[id].deliveries;
    return !revoked_.Contains(id, CeleryRevokedIds::Clock::now());
  }
  void Unregister(const std::string& id) {
    std::lock_guard lock(mutex_);
    if (auto it = running_.find(id); it != running_.end() && --it->second.deliveries <= 0) {
      running_.erase(it);
    }
  }

  // Parses the document.
  Outcome Run(const CeleryTaskMessage& message, Json* result,
              std::optional<std::pair<std::string, std::string>>* failure) {
    // Two deliveries of one id at once share one entry: a terminate stops both.
    if (!Register(message.id)) {
      Unregister(message.id);
      return Outcome::kRevoked;
    }
    const Outcome outcome = Parse(message, result, failure);
    Unregister(message.id);
    return outcome;
  }

  Outcome Parse(const CeleryTaskMessage& message, Json* result,
                std::optional<std::pair<std::string, std::string>>* failure) {
    if (!message.args.is_array() || message.args.empty() || !message.args[0].is_string()) {
      *failure = {"ValueError", "the first argument must be the document as base64 text"};
      return Outcome::kDone;
    }
    auto bytes = image::Base64Decode(message.args[0].get<std::string>());
    if (!bytes) {
      *failure = {"ValueError", "the document is not valid base64: " + bytes.error().message};
      return Outcome::kDone;
    }
    auto options = OptionsFrom(message.kwargs);
    if (!options) {
      *failure = {"ValueError", options.error().message};
      return Outcome::kDone;
    }
    std::string name = "document";
    if (auto it = message.kwargs.find("file_name"); it != message.kwargs.end() && it->is_string()) {
      name = it->get<std::string>();
    }
    auto task = tasks_.Submit({{name.empty() || name[0] == '.' ? "document" : name,
                                std::string(bytes->begin(), bytes->end())}},
                              *options);
    if (!task) {
      *failure = {task.error().code == ErrorCode::kInvalidArgument ? "ValueError" : "RuntimeError",
                  task.error().message};
      return Outcome::kDone;
    }
    // Wait for the task, watching Stop; each page done is a PROGRESS state (Celery's custom
    // state, as update_state writes it), which `serve --queue` shows as the task's progress.
    std::optional<TaskInfo> final;
    int pages_reported = 0;
    bool terminate = false, cancelled = false;
    while (true) {
      final = tasks_.Get(task->id);
      if (!final || IsFinal(final->status)) break;
      if (final->progress.pages_done > pages_reported) {
        pages_reported = final->progress.pages_done;
        const Json state{{"pages_done", final->progress.pages_done},
                         {"pages_total", final->progress.pages_total},
                         {"blocks_done", final->progress.blocks_done},
                         {"generated_tokens", final->progress.generated_tokens}};
        const std::string key = CeleryMetaKey(message.id);
        const std::string meta = CeleryResultMeta("PROGRESS", state, std::nullopt, message.id,
                                                  std::chrono::system_clock::now());
        results_.Pipeline({{"SETEX", key, std::to_string(options_.result_ttl.count()), meta},
                           {"PUBLISH", key, meta}});  // best effort: a hint, not a result
      }
      {
        std::unique_lock lock(mutex_);
        // Once the cancel is sent, only Stop cuts the wait short (no busy loop).
        const auto woken = [&] {
          return stopping_ || (!terminate && running_[message.id].terminate);
        };
        changed_.wait_for(lock, kStopPoll, woken);
        if (stopping_) {
          lock.unlock();
          tasks_.Delete(task->id);
          return Outcome::kStopping;
        }
        terminate = running_[message.id].terminate;
      }
      // The pipeline sees the cancel within its poll; the loop then reads the final state.
      if (terminate && !cancelled) cancelled = tasks_.Cancel(task->id).has_value();
      if (terminate && !cancelled) break;  // the task is gone: nothing left to stop
    }
    // A parse that completed before the revoke reached it keeps its result, as in Celery.
    if (terminate && (!final || final->status != TaskStatus::kCompleted)) {
      tasks_.Delete(task->id);
      return Outcome::kTerminated;
    }
    if (!final || final->status != TaskStatus::kCompleted) {
      *failure = {"RuntimeError",
                  final && final->error ? *final->error : "the parse was cancelled"};
      tasks_.Delete(task->id);
      return Outcome::kDone;
    }
    auto outputs = tasks_.Outputs(task->id);
    tasks_.Delete(task->id);
    if (!outputs || outputs->empty()) {
      *failure = {"RuntimeError", outputs ? "no outputs" : outputs.error().message};
      return Outcome::kDone;
    }
    const DocumentOutputs& doc = (*outputs)[0];
    *result = Json{{"md_content", doc.markdown},
                   {"pages", final->progress.pages_done},
                   {"cache_hit", final->cache_hits > 0}};
    const auto parsed = [](const std::string& text) {
      return ParseJson(text, "output", JsonFileLimits()).value_or(Json(nullptr));
    };
    if (BoolOption(message.kwargs, "return_content_list", true)) {
      (*result)["content_list"] = parsed(doc.content_list);
    }
    if (BoolOption(message.kwargs, "return_middle_json", false)) {
      (*result)["middle_json"] = parsed(doc.middle_json);
    }
    if (BoolOption(message.kwargs, "return_model_output", false)) {
      (*result)["model_output"] = parsed(doc.model_json);
    }
    // Every output file, for `serve --queue` (celery/remote_runner.h): the document codec's
    // bytes as base64.
    if (BoolOption(message.kwargs, "return_outputs", false)) {
      const std::string encoded = SerializeDocumentOutputs(doc);
      (*result)["outputs"] = image::Base64Encode(
          std::span(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size()));
    }
    return Outcome::kDone;
  }

  // INCR of the task's delivery counter (with the result TTL); 1 when Redis cannot count.
  // Counts a delivery of `id` and reads the status stored for it afterwards (into *status; empty
  // when none), in one round trip.
  int64_t CountDelivery(const std::string& id, std::string* status) {
    const std::string key = CeleryDeliveriesKey(id);
    auto replies = results_.Pipeline({{"INCR", key},
                                      {"EXPIRE", key, std::to_string(options_.result_ttl.count())},
                                      {"GET", CeleryMetaKey(id)}});
    if (!replies || replies->size() != 3 || replies->front().type != RedisReply::Type::kInteger) {
      return 1;
    }
    if ((*replies)[2].type == RedisReply::Type::kString) {
      *status = StoredCeleryStatus((*replies)[2].str);
    }
    return replies->front().integer;
  }

  // A task that is not run: REVOKED(reason) stored, then ack (nack with requeue when Redis
  // refuses, so the message is not lost before its result is stored).
  void Discard(const Delivery& d, const std::string& id, std::string_view reason) {
    if (Store(id, CeleryResultMeta("REVOKED", CeleryRevokedResult(reason), std::nullopt, id,
                                   std::chrono::system_clock::now()))) {
      Count(&CeleryWorkerStats::revoked);
      amqp_.Ack(d.tag);
    } else {
      amqp_.Nack(d.tag, /*requeue=*/true);
    }
  }

  // SETEX + PUBLISH in one round trip, as Celery's Redis backend writes; retried with backoff.
  bool Store(const std::string& id, const std::string& meta) {
    const std::string key = CeleryMetaKey(id);
    std::chrono::milliseconds backoff = kStoreBackoff;
    for (int attempt = 0; attempt < kStoreAttempts; ++attempt) {
      auto replies =
          results_.Pipeline({{"SETEX", key, std::to_string(options_.result_ttl.count()), meta},
                             {"PUBLISH", key, meta}});
      if (replies && replies->size() == 2 && replies->front().type != RedisReply::Type::kError) {
        return true;
      }
      if (stopping()) return false;
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, kMaxStoreBackoff);
    }
    return false;
  }

  // A message that must not come back: FAILURE stored (when it names a task), a copy with its
  // headers and the reason in the dead-letter queue, then ack.
  void Poison(const Delivery& d, const std::string& id, const std::string& reason,
              std::string_view exc_type = "ValueError", std::string_view exc_module = "builtins") {
    if (!id.empty()) {
      Store(id, CeleryResultMeta("FAILURE", CeleryExceptionResult(exc_type, reason, exc_module),
                                 reason, id, std::chrono::system_clock::now()));
    }
    Message copy = d.message;
    copy.headers.push_back({"x-mineru-reason", AmqpValue(reason)});
    copy.headers.push_back({"x-mineru-original-queue", AmqpValue(options_.queue)});
    if (Status published = amqp_.Publish("", options_.dead_letter_queue, copy); !published) {
      amqp_.Nack(d.tag, /*requeue=*/true);  // not preserved yet: keep it in the broker
      return;
    }
    Count(&CeleryWorkerStats::dead_lettered);
    amqp_.Ack(d.tag);
  }

  TaskManager& tasks_;
  AmqpConnection& amqp_;
  RedisClient& results_;
  const CeleryWorkerOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  BlockingQueue<Delivery> queue_;  // deliveries for the slot threads; closed by Stop
  bool stopping_ = false;
  CeleryRevokedIds revoked_;
  std::unordered_map<std::string, Running> running_;  // by Celery task id
  CeleryWorkerStats stats_;
  std::vector<std::thread> threads_;
};

Result<std::unique_ptr<CeleryWorker>> CeleryWorker::Start(TaskManager& tasks, AmqpConnection& amqp,
                                                          RedisClient& results,
                                                          const CeleryWorkerOptions& options) {
  if (options.slots < 1 || options.slots > 65535) {
    return Fail(ErrorCode::kInvalidArgument, "slots must be 1..65535, not {}", options.slots);
  }
  if (options.max_deliveries < 1) {
    return Fail(ErrorCode::kInvalidArgument, "max_deliveries must be at least 1");
  }
  if (options.max_revoked_ids < 1) {
    return Fail(ErrorCode::kInvalidArgument, "max_revoked_ids must be at least 1");
  }
  if (options.hostname.empty() || options.hostname.size() > kMaxControlFieldBytes) {
    return Fail(ErrorCode::kInvalidArgument, "hostname must be 1..{} bytes", kMaxControlFieldBytes);
  }
  auto impl = std::make_unique<Impl>(tasks, amqp, results, options);
  MINERU_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<CeleryWorker>(new CeleryWorker(std::move(impl)));
}

CeleryWorker::CeleryWorker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CeleryWorker::~CeleryWorker() = default;
void CeleryWorker::Stop() { impl_->Stop(); }
CeleryWorkerStats CeleryWorker::Stats() const { return impl_->Stats(); }

}  // namespace mineru::jobs
