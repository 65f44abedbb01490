// SPDX-License-Identifier: Apache-2.0
// Celery's remote control codec (celery/celery_control.h): bodies exactly as python3-celery 5.2.6
// and kombu 5.2 publish them for app.control.revoke and AsyncResult.revoke, addressing
// (destination, glob patterns), every malformed input and limit, the declarations kombu makes,
// and the bounded, expiring set of revoked ids. The live path (a Python client revoking a task
// on `mineru-cpp worker`) is tests/apps/worker_cli_test.cc.
#include "celery/celery_control.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "celery/celery_protocol.h"

namespace mineru::jobs {
namespace {

// Captured from Celery 5.2.6 (kombu's memory transport, same serializer as AMQP):
//   app.control.revoke("abc-1", terminate=True)
constexpr const char* kCeleryRevokeTerminate =
    R"({"method": "revoke", "arguments": {"task_id": "abc-1", "terminate": true, )"
    R"("signal": "SIGTERM"}, "destination": null, "pattern": null, "matcher": null})";
//   app.control.revoke(["a", "b"], destination=["mineru@x"])
constexpr const char* kCeleryRevokeListToOne =
    R"({"method": "revoke", "arguments": {"task_id": ["a", "b"], "terminate": false, )"
    R"("signal": "SIGTERM"}, "destination": ["mineru@x"], "pattern": null, "matcher": null})";
//   AsyncResult("xyz").revoke(terminate=True)
constexpr const char* kAsyncResultRevoke =
    R"({"method": "revoke", "arguments": {"task_id": "xyz", "terminate": true, "signal": null}, )"
    R"("destination": null, "pattern": null, "matcher": null})";

Message Json(std::string body) {
  Message m;
  m.body = std::move(body);
  m.content_type = "application/json";
  m.content_encoding = "utf-8";
  return m;
}

TEST(CeleryControl, DecodesWhatCeleryPublishes) {
  auto terminate = DecodeCeleryControl(Json(kCeleryRevokeTerminate));
  ASSERT_TRUE(terminate) << terminate.error().message;
  EXPECT_EQ(terminate->method, "revoke");
  ASSERT_TRUE(terminate->revoke);
  EXPECT_EQ(terminate->revoke->task_ids, std::vector<std::string>{"abc-1"});
  EXPECT_TRUE(terminate->revoke->terminate);
  EXPECT_EQ(terminate->revoke->signal, "SIGTERM");
  EXPECT_FALSE(terminate->destination);
  EXPECT_FALSE(terminate->wants_reply);
  EXPECT_TRUE(AddressedTo(*terminate, "mineru@anyhost"));

  auto list = DecodeCeleryControl(Json(kCeleryRevokeListToOne));
  ASSERT_TRUE(list) << list.error().message;
  EXPECT_EQ(list->revoke->task_ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(list->revoke->terminate);
  EXPECT_TRUE(AddressedTo(*list, "mineru@x"));
  EXPECT_FALSE(AddressedTo(*list, "mineru@y"));  // another worker's revoke

  auto async = DecodeCeleryControl(Json(kAsyncResultRevoke));
  ASSERT_TRUE(async) << async.error().message;
  EXPECT_EQ(async->revoke->task_ids, std::vector<std::string>{"xyz"});
  EXPECT_TRUE(async->revoke->terminate);
  EXPECT_EQ(async->revoke->signal, "");
}

TEST(CeleryControl, EncodesTheBodyCeleryWrites) {
  const Message one = EncodeCeleryRevoke({"abc-1"}, /*terminate=*/true);
  EXPECT_EQ(one.body, kCeleryRevokeTerminate);
  EXPECT_EQ(one.content_type, "application/json");
  EXPECT_EQ(one.content_encoding, "utf-8");
  EXPECT_EQ(EncodeCeleryRevoke({"a", "b"}, false, "SIGTERM", {"mineru@x"}).body,
            kCeleryRevokeListToOne);
  EXPECT_EQ(EncodeCeleryRevoke({"xyz"}, true, "").body, kAsyncResultRevoke);
  // And back.
  auto decoded = DecodeCeleryControl(EncodeCeleryRevoke({"q\"uote", "\xc3\xa9"}, true, "SIGKILL"));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->revoke->task_ids, (std::vector<std::string>{"q\"uote", "\xc3\xa9"}));
  EXPECT_EQ(decoded->revoke->signal, "SIGKILL");
}

TEST(CeleryControl, OtherMethodsDecodeAndAreNotRevokes) {
  auto ping = DecodeCeleryControl(
      Json(R"({"method": "ping", "arguments": {}, "destination": null, "pattern": null, )"
           R"("matcher": null, "ticket": "t-1", "reply_to": {"exchange": "reply.celery.pidbox", )"
           R"("routing_key": "k"}})"));
  ASSERT_TRUE(ping) << ping.error().message;
  EXPECT_EQ(ping->method, "ping");
  EXPECT_FALSE(ping->revoke);
  EXPECT_TRUE(ping->wants_reply);
  // Arguments of other methods are not looked at (shutdown takes none, rate_limit others).
  auto odd = DecodeCeleryControl(Json(R"({"method": "rate_limit", "arguments": {"task_id": 5}})"));
  ASSERT_TRUE(odd) << odd.error().message;
  EXPECT_FALSE(odd->revoke);
  // A revoke without ids or arguments revokes nothing (Celery's maybe_list(None)).
  auto empty = DecodeCeleryControl(Json(R"({"method": "revoke"})"));
  ASSERT_TRUE(empty) << empty.error().message;
  ASSERT_TRUE(empty->revoke);
  EXPECT_TRUE(empty->revoke->task_ids.empty());
  EXPECT_FALSE(empty->revoke->terminate);
}

TEST(CeleryControl, AddressingFollowsKombu) {
  CeleryControlCommand c;
  c.method = "revoke";
  EXPECT_TRUE(AddressedTo(c, "mineru@a"));  // null destination: everyone
  c.destination = std::vector<std::string>{};
  EXPECT_TRUE(AddressedTo(c, "mineru@a"));  // an empty list is falsy in kombu: everyone
  c.destination = std::vector<std::string>{"mineru@b", "celery@a"};
  EXPECT_FALSE(AddressedTo(c, "mineru@a"));
  EXPECT_TRUE(AddressedTo(c, "celery@a"));
  c.destination.reset();
  c.pattern = "mineru@gpu-*";
  c.matcher = "glob";
  EXPECT_TRUE(AddressedTo(c, "mineru@gpu-7"));
  EXPECT_FALSE(AddressedTo(c, "mineru@cpu-1"));
  c.matcher = "pcre";  // unsupported: never acted on, so never revokes by mistake
  EXPECT_FALSE(AddressedTo(c, "mineru@gpu-7"));
  c.matcher.clear();  // a pattern without a matcher is ignored, as in kombu
  EXPECT_TRUE(AddressedTo(c, "mineru@cpu-1"));
  // A destination wins over a pattern.
  c.destination = std::vector<std::string>{"mineru@cpu-1"};
  c.matcher = "glob";
  EXPECT_TRUE(AddressedTo(c, "mineru@cpu-1"));
  EXPECT_FALSE(AddressedTo(c, "mineru@gpu-7"));
}

TEST(CeleryControl, MalformedMessagesAreErrorsThatSayWhy) {
  struct Case {
    std::string body;
    std::string expected;  // in the message
  };
  const std::vector<Case> cases = {
      {"", "celery control message"},
      {"not json", "celery control message"},
      {"[1, 2]", "must be an object"},
      {R"({"arguments": {}})", "no 'method'"},
      {R"({"method": 7})", "method must be a string"},
      {R"({"method": "revoke", "arguments": [1]})", "arguments must be an object"},
      {R"({"method": "revoke", "arguments": {"task_id": 5}})", "task_id must be a string or"},
      {R"({"method": "revoke", "arguments": {"task_id": ["a", 5]}})", "task_id must be a string"},
      {R"({"method": "revoke", "arguments": {"task_id": "a", "terminate": "yes"}})",
       "terminate must be true or false"},
      {R"({"method": "revoke", "arguments": {"task_id": "a", "signal": 15}})",
       "signal must be a string"},
      {R"({"method": "revoke", "destination": "mineru@a"})", "destination must be null or a list"},
      {R"({"method": "revoke", "destination": [1]})", "destination must be a string"},
      {R"({"method": "revoke", "pattern": ["x"], "matcher": "glob"})", "pattern must be a string"},
  };
  for (const Case& c : cases) {
    auto decoded = DecodeCeleryControl(Json(c.body));
    ASSERT_FALSE(decoded) << c.body;
    EXPECT_EQ(decoded.error().code, ErrorCode::kCorrupt) << c.body;
    EXPECT_NE(decoded.error().message.find(c.expected), std::string::npos)
        << c.body << " -> " << decoded.error().message;
  }
  Message pickle = Json(R"({"method": "revoke"})");
  pickle.content_type = "application/x-python-serialize";
  EXPECT_FALSE(DecodeCeleryControl(pickle));
  Message zipped = Json(R"({"method": "revoke"})");
  zipped.content_encoding = "binary";
  EXPECT_FALSE(DecodeCeleryControl(zipped));
  Message untyped = Json(R"({"method": "revoke"})");
  untyped.content_type.clear();  // read as JSON, like kombu's default
  untyped.content_encoding.clear();
  EXPECT_TRUE(DecodeCeleryControl(untyped));
}

TEST(CeleryControl, LimitsHoldAtTheirBoundaries) {
  const std::string longest(kMaxControlFieldBytes, 'i');
  auto at = DecodeCeleryControl(EncodeCeleryRevoke({longest}, true));
  ASSERT_TRUE(at) << at.error().message;
  EXPECT_EQ(at->revoke->task_ids[0].size(), kMaxControlFieldBytes);
  auto over = DecodeCeleryControl(EncodeCeleryRevoke({longest + "i"}, true));
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("kMaxControlFieldBytes"), std::string::npos);

  std::vector<std::string> ids(kMaxRevokeIdsPerMessage, "x");
  auto most = DecodeCeleryControl(EncodeCeleryRevoke(ids, false));
  ASSERT_TRUE(most) << most.error().message;
  EXPECT_EQ(most->revoke->task_ids.size(), kMaxRevokeIdsPerMessage);
  ids.push_back("x");
  auto too_many = DecodeCeleryControl(EncodeCeleryRevoke(ids, false));
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("kMaxRevokeIdsPerMessage"), std::string::npos);

  Message big = Json(std::string(kMaxControlBodyBytes + 1, ' '));
  auto too_big = DecodeCeleryControl(big);
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().message.find("kMaxControlBodyBytes"), std::string::npos);
  // The JSON depth limit counts every level, the innermost value included (ParseJson): with the
  // body object and arguments around it, task_id may hold kMaxControlJsonDepth - 3 lists.
  const auto nested = [](int lists) {
    std::string body = R"({"method": "revoke", "arguments": {"task_id": )";
    body += std::string(lists, '[') + R"("x")" + std::string(lists, ']') + "}}";
    return Json(body);
  };
  auto deepest = DecodeCeleryControl(nested(kMaxControlJsonDepth - 3));
  ASSERT_FALSE(deepest);  // parsed, then refused: ids are not lists of lists
  EXPECT_NE(deepest.error().message.find("must be a string"), std::string::npos)
      << deepest.error().message;
  auto refused = DecodeCeleryControl(nested(kMaxControlJsonDepth - 2));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("deeper than the limit"), std::string::npos)
      << refused.error().message;
}

TEST(CeleryControl, DeclaresWhatKombuDeclares) {
  const ExchangeSpec exchange = CeleryControlExchangeSpec();
  EXPECT_EQ(exchange.name, "celery.pidbox");
  EXPECT_EQ(exchange.type, "fanout");
  EXPECT_FALSE(exchange.durable);
  EXPECT_FALSE(exchange.auto_delete);
  const QueueSpec queue = CeleryPidboxQueueSpec("mineru@host-1");
  EXPECT_EQ(queue.name, "mineru@host-1.celery.pidbox");
  EXPECT_FALSE(queue.durable);
  EXPECT_TRUE(queue.auto_delete);
  EXPECT_FALSE(queue.max_priority);
  EXPECT_FALSE(queue.dead_letter_exchange);
  ASSERT_NE(FindField(queue.arguments, "x-expires"), nullptr);
  EXPECT_EQ(*FindField(queue.arguments, "x-expires"), AmqpValue(int64_t{10000}));
  EXPECT_EQ(*FindField(queue.arguments, "x-message-ttl"), AmqpValue(int64_t{300000}));
  const BindingSpec binding = CeleryPidboxBinding("mineru@host-1");
  EXPECT_EQ(binding.queue, queue.name);
  EXPECT_EQ(binding.exchange, "celery.pidbox");
  EXPECT_EQ(binding.routing_key, "");
  // "mineru-<pid>@<host>": one mailbox per worker process, even on one machine.
  const std::string pid_prefix = "mineru-" + std::to_string(getpid()) + "@";
  EXPECT_EQ(DefaultCeleryHostname().rfind(pid_prefix, 0), 0u) << DefaultCeleryHostname();
  EXPECT_GT(DefaultCeleryHostname().size(), pid_prefix.size());
}

TEST(CeleryRevokedIds, RemembersBoundedAndExpires) {
  using Clock = CeleryRevokedIds::Clock;
  const Clock::time_point t0{};
  CeleryRevokedIds ids(/*max_ids=*/3, std::chrono::seconds(10));
  ids.Add("a", t0);
  ids.Add("b", t0 + std::chrono::seconds(1));
  ids.Add("c", t0 + std::chrono::seconds(2));
  EXPECT_TRUE(ids.Contains("a", t0 + std::chrono::seconds(2)));
  EXPECT_FALSE(ids.Contains("z", t0));
  ids.Add("d", t0 + std::chrono::seconds(3));  // over the bound: the oldest goes
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_FALSE(ids.Contains("a", t0 + std::chrono::seconds(3)));
  EXPECT_TRUE(ids.Contains("b", t0 + std::chrono::seconds(3)));
  // Expiry: 10 s after its (last) revoke an id is forgotten.
  EXPECT_TRUE(ids.Contains("b", t0 + std::chrono::milliseconds(10999)));
  EXPECT_FALSE(ids.Contains("b", t0 + std::chrono::seconds(11)));
  // Revoking again renews it and makes it the newest.
  ids.Add("b", t0 + std::chrono::seconds(5));
  ids.Add("e", t0 + std::chrono::seconds(6));  // evicts c, the oldest now
  EXPECT_FALSE(ids.Contains("c", t0 + std::chrono::seconds(6)));
  EXPECT_TRUE(ids.Contains("b", t0 + std::chrono::seconds(14)));
  // Expired entries are dropped on the next Add.
  ids.Add("f", t0 + std::chrono::seconds(100));
  EXPECT_EQ(ids.size(), 1u);
  // The same ids revoked over and over keep memory bounded.
  CeleryRevokedIds churn(2, std::chrono::seconds(3600));
  for (int i = 0; i < 100'000; ++i) churn.Add(i % 2 ? "x" : "y", t0 + std::chrono::microseconds(i));
  EXPECT_EQ(churn.size(), 2u);
  EXPECT_TRUE(churn.Contains("x", t0 + std::chrono::seconds(1)));
}

TEST(CeleryControl, DenseBodiesAtTheBodyLimitEndInOnePass) {
  // Issue 14: control messages used the quadratic depth-limited parse; a body of
  // kMaxControlBodyBytes of `{}` now stops at a JSON limit (here the tree's bytes per byte of
  // text) in one pass.
  std::string body = "[";
  while (body.size() + 4 <= kMaxControlBodyBytes) body += "{},";
  body.back() = ']';
  auto refused = DecodeCeleryControl(Json(body));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("JsonLimits::max_dom_bytes_per_byte"), std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace mineru::jobs
