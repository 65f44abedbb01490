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
#include <vector>

#include "base/status.h"
#include "celery/amqp_message.h"
#include "celery/amqp_options.h"

namespace mineru::jobs {

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
