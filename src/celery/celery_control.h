// SPDX-License-Identifier: Apache-2.0
// Celery's remote control ("pidbox", kombu.pidbox as Celery 5.2 uses it), the part our worker
// honours: `revoke`. A Python client's `AsyncResult(id).revoke(terminate=True)` or
// `app.control.revoke(ids, terminate=..., destination=[...])` publishes one JSON message to the
// fanout exchange `celery.pidbox`; every live worker has its own queue `<hostname>.celery.pidbox`
// bound to it and so sees every command:
//
//   {"method": "revoke", "arguments": {"task_id": "<id>" | ["<id>", ...], "terminate": bool,
//    "signal": "SIGTERM" | null}, "destination": null | ["<hostname>", ...],
//    "pattern": null | "<glob>", "matcher": null | "glob"}
//   (+ "ticket" and "reply_to" when the client waits for replies; we never reply)
//
// Headers {"clock", "expires"} are kombu's Lamport clock and the reply deadline; the worker side
// of kombu reads neither for casts, so neither do we. Declarations match kombu's exactly
// (RabbitMQ closes the channel with PRECONDITION_FAILED on any difference): the exchange is a
// non-durable fanout, not auto-deleted; the queue is non-durable, auto-deleted, with
// x-message-ttl 300000 and x-expires 10000 (Celery's control_queue_ttl / control_queue_expires).
//
// Decoding untrusted messages returns errors naming what is wrong and the limit it broke; a
// method other than revoke (ping, stats, shutdown...) decodes fine and is simply not acted on.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "celery/amqp_client.h"
#include "celery/celery_protocol.h"

namespace mineru::jobs {

// Celery's control_exchange ("celery") + kombu's "%s.pidbox".
inline constexpr std::string_view kCeleryControlExchange = "celery.pidbox";
// Celery's control_queue_ttl (300 s) and control_queue_expires (10 s), in kombu's milliseconds.
inline constexpr std::chrono::milliseconds kCeleryPidboxMessageTtl{300'000};
inline constexpr std::chrono::milliseconds kCeleryPidboxQueueExpires{10'000};

// Largest control message body accepted. A revoke of a whole GroupResult lists every id
// (about 40 bytes each), so this admits far more ids than kMaxRevokeIdsPerMessage.
inline constexpr size_t kMaxControlBodyBytes = size_t{4} << 20;
// Nesting of the body JSON: {"arguments": {"task_id": [...]}} is 3 deep.
inline constexpr int kMaxControlJsonDepth = 8;
// Ids in one revoke: Celery remembers at most REVOKES_MAX (50,000) revoked ids, so a longer list
// could not be honoured anyway.
inline constexpr size_t kMaxRevokeIdsPerMessage = 50'000;
// Longest task id, hostname, method, signal or pattern accepted.
inline constexpr size_t kMaxControlFieldBytes = 1024;
// Hostnames in `destination`.
inline constexpr size_t kMaxControlDestinations = 10'000;

// "mineru-<pid>@<gethostname()>", the worker's node name unless configured (Celery's is
// "celery@<host>"). The process id keeps two workers on one machine apart: with one name they
// would share one pidbox queue and each see only some of the commands.
std::string DefaultCeleryHostname();
// "<hostname>.celery.pidbox".
std::string CeleryPidboxQueueName(std::string_view hostname);

// The topology pieces, declared as kombu declares them.
ExchangeSpec CeleryControlExchangeSpec();
QueueSpec CeleryPidboxQueueSpec(std::string_view hostname);
BindingSpec CeleryPidboxBinding(std::string_view hostname);

// What a publisher of tasks declares, and the worker with it: Celery's direct exchange, queue
// and binding, all named `queue`, the dead-letter queue, and the remote control exchange
// (celery.pidbox) revokes are published to.
Topology CeleryTaskTopology(std::string_view queue = kCeleryQueue,
                            std::string_view dead_letter_queue = kCeleryDeadLetterQueue);

struct CeleryRevoke {
  std::vector<std::string> task_ids;  // a single id on the wire becomes one element
  bool terminate = false;
  // As sent (Celery's default: "SIGTERM"; AsyncResult.revoke sends null). Our worker runs jobs
  // on threads, not processes: every signal means "cancel the parse".
  std::string signal;
};

struct CeleryControlCommand {
  std::string method;
  std::optional<std::vector<std::string>> destination;  // null: every worker
  std::string pattern, matcher;                         // empty when null
  bool wants_reply = false;                             // a reply_to was sent (not answered)
  std::optional<CeleryRevoke> revoke;                   // set when method == "revoke"
};

// Decodes a message from a pidbox queue: kCorrupt naming the problem (not JSON, not an object,
// a field of the wrong type, a limit above exceeded, a revoke whose arguments are malformed).
Result<CeleryControlCommand> DecodeCeleryControl(const Message& message);

// Whether `hostname` must act on the command, as kombu's Node.handle_message decides: a
// non-empty destination must name it; else a pattern with matcher "glob" must match it (fnmatch);
// else everyone. Another matcher ("pcre", or one registered in Python) is not supported here:
// the command is taken as not addressed to this worker, so it never revokes by mistake.
bool AddressedTo(const CeleryControlCommand& command, std::string_view hostname);

// The message `app.control.revoke(task_ids, terminate=..., signal=...)` publishes (body byte for
// byte as Celery 5.2 writes it: one id as a string, several as a list), to be published to
// kCeleryControlExchange with an empty routing key. `destination` empty: every worker.
Message EncodeCeleryRevoke(const std::vector<std::string>& task_ids, bool terminate,
                           std::string_view signal = "SIGTERM",
                           const std::vector<std::string>& destination = {});

// The ids a worker has been told to revoke, as Celery's worker keeps them (a LimitedSet of
// REVOKES_MAX ids for REVOKE_EXPIRES): at most `max_ids` (the oldest forgotten first), each for
// `expiry` after its last revoke. Bounded in memory whatever the broker sends. Not thread-safe.
class CeleryRevokedIds {
 public:
  using Clock = std::chrono::steady_clock;
  CeleryRevokedIds(size_t max_ids, std::chrono::seconds expiry);

  void Add(const std::string& id, Clock::time_point now);
  bool Contains(const std::string& id, Clock::time_point now) const;
  size_t size() const { return added_.size(); }

 private:
  void Forget(Clock::time_point now);

  size_t max_ids_;
  std::chrono::seconds expiry_;
  std::unordered_map<std::string, Clock::time_point> added_;
  // In order of adding; an entry whose time differs from added_'s is stale (the id was revoked
  // again later) and skipped.
  std::deque<std::pair<Clock::time_point, std::string>> order_;
};

}  // namespace mineru::jobs
