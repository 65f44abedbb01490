// SPDX-License-Identifier: Apache-2.0
// ResultCache: exact keys, least-recently-used eviction within the byte bound, counting.
#include "cache/result_cache.h"

#include <gtest/gtest.h>

namespace mineru::jobs {
namespace {

std::shared_ptr<const DocumentOutputs> Outputs(size_t markdown_bytes) {
  auto o = std::make_shared<DocumentOutputs>();
  o->markdown.assign(markdown_bytes, 'x');
  return o;
}

TEST(ResultCacheTest, KeysAreExactOverBytesModelAndEveryOption) {
  const ParseOptions defaults;
  const std::string key = DocumentCacheKey("%PDF-1.7 ...", "model-a", defaults);
  EXPECT_EQ(key, DocumentCacheKey("%PDF-1.7 ...", "model-a", defaults));
  EXPECT_NE(key, DocumentCacheKey("%PDF-1.7 ..,", "model-a", defaults));
  EXPECT_NE(key, DocumentCacheKey("%PDF-1.7 ...", "model-b", defaults));
  ParseOptions o = defaults;
  o.formula = false;
  EXPECT_NE(key, DocumentCacheKey("%PDF-1.7 ...", "model-a", o));
  o = defaults;
  o.table = false;
  EXPECT_NE(key, DocumentCacheKey("%PDF-1.7 ...", "model-a", o));
  o = defaults;
  o.start_page = 0;  // explicit first page is a different request text, kept apart
  EXPECT_NE(key, DocumentCacheKey("%PDF-1.7 ...", "model-a", o));
  o = defaults;
  o.end_page = 3;
  EXPECT_NE(key, DocumentCacheKey("%PDF-1.7 ...", "model-a", o));
}

TEST(ResultCacheTest, EvictsLeastRecentlyUsedWithinTheByteBound) {
  // Each entry costs its markdown bytes plus its 1-byte key.
  ResultCache cache(300);
  cache.Put("a", Outputs(99));
  cache.Put("b", Outputs(99));
  cache.Put("c", Outputs(99));  // 300 bytes: exactly at the bound, all kept
  EXPECT_EQ(cache.Stats().entries, 3);
  EXPECT_EQ(cache.Stats().bytes, 300u);
  ASSERT_NE(cache.Get("a"), nullptr);  // a is now the most recent
  cache.Put("d", Outputs(99));         // one past the bound: b (least recent) goes
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_NE(cache.Get("a"), nullptr);
  EXPECT_NE(cache.Get("c"), nullptr);
  EXPECT_NE(cache.Get("d"), nullptr);
  const CacheStats stats = cache.Stats();
  EXPECT_EQ(stats.hits, 4);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.bytes, 300u);
}

TEST(ResultCacheTest, AnEntryLargerThanTheCacheIsNotKeptAndReplacingUpdatesBytes) {
  ResultCache cache(100);
  cache.Put("big", Outputs(100));  // 101 bytes with its key
  EXPECT_EQ(cache.Get("big"), nullptr);
  cache.Put("k", Outputs(10));
  cache.Put("k", Outputs(20));
  EXPECT_EQ(cache.Stats().entries, 1);
  EXPECT_EQ(cache.Stats().bytes, 21u);
  EXPECT_EQ(cache.Get("k")->markdown.size(), 20u);
  ResultCache off(0);
  off.Put("k", Outputs(1));
  EXPECT_EQ(off.Get("k"), nullptr);
}

}  // namespace
}  // namespace mineru::jobs
