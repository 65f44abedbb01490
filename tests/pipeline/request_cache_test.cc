// SPDX-License-Identifier: Apache-2.0
// The request cache: keys are exact (pixels, size, prompt, every sampling parameter, token
// cap) and exist only for deterministic requests; ExtractPage answers a repeated page from it
// without asking the model, with the same blocks.
#include "pipeline/request_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "pipeline/block_requests.h"
#include "pipeline/page_extractor.h"
#include "pipeline/sampling_presets.h"
#include "scripted_generator.h"
#include "simple_page_script.h"

namespace mineru::pipeline {
namespace {

using testing::ScriptedGenerator;
using testing::SimplePageAnswer;

class MapCache final : public RequestCache {
 public:
  std::optional<std::string> Get(const std::string& key) override {
    std::lock_guard lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  void Put(const std::string& key, const std::string& answer) override {
    std::lock_guard lock(mutex_);
    map_[key] = answer;
  }
  size_t size() const { return map_.size(); }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> map_;
};

image::RgbImage Page(uint8_t shade) {
  auto page = image::MakeImage(400, 300, shade, shade, shade);
  EXPECT_TRUE(page);
  return *page;
}

TEST(RequestCacheTest, KeysAreExactAndOnlyForDeterministicRequests) {
  const image::RgbImage page = Page(200);
  const engine::SamplingParams greedy = MineruDefaultSampling();
  const auto key = RequestCacheKey(page, kTextPrompt, greedy, std::nullopt);
  ASSERT_TRUE(key);
  EXPECT_EQ(key, RequestCacheKey(page, kTextPrompt, greedy, std::nullopt));
  image::RgbImage one_pixel = page;
  one_pixel.pixels[12345] ^= 1;
  EXPECT_NE(key, RequestCacheKey(one_pixel, kTextPrompt, greedy, std::nullopt));
  auto resized = image::MakeImage(300, 400, 200, 200, 200);  // same bytes, other shape
  EXPECT_NE(key, RequestCacheKey(*resized, kTextPrompt, greedy, std::nullopt));
  EXPECT_NE(key, RequestCacheKey(page, kTablePrompt, greedy, std::nullopt));
  EXPECT_NE(key, RequestCacheKey(page, kTextPrompt, greedy, 100));
  engine::SamplingParams other = greedy;
  other.frequency_penalty += 0.001f;
  EXPECT_NE(key, RequestCacheKey(page, kTextPrompt, other, std::nullopt));
  other = greedy;
  other.no_repeat_ngram_size = 50;
  EXPECT_NE(key, RequestCacheKey(page, kTextPrompt, other, std::nullopt));

  engine::SamplingParams sampled;
  sampled.temperature = 0.7f;
  EXPECT_FALSE(RequestCacheKey(page, kTextPrompt, sampled, std::nullopt));  // random: never
  sampled.seed = 42;
  EXPECT_TRUE(RequestCacheKey(page, kTextPrompt, sampled, std::nullopt));  // seeded: replayable
}

TEST(RequestCacheTest, ARepeatedPageIsAnsweredFromTheCache) {
  ScriptedGenerator generator(SimplePageAnswer);
  MapCache cache;
  ExtractOptions options;
  options.cache = &cache;
  auto first = ExtractPage(generator, Page(250), options);
  ASSERT_TRUE(first) << first.error().ToString();
  const size_t calls = generator.calls().size();
  EXPECT_EQ(calls, 3u);  // layout, title, text (the image block is not recognised)
  EXPECT_EQ(first->cached_requests, 0);
  EXPECT_EQ(cache.size(), 3u);

  auto second = ExtractPage(generator, Page(250), options);
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_EQ(generator.calls().size(), calls);  // the model was not asked again
  EXPECT_EQ(second->cached_requests, 3);
  EXPECT_EQ(second->requests, 0);
  ASSERT_EQ(second->blocks.size(), first->blocks.size());
  for (size_t i = 0; i < first->blocks.size(); ++i) {
    EXPECT_EQ(second->blocks[i].content, first->blocks[i].content);
    EXPECT_EQ(second->blocks[i].bbox, first->blocks[i].bbox);
  }

  auto other = ExtractPage(generator, Page(251), options);  // one shade off: all new requests
  ASSERT_TRUE(other);
  EXPECT_EQ(generator.calls().size(), calls + 3);
  EXPECT_EQ(other->cached_requests, 0);
}

TEST(RequestCacheTest, FailedAnswersAreNotCached) {
  int layouts = 0;
  ScriptedGenerator generator([&](const testing::ScriptedCall& call) -> std::optional<std::string> {
    if (call.prompt == kLayoutPrompt) {
      ++layouts;
      return std::string(testing::kSimpleLayout);
    }
    return std::nullopt;  // every recognition fails
  });
  MapCache cache;
  ExtractOptions options;
  options.cache = &cache;
  auto page = ExtractPage(generator, Page(250), options);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->failed_blocks, 2);
  EXPECT_EQ(cache.size(), 1u);  // the layout only
}

}  // namespace
}  // namespace mineru::pipeline
