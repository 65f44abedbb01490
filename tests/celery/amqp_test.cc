// SPDX-License-Identifier: Apache-2.0
// The AMQP client (celery/amqp_client.h) against a real RabbitMQ node started by the test
// (tests/support/rabbitmq_server.h): confirms, round trips of properties and Celery headers,
// prefetch, requeue, dead-lettering, priorities, redelivery after a lost consumer, heartbeats
// during a long job, limits, and a broker restart in the middle of a run.
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "../support/rabbitmq_server.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "celery/amqp_client.h"

namespace mineru::jobs {
namespace {

using testing_support::RabbitMqServer;
using testing_support::WaitUntil;
using namespace std::chrono_literals;

// Deliveries handed over by the I/O thread; the callback only pushes, as the API asks.
class DeliveryQueue {
 public:
  DeliveryCallback Callback() {
    return [this](Delivery d) {
      std::lock_guard lock(mu_);
      items_.push_back(std::move(d));
      cv_.notify_all();
    };
  }
  // The next delivery, or nullopt after `wait` (generous: only a broken client runs into it).
  std::optional<Delivery> Pop(std::chrono::milliseconds wait = 20s) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, wait, [&] { return !items_.empty(); })) return std::nullopt;
    Delivery d = std::move(items_.front());
    items_.pop_front();
    return d;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Delivery> items_;
};

Message Msg(std::string body, std::optional<uint8_t> priority = {}, AmqpTable headers = {}) {
  Message message;
  message.body = std::move(body);
  message.priority = priority;
  message.headers = std::move(headers);
  return message;
}

std::string QueueName() {
  return std::string("q.") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

// The headers Celery 5.2 puts on a task message (protocol 2: celery/app/amqp.py as_task_v2).
AmqpTable CeleryHeaders() {
  return {{"lang", "py"},
          {"task", "run_mineru_inference"},
          {"id", "7d3a-task"},
          {"shadow", nullptr},
          {"eta", nullptr},
          {"expires", "2030-01-01T00:00:00"},
          {"group", nullptr},
          {"group_index", nullptr},
          {"retries", 0},
          {"timelimit", AmqpValue::List{nullptr, nullptr}},
          {"root_id", "7d3a-task"},
          {"parent_id", nullptr},
          {"argsrepr", "('doc',)"},
          {"kwargsrepr", "{'dpi': 200}"},
          {"origin", "gen123@host"},
          {"ignore_result", false},
          {"stamped_headers", AmqpValue::List{"a", "b"}},
          {"stamps", AmqpTable{{"nested", AmqpTable{{"big", int64_t{1} << 40}, {"neg", -7}}}}}};
}

TEST(AmqpUrlTest, ParsesAndDefaults) {
  struct Case {
    const char* url;
    const char* host;
    int port;
    const char* user;
    const char* password;
    const char* vhost;
  };
  const Case cases[] = {
      {"amqp://", "localhost", 5672, "guest", "guest", "/"},
      {"amqp://rabbit", "rabbit", 5672, "guest", "guest", "/"},
      {"amqp://rabbit/", "rabbit", 5672, "guest", "guest", "/"},
      {"amqp://rabbit:5673", "rabbit", 5673, "guest", "guest", "/"},
      {"amqp://u:p@rabbit:1/%2F", "rabbit", 1, "u", "p", "/"},
      {"amqp://u:p@rabbit:65535/prod", "rabbit", 65535, "u", "p", "prod"},
      {"amqp://u%40x:p%3Aw@h/v%2Fh", "h", 5672, "u@x", "p:w", "v/h"},
      {"amqp://onlyuser@h", "h", 5672, "onlyuser", "guest", "/"},
      {"amqp://[::1]:5000/", "::1", 5000, "guest", "guest", "/"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.url);
    Result<AmqpOptions> options = ParseAmqpUrl(c.url);
    ASSERT_TRUE(options) << options.error().ToString();
    EXPECT_EQ(options->host, c.host);
    EXPECT_EQ(options->port, c.port);
    EXPECT_EQ(options->user, c.user);
    EXPECT_EQ(options->password, c.password);
    EXPECT_EQ(options->vhost, c.vhost);
    EXPECT_EQ(options->heartbeat, AmqpOptions::kDefaultHeartbeat);
    EXPECT_EQ(options->connect_timeout, std::chrono::seconds(5));
    EXPECT_EQ(options->reconnect_initial_backoff, std::chrono::milliseconds(200));
    EXPECT_EQ(options->reconnect_max_backoff, std::chrono::seconds(10));
  }
}

TEST(AmqpUrlTest, RefusesBadUrls) {
  for (const char* url :
       {"http://h", "amqps://h", "amqp://h:0", "amqp://h:65536", "amqp://h:x",
        "amqp://h:", "amqp://h/%zz", "amqp://h/%2", "amqp://h/?heartbeat=5", "amqp://[::1", ""}) {
    SCOPED_TRACE(url);
    EXPECT_FALSE(ParseAmqpUrl(url));
  }
}

class AmqpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new RabbitMqServer(testing_support::ScratchRoot() + "/rabbitmq");
    std::string error = server_->Start();
    ASSERT_EQ(error, "");
    std::printf("RabbitMQ booted in %lld ms on port %d\n",
                static_cast<long long>(server_->last_boot_time().count()), server_->amqp_port());
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    if (!server_->running()) {
      ASSERT_EQ(server_->Start(), "");
    }
  }

  static AmqpOptions Options() {
    AmqpOptions options = *ParseAmqpUrl(server_->url());
    options.reconnect_initial_backoff = 100ms;
    options.reconnect_max_backoff = 1s;
    return options;
  }
  static Topology OneQueue(const std::string& name, std::optional<uint8_t> max_priority = {}) {
    Topology topology;
    QueueSpec dead;
    dead.name = name + ".dead";
    QueueSpec work;
    work.name = name;
    work.max_priority = max_priority;
    work.dead_letter_exchange = "";
    work.dead_letter_routing_key = dead.name;
    topology.queues = {dead, work};
    return topology;
  }

  static RabbitMqServer* server_;
};
RabbitMqServer* AmqpTest::server_ = nullptr;

TEST_F(AmqpTest, PublishConfirmedThenConsumedWithPropertiesAndHeaders) {
  const std::string queue = QueueName();
  Topology topology = OneQueue(queue, 10);
  ExchangeSpec exchange;
  exchange.name = "celery.test";
  topology.exchanges.push_back(exchange);
  topology.bindings.push_back({.queue = queue, .exchange = "celery.test", .routing_key = "celery"});
  AmqpConnection connection;
  ASSERT_TRUE(connection.Start(Options(), topology));
  EXPECT_TRUE(connection.connected());

  Message sent = Msg(std::string("[[\"doc\"], {\"dpi\": 200}, {}]\0bin", 31), 7, CeleryHeaders());
  sent.content_type = "application/json";
  sent.content_encoding = "utf-8";
  sent.correlation_id = "7d3a-task";
  sent.reply_to = "reply.q";
  sent.message_id = "m-1";
  Status published = connection.Publish("celery.test", "celery", sent);
  ASSERT_TRUE(published) << published.error().ToString();
  EXPECT_EQ(connection.counters().published, 1u);

  DeliveryQueue deliveries;
  ASSERT_TRUE(connection.Consume(queue, 4, deliveries.Callback()));
  std::optional<Delivery> got = deliveries.Pop();
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->redelivered);
  EXPECT_EQ(got->exchange, "celery.test");
  EXPECT_EQ(got->routing_key, "celery");
  EXPECT_EQ(got->message.body, sent.body);
  EXPECT_EQ(got->message.content_type, "application/json");
  EXPECT_EQ(got->message.content_encoding, "utf-8");
  EXPECT_EQ(got->message.correlation_id, "7d3a-task");
  EXPECT_EQ(got->message.reply_to, "reply.q");
  EXPECT_EQ(got->message.message_id, "m-1");
  EXPECT_EQ(got->message.priority, std::optional<uint8_t>(7));
  EXPECT_EQ(got->message.delivery_mode, kPersistentDelivery);
  EXPECT_EQ(got->message.headers, sent.headers);
  ASSERT_NE(FindField(got->message.headers, "task"), nullptr);
  EXPECT_EQ(*FindField(got->message.headers, "task")->string(), "run_mineru_inference");

  ASSERT_TRUE(connection.Ack(got->tag));
  // A second ack of the same delivery would be a channel error; it is refused, never sent.
  Status again = connection.Ack(got->tag);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  // ...and the channel still works.
  ASSERT_TRUE(connection.Publish("", queue, Msg("second")));
  got = deliveries.Pop();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->message.body, "second");
  EXPECT_TRUE(connection.Ack(got->tag));
  EXPECT_EQ(connection.counters().reconnects, 0u);
}

TEST_F(AmqpTest, PrefetchHoldsTheSecondMessageUntilTheFirstIsAcked) {
  const std::string queue = QueueName();
  AmqpConnection connection;
  ASSERT_TRUE(connection.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(connection.Publish("", queue, Msg("one")));
  ASSERT_TRUE(connection.Publish("", queue, Msg("two")));
  DeliveryQueue deliveries;
  ASSERT_TRUE(connection.Consume(queue, 1, deliveries.Callback()));
  std::optional<Delivery> first = deliveries.Pop();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->message.body, "one");
  // With one unacked delivery, the broker must not send the second however long we wait.
  EXPECT_FALSE(deliveries.Pop(1500ms));
  ASSERT_TRUE(connection.Ack(first->tag));
  std::optional<Delivery> second = deliveries.Pop();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->message.body, "two");
  EXPECT_TRUE(connection.Ack(second->tag));
}

TEST_F(AmqpTest, NackWithRequeueIsRedelivered) {
  const std::string queue = QueueName();
  AmqpConnection connection;
  ASSERT_TRUE(connection.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(connection.Publish("", queue, Msg("retry me")));
  DeliveryQueue deliveries;
  ASSERT_TRUE(connection.Consume(queue, 1, deliveries.Callback()));
  std::optional<Delivery> first = deliveries.Pop();
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->redelivered);
  ASSERT_TRUE(connection.Nack(first->tag, /*requeue=*/true));
  std::optional<Delivery> again = deliveries.Pop();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->redelivered);
  EXPECT_EQ(again->message.body, "retry me");
  EXPECT_EQ(connection.counters().redeliveries, 1u);
  EXPECT_TRUE(connection.Ack(again->tag));
}

TEST_F(AmqpTest, RejectWithoutRequeueDeadLettersWithHeaders) {
  const std::string queue = QueueName();
  AmqpConnection connection;
  ASSERT_TRUE(connection.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(connection.Publish("", queue, Msg("poison", {}, CeleryHeaders())));
  DeliveryQueue work, dead;
  ASSERT_TRUE(connection.Consume(queue, 1, work.Callback()));
  std::optional<Delivery> got = work.Pop();
  ASSERT_TRUE(got);
  ASSERT_TRUE(connection.Reject(got->tag, /*requeue=*/false));
  ASSERT_TRUE(connection.Consume(queue + ".dead", 1, dead.Callback()));
  std::optional<Delivery> dlq = dead.Pop();
  ASSERT_TRUE(dlq);
  EXPECT_EQ(dlq->message.body, "poison");
  for (const AmqpField& field : CeleryHeaders()) {
    const AmqpValue* value = FindField(dlq->message.headers, field.key);
    ASSERT_NE(value, nullptr) << field.key;
    EXPECT_EQ(*value, field.value) << field.key;
  }
  // RabbitMQ records why: x-death[0].reason == "rejected".
  const AmqpValue* death = FindField(dlq->message.headers, "x-death");
  ASSERT_TRUE(death && death->list() && !death->list()->empty());
  const AmqpTable* first = (*death->list())[0].table();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(*FindField(*first, "reason")->string(), "rejected");
  EXPECT_TRUE(connection.Ack(dlq->tag));
  EXPECT_FALSE(work.Pop(500ms));  // not requeued
}

TEST_F(AmqpTest, PriorityQueueDeliversHighestFirst) {
  const std::string queue = QueueName();
  AmqpConnection connection;
  ASSERT_TRUE(connection.Start(Options(), OneQueue(queue, 10)));
  for (int priority : {1, 5, 9, 0}) {
    ASSERT_TRUE(connection.Publish("", queue,
                                   Msg(std::to_string(priority), static_cast<uint8_t>(priority))));
  }
  DeliveryQueue deliveries;
  ASSERT_TRUE(connection.Consume(queue, 1, deliveries.Callback()));
  for (const char* expected : {"9", "5", "1", "0"}) {
    std::optional<Delivery> got = deliveries.Pop();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->message.body, expected);
    ASSERT_TRUE(connection.Ack(got->tag));
  }
}

TEST_F(AmqpTest, RedeclareWithOtherArgumentsFailsClearly) {
  const std::string queue = QueueName();
  AmqpConnection first;
  ASSERT_TRUE(first.Start(Options(), OneQueue(queue, 5)));
  AmqpConnection second;
  Status status = second.Start(Options(), OneQueue(queue, 10));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message.find("PRECONDITION_FAILED"), std::string::npos)
      << status.error().message;
  EXPECT_FALSE(second.connected());
}

TEST_F(AmqpTest, UnackedDeliveryGoesToAnotherConnectionWhenItsConsumerCloses) {
  const std::string queue = QueueName();
  AmqpConnection publisher, crashed, survivor;
  ASSERT_TRUE(publisher.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(publisher.Publish("", queue, Msg("job")));
  DeliveryQueue lost, kept;
  ASSERT_TRUE(crashed.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(crashed.Consume(queue, 1, lost.Callback()));
  std::optional<Delivery> taken = lost.Pop();
  ASSERT_TRUE(taken);
  ASSERT_TRUE(survivor.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(survivor.Consume(queue, 1, kept.Callback()));
  crashed.Close();  // never acked
  std::optional<Delivery> again = kept.Pop();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->message.body, "job");
  EXPECT_TRUE(again->redelivered);
  EXPECT_TRUE(survivor.Ack(again->tag));
  // The closed connection's tag is refused, not sent anywhere.
  EXPECT_FALSE(crashed.Ack(taken->tag));
}

TEST_F(AmqpTest, HeartbeatsContinueWhileAJobSleepsLongerThanTwoHeartbeats) {
  const std::string queue = QueueName();
  AmqpOptions options = Options();
  options.heartbeat = 2s;
  AmqpConnection connection;
  ASSERT_TRUE(connection.Start(options, OneQueue(queue)));
  ASSERT_TRUE(connection.Publish("", queue, Msg("long job")));
  DeliveryQueue deliveries;
  ASSERT_TRUE(connection.Consume(queue, 1, deliveries.Callback()));
  std::optional<Delivery> got = deliveries.Pop();
  ASSERT_TRUE(got);
  // The job runs on its own thread for 3 heartbeat intervals; the broker drops a connection
  // after two missed heartbeats, so only the I/O thread's heartbeats keep it alive.
  Status acked = Fail(ErrorCode::kInternal, "job thread did not run");
  std::thread job([&] {
    std::this_thread::sleep_for(6s);
    acked = connection.Ack(got->tag);
  });
  job.join();
  EXPECT_TRUE(acked) << acked.error().ToString();
  EXPECT_TRUE(connection.connected());
  EXPECT_EQ(connection.counters().reconnects, 0u) << connection.last_error();
  EXPECT_FALSE(deliveries.Pop(500ms));  // acked, so not redelivered
}

AmqpTable Nested(int depth) {
  AmqpTable table = {{"leaf", 1}};
  for (int level = 1; level < depth; ++level) table = {{"n", AmqpValue(std::move(table))}};
  return table;
}

TEST_F(AmqpTest, LimitsOnBodySizeAndHeaderDepth) {
  const std::string queue = QueueName();
  AmqpOptions options = Options();
  options.max_body_bytes = 1024;
  AmqpConnection connection;
  ASSERT_TRUE(connection.Start(options, OneQueue(queue)));
  ASSERT_TRUE(connection.Publish("", queue, Msg(std::string(1024, 'a'))));
  ASSERT_TRUE(connection.Publish("", queue, Msg(std::string(1025, 'b'))));
  ASSERT_TRUE(connection.Publish("", queue, Msg("deep", {}, Nested(kMaxAmqpFieldDepth))));
  Status too_deep = connection.Publish("", queue, Msg("", {}, Nested(kMaxAmqpFieldDepth + 1)));
  ASSERT_FALSE(too_deep);
  EXPECT_EQ(too_deep.error().code, ErrorCode::kInvalidArgument);

  DeliveryQueue deliveries, dead;
  ASSERT_TRUE(connection.Consume(queue, 1, deliveries.Callback()));
  std::optional<Delivery> at_limit = deliveries.Pop();
  ASSERT_TRUE(at_limit);
  EXPECT_EQ(at_limit->message.body.size(), 1024u);
  ASSERT_TRUE(connection.Ack(at_limit->tag));
  std::optional<Delivery> deep = deliveries.Pop();  // the oversized one was skipped
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->message.body, "deep");
  EXPECT_EQ(deep->message.headers, Nested(kMaxAmqpFieldDepth));
  ASSERT_TRUE(connection.Ack(deep->tag));
  EXPECT_EQ(connection.counters().oversized_rejected, 1u);
  // Dead-lettered, read back by a connection with the default limit.
  AmqpConnection reader;
  ASSERT_TRUE(reader.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(reader.Consume(queue + ".dead", 1, dead.Callback()));
  std::optional<Delivery> dlq = dead.Pop();
  ASSERT_TRUE(dlq);
  EXPECT_EQ(dlq->message.body, std::string(1025, 'b'));
  EXPECT_TRUE(reader.Ack(dlq->tag));
}

TEST_F(AmqpTest, BrokerRestartLosesNoConfirmedMessage) {
  const std::string queue = QueueName();
  AmqpConnection publisher, consumer;
  ASSERT_TRUE(publisher.Start(Options(), OneQueue(queue)));
  ASSERT_TRUE(consumer.Start(Options(), OneQueue(queue)));
  DeliveryQueue deliveries;
  ASSERT_TRUE(consumer.Consume(queue, 1, deliveries.Callback()));
  std::set<std::string> confirmed;
  for (int i = 0; i < 5; ++i) {
    std::string body = "before-" + std::to_string(i);
    ASSERT_TRUE(publisher.Publish("", queue, Msg(body)));
    confirmed.insert(body);
  }
  std::optional<Delivery> held = deliveries.Pop();  // in progress when the broker goes away
  ASSERT_TRUE(held);

  ASSERT_EQ(server_->Stop(), "");
  ASSERT_TRUE(WaitUntil([&] { return !publisher.connected() && !consumer.connected(); }));
  // Documented behaviour: during the outage Publish fails at once; nothing is buffered.
  Status during = publisher.Publish("", queue, Msg("during"));
  ASSERT_FALSE(during);
  EXPECT_EQ(during.error().code, ErrorCode::kUnavailable);

  ASSERT_EQ(server_->Start(), "");
  ASSERT_TRUE(WaitUntil([&] { return publisher.connected() && consumer.connected(); }))
      << publisher.last_error() << " / " << consumer.last_error();
  EXPECT_GE(publisher.counters().reconnects, 1u);
  EXPECT_GE(consumer.counters().reconnects, 1u);
  // The delivery from before the restart belongs to a dead connection: dropped, not sent.
  Status stale = consumer.Ack(held->tag);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(consumer.counters().stale_tags_dropped, 1u);

  for (int i = 0; i < 5; ++i) {
    std::string body = "after-" + std::to_string(i);
    Status status = publisher.Publish("", queue, Msg(body));
    ASSERT_TRUE(status) << status.error().ToString();
    confirmed.insert(body);
  }
  // The consumer was resumed on the new connection (queue redeclared): everything confirmed
  // arrives, the held message again included.
  std::set<std::string> received;
  while (received != confirmed) {
    std::optional<Delivery> got = deliveries.Pop();
    ASSERT_TRUE(got) << received.size() << " of " << confirmed.size() << " received";
    if (got->tag.connection != held->tag.connection) {
      received.insert(got->message.body);
      ASSERT_TRUE(consumer.Ack(got->tag));
    }
  }
}

}  // namespace
}  // namespace mineru::jobs
