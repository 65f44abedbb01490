// SPDX-License-Identifier: Apache-2.0
// The shared document cache against a real redis-server: values stored with SETEX under
// "mineru:doc:" and read back byte-identical, the TTL and value-cap boundaries, corrupt values
// refused; the tiered cache (memory, then Redis, promotion, per-tier reports). Task managers on
// one Redis: tests/tasks/task_manager_redis_test.cc.
#include "cache/redis_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

#include "../support/redis_server.h"
#include "../support/scratch.h"
#include "cache/document_codec.h"
#include "cache/tiered_cache.h"
#include "cache_reports.h"
#include "sample_outputs.h"

namespace mineru::jobs {
namespace {

using std::chrono::milliseconds;
using testing::Reports;
using testing_support::RedisServer;

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

}  // namespace
}  // namespace mineru::jobs
