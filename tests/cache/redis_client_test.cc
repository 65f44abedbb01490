// SPDX-License-Identifier: Apache-2.0
// RedisClient against a real redis-server: URL parsing, binary-safe commands and every reply
// type, pipelines (SETEX + PUBLISH), AUTH and SELECT, a server stopped (fail fast while backing
// off, reconnect after the restart) and a server that stops answering (command timeout).
#include "cache/redis_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "../support/redis_server.h"

namespace mineru::jobs {
namespace {

using std::chrono::milliseconds;
using testing_support::RedisServer;

RedisOptions Local(const RedisServer& server) {
  auto options = ParseRedisUrl(server.Url());
  EXPECT_TRUE(options) << options.error().ToString();
  return options.value_or(RedisOptions{});
}

// Retries PING until it succeeds (30 s at most, then the test fails): used after a restart,
// where the client must come back on its own once its backoff has passed.
bool EventuallyPings(RedisClient& client) {
  for (int i = 0; i < 3000; ++i) {
    auto reply = client.Command({"PING"});
    if (reply) return reply->str == "PONG";
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

TEST(RedisUrlTest, ParsesEveryPartAndRefusesTheRest) {
  struct Good {
    std::string_view url;
    std::string host;
    int port;
    std::string user, password;
    int db;
  };
  const Good good[] = {
      {"redis://localhost", "localhost", 6379, "", "", 0},
      {"redis://127.0.0.1:6380", "127.0.0.1", 6380, "", "", 0},
      {"redis://h:1/0", "h", 1, "", "", 0},
      {"redis://h:65535/15", "h", 65535, "", "", 15},
      {"redis://h/", "h", 6379, "", "", 0},
      {"redis://:secret@h:7000/2", "h", 7000, "", "secret", 2},
      {"redis://alice:secret@h", "h", 6379, "alice", "secret", 0},
      {"redis://:p%40ss%3Aw%2Fd@h", "h", 6379, "", "p@ss:w/d", 0},
      {"redis://:a@b@h", "h", 6379, "", "a@b", 0},
      {"redis://[::1]:6390/1", "::1", 6390, "", "", 1},
      {"redis://[::1]", "::1", 6379, "", "", 0},
  };
  for (const Good& g : good) {
    SCOPED_TRACE(std::string(g.url));
    auto o = ParseRedisUrl(g.url);
    ASSERT_TRUE(o) << o.error().ToString();
    EXPECT_EQ(o->host, g.host);
    EXPECT_EQ(o->port, g.port);
    EXPECT_EQ(o->user, g.user);
    EXPECT_EQ(o->password, g.password);
    EXPECT_EQ(o->db, g.db);
    EXPECT_EQ(o->connect_timeout, RedisOptions::kDefaultConnectTimeout);
    EXPECT_EQ(o->command_timeout, RedisOptions::kDefaultCommandTimeout);
  }
  struct Bad {
    std::string_view url;
    std::string_view reason;  // a part of the message
  };
  const Bad bad[] = {
      {"", "not a Redis URL"},
      {"localhost:6379", "not a Redis URL"},
      {"http://h", "not a Redis URL"},
      {"rediss://h", "TLS"},
      {"redis://", "no host"},
      {"redis://:6379", "no host"},
      {"redis://h:", "port is empty"},
      {"redis://h:0", "1-65535"},
      {"redis://h:65536", "1-65535"},
      {"redis://h:-1", "1-65535"},
      {"redis://h:63x", "1-65535"},
      {"redis://h/x", "database"},
      {"redis://h/-1", "database"},
      {"redis://h/1/2", "database"},
      {"redis://h?db=1", "query"},
      {"redis://secret@h", "':password'"},
      {"redis://alice:@h", "without a password"},
      {"redis://:%4@h", "%-escape"},
      {"redis://[::1", "']'"},
      {"redis://[::1]x", "after the Redis host"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(std::string(b.url));
    auto o = ParseRedisUrl(b.url);
    ASSERT_FALSE(o);
    EXPECT_EQ(o.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(o.error().message.find(b.reason), std::string::npos) << o.error().message;
  }
  // The password never appears when the options are described.
  EXPECT_EQ(ParseRedisUrl("redis://:secret@h:7000/2")->Describe(), "redis://h:7000/2");
}

TEST(RedisClientTest, CommandsAreBinarySafeAndEveryReplyTypeComesBack) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisClient client(Local(server));

  auto pong = client.Command({"PING"});
  ASSERT_TRUE(pong) << pong.error().ToString();
  EXPECT_EQ(pong->type, RedisReply::Type::kStatus);
  EXPECT_EQ(pong->str, "PONG");

  std::string key("k\0ey\r\n", 6);
  std::string value;
  for (int i = 0; i < 256; ++i) value += static_cast<char>(i);
  value += "\r\n$3\r\n*1\r\n";  // protocol look-alikes inside a value
  ASSERT_TRUE(client.Command({"SET", key, value}));
  auto got = client.Command({"GET", key});
  ASSERT_TRUE(got);
  EXPECT_EQ(got->type, RedisReply::Type::kString);
  EXPECT_EQ(got->str, value);
  auto empty = client.Command({"SET", "empty", ""});
  ASSERT_TRUE(empty);
  EXPECT_EQ(client.Command({"GET", "empty"})->str, "");
  EXPECT_EQ(client.Command({"GET", "empty"})->type, RedisReply::Type::kString);

  auto missing = client.Command({"GET", "missing"});
  ASSERT_TRUE(missing);
  EXPECT_TRUE(missing->is_nil());

  auto n = client.Command({"INCRBY", "counter", "41"});
  ASSERT_TRUE(n);
  EXPECT_EQ(n->type, RedisReply::Type::kInteger);
  EXPECT_EQ(n->integer, 41);

  auto many = client.Command({"MGET", key, "missing", "counter"});
  ASSERT_TRUE(many);
  ASSERT_EQ(many->type, RedisReply::Type::kArray);
  ASSERT_EQ(many->elements.size(), 3u);
  EXPECT_EQ(many->elements[0].str, value);
  EXPECT_TRUE(many->elements[1].is_nil());
  EXPECT_EQ(many->elements[2].str, "41");

  // An error reply is kInternal with Redis' message; the connection stays usable.
  auto wrong = client.Command({"LPUSH", "counter", "x"});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, ErrorCode::kInternal);
  EXPECT_NE(wrong.error().message.find("WRONGTYPE"), std::string::npos) << wrong.error().message;
  auto unknown = client.Command({"NO-SUCH-COMMAND"});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kInternal);
  EXPECT_EQ(client.Command({"GET", "counter"})->str, "41");

  auto none = client.Command({});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
}

TEST(RedisClientTest, PipelineSendsSetexAndPublishInOneRoundTrip) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisClient client(Local(server));
  RedisClient subscriber(Local(server));
  auto subscribed = subscriber.Command({"SUBSCRIBE", "results"});
  ASSERT_TRUE(subscribed) << subscribed.error().ToString();
  ASSERT_EQ(subscribed->type, RedisReply::Type::kArray);
  EXPECT_EQ(subscribed->elements[0].str, "subscribe");

  const std::string payload("{\"status\": \"SUCCESS\"}\0tail", 26);
  auto replies =
      client.Pipeline({{"SETEX", "meta-1", "60", payload}, {"PUBLISH", "results", payload}});
  ASSERT_TRUE(replies) << replies.error().ToString();
  ASSERT_EQ(replies->size(), 2u);
  EXPECT_EQ((*replies)[0].str, "OK");
  EXPECT_EQ((*replies)[1].type, RedisReply::Type::kInteger);
  EXPECT_EQ((*replies)[1].integer, 1);  // the subscriber heard it
  EXPECT_EQ(client.Command({"GET", "meta-1"})->str, payload);
  const int64_t ttl = client.Command({"TTL", "meta-1"})->integer;
  EXPECT_GE(ttl, 1);
  EXPECT_LE(ttl, 60);

  // An error in the middle: every reply is still read, so the connection stays in step.
  auto failed = client.Pipeline({{"SET", "a", "1"}, {"INCR", "meta-1"}, {"SET", "b", "2"}});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kInternal);
  EXPECT_NE(failed.error().message.find("INCR"), std::string::npos) << failed.error().message;
  auto after = client.Command({"MGET", "a", "b"});
  ASSERT_TRUE(after);
  EXPECT_EQ(after->elements[0].str, "1");
  EXPECT_EQ(after->elements[1].str, "2");
  EXPECT_TRUE(client.Pipeline({}));  // nothing to send
}

TEST(RedisClientTest, AuthAndSelectHappenOnConnect) {
  RedisServer server({"--requirepass", "s3cret"});
  ASSERT_TRUE(server.Start());

  RedisClient anonymous(Local(server));
  auto refused = anonymous.Command({"PING"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInternal);
  EXPECT_NE(refused.error().message.find("NOAUTH"), std::string::npos) << refused.error().message;

  auto wrong_options = ParseRedisUrl(server.Url("wrong"));
  ASSERT_TRUE(wrong_options);
  RedisClient wrong(*wrong_options);
  auto denied = wrong.Command({"PING"});
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(denied.error().message.find("AUTH failed"), std::string::npos)
      << denied.error().message;
  EXPECT_EQ(denied.error().message.find("wrong"), std::string::npos);  // no password in messages

  auto options = ParseRedisUrl(server.Url("s3cret") + "/3");
  ASSERT_TRUE(options);
  RedisClient db3(*options);
  ASSERT_TRUE(db3.Command({"SET", "where", "db3"}));
  auto user_options =
      ParseRedisUrl("redis://default:s3cret@127.0.0.1:" + std::to_string(server.port()) + "/0");
  ASSERT_TRUE(user_options);
  RedisClient db0(*user_options);  // AUTH with a user name (Redis 6 ACLs)
  auto in_db0 = db0.Command({"GET", "where"});
  ASSERT_TRUE(in_db0) << in_db0.error().ToString();
  EXPECT_TRUE(in_db0->is_nil());
  EXPECT_EQ(db3.Command({"GET", "where"})->str, "db3");
}

TEST(RedisClientTest, StoppedRedisFailsFastWhileBackingOffAndIsReconnectedAfterRestart) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisOptions patient = Local(server);
  patient.initial_backoff = std::chrono::hours(1);  // never retries within this test
  patient.max_backoff = std::chrono::hours(1);
  RedisOptions eager = Local(server);
  eager.initial_backoff = milliseconds(10);
  eager.max_backoff = milliseconds(20);
  RedisClient waits(patient);
  RedisClient retries(eager);
  ASSERT_TRUE(waits.Command({"PING"}));
  ASSERT_TRUE(retries.Command({"PING"}));

  server.Stop();
  auto lost = waits.Command({"PING"});  // the open connection finds the server gone
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().code, ErrorCode::kUnavailable);
  auto backing_off = waits.Command({"PING"});  // no new connection is even attempted
  ASSERT_FALSE(backing_off);
  EXPECT_EQ(backing_off.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(backing_off.error().message.find("next attempt in"), std::string::npos)
      << backing_off.error().message;
  auto refused = retries.Command({"PING"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);

  ASSERT_TRUE(server.Start());  // the same port
  EXPECT_TRUE(EventuallyPings(retries));
  ASSERT_TRUE(retries.Command({"SET", "back", "yes"}));
  auto still = waits.Command({"GET", "back"});  // still within its hour of backoff
  ASSERT_FALSE(still);
  EXPECT_NE(still.error().message.find("next attempt in"), std::string::npos)
      << still.error().message;
  RedisClient fresh(patient);  // a new client connects at once
  EXPECT_EQ(fresh.Command({"GET", "back"})->str, "yes");
}

TEST(RedisClientTest, ServerThatStopsAnsweringTimesOutAsUnavailable) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisOptions options = Local(server);
  options.command_timeout = milliseconds(200);
  options.initial_backoff = milliseconds(10);
  options.max_backoff = milliseconds(20);
  RedisClient client(options);
  ASSERT_TRUE(client.Command({"SET", "k", "v"}));

  server.Pause();
  auto timed_out = client.Command({"GET", "k"});
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(timed_out.error().message.find("no answer within 200 ms"), std::string::npos)
      << timed_out.error().message;
  server.Resume();
  ASSERT_TRUE(EventuallyPings(client));  // a new connection replaced the timed-out one
  EXPECT_EQ(client.Command({"GET", "k"})->str, "v");
}

TEST(RedisClientTest, OneClientIsSharedSafelyByThreads) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisClient client(Local(server));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&client, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string key = "t" + std::to_string(t) + ":" + std::to_string(i);
        EXPECT_TRUE(client.Command({"SET", key, key}));
        auto got = client.Command({"GET", key});
        EXPECT_TRUE(got && got->str == key);  // each reply belongs to its own command
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(client.Command({"DBSIZE"})->integer, 800);
}

}  // namespace
}  // namespace mineru::jobs
