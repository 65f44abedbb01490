// SPDX-License-Identifier: Apache-2.0
#include "celery/celery_control.h"

#include <fmt/format.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>

#include "celery/celery_protocol.h"
#include "celery/celery_pyjson.h"

namespace mineru::jobs {
namespace {

Result<std::string> ControlString(const Json& value, std::string_view what) {
  if (!value.is_string()) {
    return Fail(ErrorCode::kCorrupt, "celery control message: {} must be a string, not {}", what,
                value.type_name());
  }
  std::string text = value.get<std::string>();
  if (text.size() > kMaxControlFieldBytes) {
    return Fail(ErrorCode::kCorrupt,
                "celery control message: {} is {} bytes (the limit is kMaxControlFieldBytes, {})",
                what, text.size(), kMaxControlFieldBytes);
  }
  return text;
}

// A string, or null/absent as "".
Result<std::string> OptionalString(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  return ControlString(*it, key);
}

// A string or a list of strings (kombu accepts tuples, which JSON makes lists); at most `limit`.
Result<std::vector<std::string>> StringOrList(const Json& value, std::string_view what,
                                              size_t limit, std::string_view limit_name) {
  std::vector<std::string> out;
  if (value.is_null()) return out;
  if (value.is_string()) {
    MINERU_ASSIGN_OR_RETURN(std::string one, ControlString(value, what));
    out.push_back(std::move(one));
    return out;
  }
  if (!value.is_array()) {
    return Fail(ErrorCode::kCorrupt,
                "celery control message: {} must be a string or a list of strings, not {}", what,
                value.type_name());
  }
  if (value.size() > limit) {
    return Fail(ErrorCode::kCorrupt,
                "celery control message: {} lists {} entries (the limit is {}, {})", what,
                value.size(), limit_name, limit);
  }
  out.reserve(value.size());
  for (const Json& item : value) {
    MINERU_ASSIGN_OR_RETURN(std::string one, ControlString(item, what));
    out.push_back(std::move(one));
  }
  return out;
}

Result<CeleryRevoke> DecodeRevoke(const Json& arguments) {
  CeleryRevoke revoke;
  // Celery's handler takes task_id=None as "no ids" (maybe_list), so a missing id is not an
  // error there either; it revokes nothing.
  if (auto it = arguments.find("task_id"); it != arguments.end()) {
    MINERU_ASSIGN_OR_RETURN(
        revoke.task_ids,
        StringOrList(*it, "arguments.task_id", kMaxRevokeIdsPerMessage, "kMaxRevokeIdsPerMessage"));
  }
  if (auto it = arguments.find("terminate"); it != arguments.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return Fail(ErrorCode::kCorrupt,
                  "celery control message: arguments.terminate must be true or false, not {}",
                  it->type_name());
    }
    revoke.terminate = it->get<bool>();
  }
  MINERU_ASSIGN_OR_RETURN(revoke.signal, OptionalString(arguments, "signal"));
  return revoke;
}

}  // namespace

std::string DefaultCeleryHostname() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof(host), "localhost");
  }
  return fmt::format("mineru-{}@{}", getpid(), host);
}

std::string CeleryPidboxQueueName(std::string_view hostname) {
  return fmt::format("{}.celery.pidbox", hostname);
}

ExchangeSpec CeleryControlExchangeSpec() {
  ExchangeSpec e;
  e.name = std::string(kCeleryControlExchange);
  e.type = "fanout";
  e.durable = false;
  e.auto_delete = false;
  return e;
}

QueueSpec CeleryPidboxQueueSpec(std::string_view hostname) {
  QueueSpec q;
  q.name = CeleryPidboxQueueName(hostname);
  q.durable = false;
  q.auto_delete = true;
  // Celery's order (kombu's dict: expires, then message_ttl); RabbitMQ compares by key anyway.
  q.arguments = {{"x-expires", AmqpValue(int64_t{kCeleryPidboxQueueExpires.count()})},
                 {"x-message-ttl", AmqpValue(int64_t{kCeleryPidboxMessageTtl.count()})}};
  return q;
}

BindingSpec CeleryPidboxBinding(std::string_view hostname) {
  // kombu binds with the queue's routing key, "" (a fanout exchange ignores it anyway).
  return {CeleryPidboxQueueName(hostname), std::string(kCeleryControlExchange), ""};
}

Topology CeleryTaskTopology(std::string_view queue, std::string_view dead_letter_queue) {
  const std::string name(queue);
  Topology t;
  t.exchanges.push_back({name, "direct", true});
  t.exchanges.push_back(CeleryControlExchangeSpec());
  t.queues.push_back({name, true, std::nullopt, std::nullopt, std::nullopt, {}});
  t.queues.push_back(
      {std::string(dead_letter_queue), true, std::nullopt, std::nullopt, std::nullopt, {}});
  t.bindings.push_back({name, name, name});
  return t;
}

Result<CeleryControlCommand> DecodeCeleryControl(const Message& message) {
  if (message.body.size() > kMaxControlBodyBytes) {
    return Fail(ErrorCode::kCorrupt,
                "celery control message: body of {} bytes (the limit is kMaxControlBodyBytes, {})",
                message.body.size(), kMaxControlBodyBytes);
  }
  // kombu's pidbox accepts only json (Mailbox.accept); an absent type is read as JSON too.
  if (!message.content_type.empty() && message.content_type != kCeleryContentType) {
    return Fail(ErrorCode::kCorrupt, "celery control message: content type '{}' (only {} is read)",
                message.content_type.substr(0, 64), kCeleryContentType);
  }
  if (!message.content_encoding.empty() && message.content_encoding != "utf-8") {
    return Fail(ErrorCode::kCorrupt, "celery control message: content encoding '{}' (only utf-8)",
                message.content_encoding.substr(0, 64));
  }
  MINERU_ASSIGN_OR_RETURN(Json body,
                          ParseJson(message.body, "celery control message", kMaxControlJsonDepth));
  if (!body.is_object()) {
    return Fail(ErrorCode::kCorrupt, "celery control message: the body must be an object, not {}",
                body.type_name());
  }
  CeleryControlCommand out;
  auto method = body.find("method");
  if (method == body.end()) {
    return Fail(ErrorCode::kCorrupt, "celery control message: no 'method'");
  }
  MINERU_ASSIGN_OR_RETURN(out.method, ControlString(*method, "method"));
  if (auto it = body.find("destination"); it != body.end() && !it->is_null()) {
    if (!it->is_array()) {
      return Fail(ErrorCode::kCorrupt,
                  "celery control message: destination must be null or a list, not {}",
                  it->type_name());
    }
    MINERU_ASSIGN_OR_RETURN(
        out.destination,
        StringOrList(*it, "destination", kMaxControlDestinations, "kMaxControlDestinations"));
  }
  MINERU_ASSIGN_OR_RETURN(out.pattern, OptionalString(body, "pattern"));
  MINERU_ASSIGN_OR_RETURN(out.matcher, OptionalString(body, "matcher"));
  if (auto it = body.find("reply_to"); it != body.end() && !it->is_null()) out.wants_reply = true;
  if (out.method != "revoke") return out;  // another command: decoded, never acted on

  Json arguments = Json::object();
  if (auto it = body.find("arguments"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) {
      return Fail(ErrorCode::kCorrupt,
                  "celery control message: arguments must be an object, not {}", it->type_name());
    }
    arguments = std::move(*it);
  }
  MINERU_ASSIGN_OR_RETURN(out.revoke, DecodeRevoke(arguments));
  return out;
}

bool AddressedTo(const CeleryControlCommand& command, std::string_view hostname) {
  // kombu: `if destination:` (an empty list is everyone), `elif pattern and matcher:`.
  if (command.destination && !command.destination->empty()) {
    return std::find(command.destination->begin(), command.destination->end(), hostname) !=
           command.destination->end();
  }
  if (!command.pattern.empty() && !command.matcher.empty()) {
    if (command.matcher != "glob") return false;  // pcre and custom matchers: not supported
    const std::string name(hostname);
    return fnmatch(command.pattern.c_str(), name.c_str(), 0) == 0;
  }
  return true;
}

Message EncodeCeleryRevoke(const std::vector<std::string>& task_ids, bool terminate,
                           std::string_view signal, const std::vector<std::string>& destination) {
  // Written field by field in Celery's order (PyJsonDumps sorts keys) so the body equals what
  // app.control.revoke publishes.
  const Json ids = task_ids.size() == 1 ? Json(task_ids[0]) : Json(task_ids);
  Message m;
  m.body = fmt::format(
      R"({{"method": "revoke", "arguments": {{"task_id": {}, "terminate": {}, "signal": {}}}, )"
      R"("destination": {}, "pattern": null, "matcher": null}})",
      PyJsonDumps(ids), terminate ? "true" : "false",
      signal.empty() ? "null" : PyJsonDumps(Json(std::string(signal))),
      destination.empty() ? "null" : PyJsonDumps(Json(destination)));
  m.content_type = std::string(kCeleryContentType);
  m.content_encoding = "utf-8";
  m.priority = 0;
  // kombu publishes with the producer's default (persistent) delivery mode; the pidbox queues
  // are not durable, so nothing is written to disk either way.
  m.delivery_mode = kPersistentDelivery;
  m.headers = {{"clock", AmqpValue(int64_t{0})}, {"expires", AmqpValue(int64_t{0})}};
  return m;
}

CeleryRevokedIds::CeleryRevokedIds(size_t max_ids, std::chrono::seconds expiry)
    : max_ids_(std::max<size_t>(max_ids, 1)), expiry_(expiry) {}

void CeleryRevokedIds::Add(const std::string& id, Clock::time_point now) {
  added_[id] = now;
  order_.emplace_back(now, id);
  Forget(now);
  // Revoking the same ids again and again leaves stale entries behind; rebuild the order when
  // they outnumber the live ones, so memory stays bounded by max_ids.
  if (order_.size() > 2 * max_ids_ + 16) {
    std::vector<std::pair<Clock::time_point, std::string>> live;
    live.reserve(added_.size());
    for (const auto& [key, when] : added_) live.emplace_back(when, key);
    std::sort(live.begin(), live.end());
    order_.assign(std::make_move_iterator(live.begin()), std::make_move_iterator(live.end()));
  }
}

bool CeleryRevokedIds::Contains(const std::string& id, Clock::time_point now) const {
  auto it = added_.find(id);
  return it != added_.end() && now - it->second < expiry_;
}

void CeleryRevokedIds::Forget(Clock::time_point now) {
  while (!order_.empty()) {
    const auto& [when, id] = order_.front();
    auto it = added_.find(id);
    const bool stale = it == added_.end() || it->second != when;
    if (!stale && now - when < expiry_ && added_.size() <= max_ids_) break;
    if (!stale) added_.erase(it);
    order_.pop_front();
  }
}

}  // namespace mineru::jobs
