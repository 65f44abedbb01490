// SPDX-License-Identifier: Apache-2.0
// The shared document cache against a real redis-server: values stored with SETEX under
// "mineru:doc:" and read back byte-identical, the TTL and value-cap boundaries, corrupt values
// refused; the tiered cache (memory, then Redis, promotion, per-tier reports); and task
// managers as two nodes sharing one Redis, and one carrying on while Redis is down.
#include "jobs/redis_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

#include "../pipeline/scripted_generator.h"
#include "../pipeline/simple_page_script.h"
#include "../support/redis_server.h"
#include "../support/scratch.h"
#include "jobs/document_codec.h"
#include "jobs/task_manager.h"
#include "jobs/tiered_cache.h"
#include "sample_outputs.h"
#include "wait_task.h"

namespace mineru::jobs {
namespace {

using pipeline::testing::PlainPng;
using pipeline::testing::ScriptedGenerator;
using pipeline::testing::SimplePageAnswer;
using std::chrono::milliseconds;
using testing_support::RedisServer;
using testing_support::TestDir;

DocumentOutputs Doc(std::string markdown) { return testing::SampleOutputs(std::move(markdown)); }

RedisCacheOptions CacheOptions(const RedisServer& server) {
  RedisCacheOptions o;
  auto redis = ParseRedisUrl(server.Url());
  EXPECT_TRUE(redis);
  o.redis = redis.value_or(RedisOptions{});
  return o;
}

std::unique_ptr<RedisCache> MakeCache(RedisCacheOptions options) {
  auto cache = RedisCache::Create(std::move(options));
  EXPECT_TRUE(cache) << cache.error().ToString();
  return cache ? std::move(*cache) : nullptr;
}

// Every report of a tiered cache, as "tier:hit", "tier:miss" or "tier:error".
struct Reports {
  std::mutex mutex;
  std::vector<std::string> seen;

  CacheObservers Observers() {
    return {[this](std::string_view tier, bool hit) {
              Add(std::string(tier) + (hit ? ":hit" : ":miss"));
            },
            [this](std::string_view tier, const Error&) { Add(std::string(tier) + ":error"); }};
  }
  void Add(std::string s) {
    std::lock_guard lock(mutex);
    seen.push_back(std::move(s));
  }
  std::vector<std::string> Take() {
    std::lock_guard lock(mutex);
    return std::exchange(seen, {});
  }
};

TEST(RedisCacheTest, StoredDocumentComesBackByteIdenticalUnderItsTtl) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisCacheOptions options = CacheOptions(server);
  options.ttl = std::chrono::seconds(123);
  auto cache = MakeCache(options);
  ASSERT_TRUE(cache);
  EXPECT_EQ(RedisCacheOptions{}.ttl, kDefaultRedisTtl);
  EXPECT_EQ(kDefaultRedisTtl, std::chrono::hours(2));

  auto missing = cache->Get("sha|model|opts");
  ASSERT_TRUE(missing) << missing.error().ToString();
  EXPECT_FALSE(missing->has_value());

  const DocumentOutputs doc = Doc("# Cached\n");
  ASSERT_TRUE(cache->Put("sha|model|opts", doc));
  auto found = cache->Get("sha|model|opts");
  ASSERT_TRUE(found) << found.error().ToString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(SerializeDocumentOutputs(**found), SerializeDocumentOutputs(doc));

  RedisClient raw(options.redis);
  auto ttl = raw.Command({"TTL", "mineru:doc:sha|model|opts"});
  ASSERT_TRUE(ttl);
  EXPECT_GE(ttl->integer, 1);
  EXPECT_LE(ttl->integer, 123);
  EXPECT_EQ(raw.Command({"GET", "mineru:doc:sha|model|opts"})->str, SerializeDocumentOutputs(doc));

  // TTL boundary: 1 s is the least Redis keeps; 0 is refused.
  ASSERT_TRUE(cache->Put("short", doc, std::chrono::seconds(1)));
  EXPECT_LE(raw.Command({"PTTL", "mineru:doc:short"})->integer, 1000);
  EXPECT_FALSE(cache->Put("zero", doc, std::chrono::seconds(0)));
  options.ttl = std::chrono::seconds(0);
  auto refused = RedisCache::Create(options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
}

TEST(RedisCacheTest, ValueCapIsExactInBothDirections) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const DocumentOutputs doc = Doc("# Capped\n");
  const uint64_t size = SerializeDocumentOutputs(doc).size();
  RedisCacheOptions options = CacheOptions(server);
  options.max_value_bytes = size;
  auto exact = MakeCache(options);
  options.max_value_bytes = size - 1;
  auto smaller = MakeCache(options);
  ASSERT_TRUE(exact && smaller);
  EXPECT_EQ(RedisCacheOptions{}.max_value_bytes, kDefaultMaxRedisValueBytes);

  ASSERT_TRUE(exact->Put("k", doc));  // exactly the cap: stored and read back
  auto found = exact->Get("k");
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->markdown, doc.markdown);

  auto too_big = smaller->Put("other", doc);  // one byte over: not stored
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code, ErrorCode::kResourceExhausted);
  RedisClient raw(options.redis);
  EXPECT_EQ(raw.Command({"EXISTS", "mineru:doc:other"})->integer, 0);
  auto read_big = smaller->Get("k");  // a value over the cap is refused when read
  ASSERT_FALSE(read_big);
  EXPECT_EQ(read_big.error().code, ErrorCode::kResourceExhausted);

  options.max_value_bytes = 0;
  EXPECT_FALSE(RedisCache::Create(options));
}

TEST(RedisCacheTest, CorruptOrForeignValuesAreErrorsNotDocuments) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisCacheOptions options = CacheOptions(server);
  auto cache = MakeCache(options);
  ASSERT_TRUE(cache);
  RedisClient raw(options.redis);
  const std::string encoded = SerializeDocumentOutputs(Doc("x"));
  ASSERT_TRUE(raw.Command({"SET", "mineru:doc:garbage", "not a document"}));
  ASSERT_TRUE(raw.Command({"SET", "mineru:doc:truncated", encoded.substr(0, encoded.size() - 1)}));
  std::string v2 = encoded;
  v2[4] = 2;
  ASSERT_TRUE(raw.Command({"SET", "mineru:doc:v2", v2}));
  for (const char* key : {"garbage", "truncated", "v2"}) {
    auto got = cache->Get(key);
    ASSERT_FALSE(got) << key;
    EXPECT_EQ(got.error().code, ErrorCode::kCorrupt) << key;
  }
  ASSERT_TRUE(raw.Command({"LPUSH", "mineru:doc:list", "x"}));
  auto wrong_type = cache->Get("list");
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.error().code, ErrorCode::kInternal);
}

TEST(TieredCacheTest, RedisServesWhatMemoryEvictedAndPromotesIt) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  Reports reports;
  const auto a = std::make_shared<const DocumentOutputs>(Doc("# A\n"));
  const auto b = std::make_shared<const DocumentOutputs>(Doc("# B\n"));
  // Memory holds one document: storing b evicts a.
  TieredCache cache(a->ByteSize() + 16, MakeCache(CacheOptions(server)), reports.Observers());
  ASSERT_TRUE(cache.enabled());
  EXPECT_EQ(cache.Get("key-a"), nullptr);
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"memory:miss", "redis:miss"}));
  cache.Put("key-a", a);
  cache.Put("key-b", b);
  EXPECT_EQ(cache.MemoryStats().entries, 1);

  auto from_redis = cache.Get("key-a");
  ASSERT_NE(from_redis, nullptr);
  EXPECT_EQ(SerializeDocumentOutputs(*from_redis), SerializeDocumentOutputs(*a));
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"memory:miss", "redis:hit"}));
  auto from_memory = cache.Get("key-a");  // promoted
  EXPECT_EQ(from_memory, from_redis);
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"memory:hit"}));

  TieredCache redis_only(0, MakeCache(CacheOptions(server)), reports.Observers());
  ASSERT_TRUE(redis_only.enabled());
  ASSERT_NE(redis_only.Get("key-b"), nullptr);
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"redis:hit"}));
  EXPECT_FALSE(TieredCache(0, nullptr, {}).enabled());
}

TEST(TieredCacheTest, RedisDownIsReportedAsErrorsAndMemoryStillServes) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  RedisCacheOptions options = CacheOptions(server);
  server.Stop();  // nothing listens on the port any more
  Reports reports;
  TieredCache cache(1 << 20, MakeCache(options), reports.Observers());
  const auto doc = std::make_shared<const DocumentOutputs>(Doc("# Down\n"));
  EXPECT_EQ(cache.Get("k"), nullptr);
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"memory:miss", "redis:error"}));
  cache.Put("k", doc);
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"redis:error"}));
  EXPECT_EQ(cache.Get("k"), doc);
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"memory:hit"}));

  // Too large for Redis is not an error: the document is simply kept out of it.
  ASSERT_TRUE(server.Start());
  options.max_value_bytes = 8;
  TieredCache capped(1 << 20, MakeCache(options), reports.Observers());
  capped.Put("k", doc);
  EXPECT_TRUE(reports.Take().empty());
}

TaskManagerOptions NodeOptions(const std::string& dir, const std::string& url) {
  TaskManagerOptions o;
  o.work_dir = dir;
  o.model_fingerprint = "test-model";
  o.document.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
  o.block_cache_bytes = 0;  // the document cache alone
  o.cache_url = url;
  return o;
}

using testing::WaitFinal;

TEST(TaskManagerRedisTest, SecondNodeTakesSinglePageAnswersFromRedis) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string dir = TestDir();
  const std::string png = PlainPng(400, 300, 250);
  ScriptedGenerator generator1(SimplePageAnswer);
  auto node1 = TaskManager::Create(generator1, NodeOptions(dir + "/node1", server.Url()));
  ASSERT_TRUE(node1);
  auto first = (*node1)->Submit({{"a.png", png}}, {});
  ASSERT_TRUE(first);
  ASSERT_EQ(WaitFinal(**node1, first->id).status, TaskStatus::kCompleted);

  // Other options (an explicit last page) make another document key: the document tier misses,
  // but the page's layout and blocks are the same requests, answered from Redis.
  ScriptedGenerator generator2(SimplePageAnswer);
  TaskManagerOptions options2 = NodeOptions(dir + "/node2", server.Url());
  options2.block_cache_bytes = kDefaultBlockCacheBytes;
  auto node2 = TaskManager::Create(generator2, options2);
  ASSERT_TRUE(node2);
  ParseOptions last_page;
  last_page.end_page = 0;
  auto second = (*node2)->Submit({{"b.png", png}}, last_page);
  ASSERT_TRUE(second);
  const TaskInfo done = WaitFinal(**node2, second->id);
  ASSERT_EQ(done.status, TaskStatus::kCompleted) << done.error.value_or("");
  EXPECT_EQ(done.cache_hits, 0);
  EXPECT_TRUE(generator2.calls().empty());  // every answer came from the block tier in Redis
  auto a = (*node1)->Outputs(first->id);
  auto b = (*node2)->Outputs(second->id);
  ASSERT_TRUE(a && b);
  EXPECT_EQ((*a)[0].markdown, (*b)[0].markdown);
  EXPECT_EQ((*a)[0].middle_json, (*b)[0].middle_json);
}

TEST(TaskManagerRedisTest, SecondNodeServesTheFirstNodesParseByteIdentical) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string dir = TestDir();
  const std::string png = PlainPng(400, 300, 250);
  Reports reports1, reports2;

  ScriptedGenerator generator1(SimplePageAnswer);
  TaskManagerOptions options1 = NodeOptions(dir + "/node1", server.Url());
  options1.on_cache_lookup = reports1.Observers().on_lookup;
  auto node1 = TaskManager::Create(generator1, options1);
  ASSERT_TRUE(node1) << node1.error().ToString();
  auto first = (*node1)->Submit({{"a.png", png}}, {});
  ASSERT_TRUE(first);
  ASSERT_EQ(WaitFinal(**node1, first->id).status, TaskStatus::kCompleted);
  EXPECT_EQ(reports1.Take(), (std::vector<std::string>{"memory:miss", "redis:miss"}));
  EXPECT_FALSE(generator1.calls().empty());

  ScriptedGenerator generator2(SimplePageAnswer);
  TaskManagerOptions options2 = NodeOptions(dir + "/node2", server.Url());
  options2.on_cache_lookup = reports2.Observers().on_lookup;
  options2.on_cache_error = reports2.Observers().on_error;
  auto node2 = TaskManager::Create(generator2, options2);
  ASSERT_TRUE(node2);
  auto second = (*node2)->Submit({{"b.png", png}}, {});
  ASSERT_TRUE(second);
  const TaskInfo done = WaitFinal(**node2, second->id);
  ASSERT_EQ(done.status, TaskStatus::kCompleted) << done.error.value_or("");
  EXPECT_EQ(done.cache_hits, 1);
  EXPECT_EQ(done.progress.pages_done, 1);
  EXPECT_TRUE(generator2.calls().empty());  // node 2's model was never asked
  EXPECT_EQ(reports2.Take(), (std::vector<std::string>{"memory:miss", "redis:hit"}));

  auto a = (*node1)->Outputs(first->id);
  auto b = (*node2)->Outputs(second->id);
  ASSERT_TRUE(a && b);
  EXPECT_EQ((*b)[0].name, "b");
  DocumentOutputs renamed = (*a)[0];
  renamed.name = "b";
  EXPECT_EQ(SerializeDocumentOutputs((*b)[0]), SerializeDocumentOutputs(renamed));
}

TEST(TaskManagerRedisTest, RedisDownCostsOnlyTheCache) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string url = server.Url();
  server.Stop();
  const std::string dir = TestDir();
  ScriptedGenerator generator(SimplePageAnswer);
  Reports reports;
  TaskManagerOptions options = NodeOptions(dir, url);
  options.on_cache_lookup = reports.Observers().on_lookup;
  options.on_cache_error = reports.Observers().on_error;
  auto manager = TaskManager::Create(generator, options);
  ASSERT_TRUE(manager) << manager.error().ToString();
  const std::string png = PlainPng(400, 300, 250);
  auto first = (*manager)->Submit({{"a.png", png}}, {});
  ASSERT_TRUE(first);
  const TaskInfo done = WaitFinal(**manager, first->id);
  EXPECT_EQ(done.status, TaskStatus::kCompleted) << done.error.value_or("");
  // The lookup and the store both failed, and were counted as errors.
  EXPECT_EQ(reports.Take(),
            (std::vector<std::string>{"memory:miss", "redis:error", "redis:error"}));
  auto again = (*manager)->Submit({{"a.png", png}}, {});
  ASSERT_TRUE(again);
  EXPECT_EQ(WaitFinal(**manager, again->id).cache_hits, 1);  // memory still serves
  EXPECT_EQ(reports.Take(), (std::vector<std::string>{"memory:hit"}));

  options.cache_url = "redis://:6379";
  auto bad = TaskManager::Create(generator, options);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  options.cache_url = url;
  options.cache_ttl = std::chrono::seconds(0);
  EXPECT_FALSE(TaskManager::Create(generator, options));
}

}  // namespace
}  // namespace mineru::jobs
