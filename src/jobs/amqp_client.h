// SPDX-License-Identifier: Apache-2.0
// An AMQP 0-9-1 client for RabbitMQ (rabbitmq-c underneath, kept out of this header): the task
// queue's transport. One I/O thread owns the connection, because rabbitmq-c answers heartbeats
// only inside its own calls: the thread waits for frames with a short timeout, hands deliveries
// to the consumer callback, and performs the publishes, acks, nacks and rejects that other threads
// request through a command queue. A 90-second job on a worker thread therefore never starves the
// heartbeats.
//
//   Result<AmqpOptions> options = ParseAmqpUrl("amqp://guest:guest@localhost:5672/%2F");
//   AmqpConnection connection;
//   MINERU_RETURN_IF_ERROR(connection.Start(*options, {.queues = {{.name = "celery"}}}));
//   MINERU_RETURN_IF_ERROR(connection.Publish("", "celery", {.body = "[[], {}, {}]"}));
//   connection.Consume("celery", /*prefetch=*/1, [&](Delivery d) { pool.Post(std::move(d)); });
//   ... later, on any thread: connection.Ack(d.tag);
//
// Delivery guarantees (RabbitMQ's): Publish returns only after the broker confirmed the message
// (for a persistent message on a durable queue: written to disk). Deliveries stay unacked until
// Ack/Nack/Reject; if the connection is lost first, the broker requeues them and delivers them
// again with `redelivered` set, so consumers must be idempotent.
//
// Broker loss: the I/O thread reconnects with exponential backoff, declares the topology again,
// and resumes every consumer. While disconnected, Publish fails at once with kUnavailable (nothing
// is buffered: the caller knows the message was not accepted and may retry), and a publish whose
// confirm was outstanding when the connection dropped fails with kUnavailable too (it may or may
// not have been stored). Tags of deliveries from a previous connection are dropped, never sent:
// acking them on the new connection would be a channel error, and the broker has requeued them.
//
// Publishes are not `mandatory`: a message the topology does not route is confirmed and dropped
// by the broker, so publish only to exchanges and queues declared in the topology.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace mineru::jobs {

struct AmqpOptions {
  static constexpr int kDefaultPort = 5672;
  static constexpr std::chrono::seconds kDefaultHeartbeat{30};
  static constexpr std::chrono::seconds kDefaultConnectTimeout{5};
  // Waits for replies to declarations, consumes and other synchronous methods.
  static constexpr std::chrono::seconds kDefaultRpcTimeout{10};
  // How long Publish waits for the broker's confirm. Confirms of persistent messages wait for
  // the broker's batched fsync, which can take hundreds of milliseconds under load.
  static constexpr std::chrono::seconds kDefaultConfirmTimeout{30};
  static constexpr std::chrono::milliseconds kDefaultReconnectInitialBackoff{200};
  static constexpr std::chrono::milliseconds kDefaultReconnectMaxBackoff{10'000};
  // The longest the I/O thread sleeps waiting for the socket when no command wakes it; commands
  // wake it at once, so this only bounds how late a heartbeat can be sent (far below heartbeat/2).
  static constexpr std::chrono::milliseconds kDefaultIdleWait{100};
  // Largest message body accepted from the broker (RabbitMQ's own default max_message_size is
  // 128 MiB). A larger delivery is rejected without requeue (dead-lettered when the queue has a
  // dead-letter exchange) and counted in AmqpCounters::oversized_rejected.
  static constexpr size_t kDefaultMaxBodyBytes = size_t{128} << 20;
  static constexpr int kDefaultFrameMax = 131072;

  std::string host = "localhost";
  int port = kDefaultPort;
  std::string user = "guest";
  std::string password = "guest";
  std::string vhost = "/";
  std::chrono::seconds heartbeat = kDefaultHeartbeat;  // 0 disables heartbeats
  std::chrono::milliseconds connect_timeout = kDefaultConnectTimeout;
  std::chrono::milliseconds rpc_timeout = kDefaultRpcTimeout;
  std::chrono::milliseconds confirm_timeout = kDefaultConfirmTimeout;
  std::chrono::milliseconds reconnect_initial_backoff = kDefaultReconnectInitialBackoff;
  std::chrono::milliseconds reconnect_max_backoff = kDefaultReconnectMaxBackoff;
  std::chrono::milliseconds idle_wait = kDefaultIdleWait;
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  int frame_max = kDefaultFrameMax;
};

// "amqp://user:pass@host:port/vhost": user and password default to guest/guest, the port to
// 5672, the vhost to "/" (an empty path, or "/%2F"); %XX escapes are decoded in every part.
// "amqps://" (TLS) and query parameters are refused as unsupported.
Result<AmqpOptions> ParseAmqpUrl(std::string_view url);

// A header or argument value: the AMQP field types Celery's headers need (strings, integers,
// booleans, null, lists and nested tables), plus doubles. Integers of every wire width decode to
// int64; byte arrays decode to strings.
struct AmqpField;
struct AmqpValue {
  using List = std::vector<AmqpValue>;
  using Table = std::vector<AmqpField>;  // in wire order; keys are unique
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, List, Table> value;

  // Defined below AmqpField: constructing the variant needs every alternative complete (clang
  // instantiates it here, GCC only where a constructor is used).
  AmqpValue();
  AmqpValue(std::nullptr_t);
  AmqpValue(bool b);
  AmqpValue(int i);
  AmqpValue(int64_t i);
  AmqpValue(double d);
  AmqpValue(const char* s);
  AmqpValue(std::string s);
  AmqpValue(List l);
  AmqpValue(Table t);

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(value); }
  const std::string* string() const { return std::get_if<std::string>(&value); }
  const int64_t* integer() const { return std::get_if<int64_t>(&value); }
  const List* list() const { return std::get_if<List>(&value); }
  const Table* table() const { return std::get_if<Table>(&value); }
  friend bool operator==(const AmqpValue&, const AmqpValue&) = default;
};
struct AmqpField {
  std::string key;
  AmqpValue value;
  friend bool operator==(const AmqpField&, const AmqpField&) = default;
};
inline AmqpValue::AmqpValue() : value(nullptr) {}
inline AmqpValue::AmqpValue(std::nullptr_t) : value(nullptr) {}
inline AmqpValue::AmqpValue(bool b) : value(b) {}
inline AmqpValue::AmqpValue(int i) : value(int64_t{i}) {}
inline AmqpValue::AmqpValue(int64_t i) : value(i) {}
inline AmqpValue::AmqpValue(double d) : value(d) {}
inline AmqpValue::AmqpValue(const char* s) : value(std::string(s)) {}
inline AmqpValue::AmqpValue(std::string s) : value(std::move(s)) {}
inline AmqpValue::AmqpValue(List l) : value(std::move(l)) {}
inline AmqpValue::AmqpValue(Table t) : value(std::move(t)) {}
using AmqpTable = AmqpValue::Table;

// Deepest nesting of lists and tables (a header table counts as level 1) accepted in either
// direction: Publish refuses deeper headers, and a deeper delivery is rejected as malformed, so
// outside bytes cannot drive the conversion's recursion arbitrarily deep.
inline constexpr int kMaxAmqpFieldDepth = 32;

// The value under `key`, or null when absent.
const AmqpValue* FindField(const AmqpTable& table, std::string_view key);

inline constexpr uint8_t kTransientDelivery = 1;
inline constexpr uint8_t kPersistentDelivery = 2;

// A message's body and basic properties (empty strings are left out on the wire).
struct Message {
  std::string body;
  std::string content_type;
  std::string content_encoding;
  std::string correlation_id;
  std::string reply_to;
  std::string message_id;
  std::string expiration;           // per-message TTL in milliseconds, as text
  std::optional<uint8_t> priority;  // honoured only by queues with x-max-priority
  uint8_t delivery_mode = kPersistentDelivery;
  AmqpTable headers;
};

// Names a delivery on one connection. `connection` counts connections from 1; a tag whose
// connection is gone is refused by Ack/Nack/Reject without being sent.
struct DeliveryTag {
  uint64_t connection = 0;
  uint64_t value = 0;
  friend bool operator==(const DeliveryTag&, const DeliveryTag&) = default;
};

struct Delivery {
  DeliveryTag tag;
  bool redelivered = false;
  std::string consumer_tag;
  std::string exchange;
  std::string routing_key;
  Message message;  // body, properties and headers as received
};

struct ExchangeSpec {
  std::string name;
  std::string type = "direct";
  bool durable = true;
  // Deleted by the broker once its last queue is unbound. Must match every other declarer's.
  bool auto_delete = false;
};

struct QueueSpec {
  std::string name;
  bool durable = true;
  std::optional<uint8_t> max_priority;              // x-max-priority
  std::optional<std::string> dead_letter_exchange;  // x-dead-letter-exchange ("" = default)
  std::optional<std::string> dead_letter_routing_key;
  // Further x-arguments. RabbitMQ refuses a redeclare whose arguments differ from the queue's,
  // so they must match what every other client (e.g. a Celery app) declares.
  AmqpTable arguments;
  // Deleted by the broker when its last consumer goes (e.g. Celery's per-worker pidbox queue).
  // RabbitMQ refuses a redeclare with another value, like the arguments.
  bool auto_delete = false;
};

struct BindingSpec {
  std::string queue;
  std::string exchange;
  std::string routing_key;
};

// Declared (exchanges, then queues, then bindings) on Start and after every reconnect.
struct Topology {
  std::vector<ExchangeSpec> exchanges;
  std::vector<QueueSpec> queues;
  std::vector<BindingSpec> bindings;
};

struct AmqpCounters {
  uint64_t connections = 0;  // successful connects, the first included
  uint64_t reconnects = 0;   // successful connects after a loss
  uint64_t deliveries = 0;
  uint64_t redeliveries = 0;  // deliveries the broker marked redelivered
  uint64_t published = 0;     // confirmed by the broker
  uint64_t publish_failures = 0;
  uint64_t stale_tags_dropped = 0;  // acks/nacks/rejects of a previous connection's deliveries
  uint64_t oversized_rejected = 0;  // deliveries over max_body_bytes, rejected without requeue
  uint64_t malformed_rejected = 0;  // deliveries whose headers cannot be read, likewise
};

// Runs on the I/O thread, in delivery order. It must return quickly (hand the delivery to a
// worker); it may call Ack/Nack/Reject but not Publish (which waits on the I/O thread).
using DeliveryCallback = std::function<void(Delivery)>;

class AmqpConnection {
 public:
  AmqpConnection();
  ~AmqpConnection();  // closes the connection; unacked deliveries go back to their queues
  AmqpConnection(const AmqpConnection&) = delete;
  AmqpConnection& operator=(const AmqpConnection&) = delete;

  // Connects, declares `topology` and starts the I/O thread; call once, before any other method.
  // Fails (and starts nothing) when the first connect or a declaration fails, e.g. a queue exists
  // with other arguments. Once started, connection losses are repaired in the background.
  Status Start(const AmqpOptions& options, Topology topology);

  // Publishes and waits for the broker's confirm (up to options.confirm_timeout). kUnavailable
  // while disconnected or when the connection drops before the confirm; kInternal on a broker
  // nack; kInvalidArgument when called from the delivery callback.
  Status Publish(std::string_view exchange, std::string_view routing_key, const Message& message);

  // Starts a consumer on `queue` with at most `prefetch` unacked deliveries (0: unlimited),
  // resumed after every reconnect.
  Status Consume(std::string_view queue, uint16_t prefetch, DeliveryCallback callback);

  Status Ack(DeliveryTag tag);
  Status Nack(DeliveryTag tag, bool requeue);
  Status Reject(DeliveryTag tag, bool requeue);

  bool connected() const;
  AmqpCounters counters() const;
  // Why the last connection attempt or connection failed; empty when none has.
  std::string last_error() const;

  // Stops the I/O thread and closes the connection (idempotent; the destructor calls it).
  void Close();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::jobs
