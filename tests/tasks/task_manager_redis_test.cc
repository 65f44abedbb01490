// SPDX-License-Identifier: Apache-2.0
// Task managers as two nodes sharing one real redis-server (documents and single answers), and
// one carrying on while Redis is down.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../cache/cache_reports.h"
#include "../pipeline/scripted_generator.h"
#include "../pipeline/simple_page_script.h"
#include "../support/redis_server.h"
#include "../support/scratch.h"
#include "cache/document_codec.h"
#include "tasks/task_manager.h"
#include "wait_task.h"

namespace mineru::jobs {
namespace {

using pipeline::testing::PlainPng;
using pipeline::testing::ScriptedGenerator;
using pipeline::testing::SimplePageAnswer;
using testing::Reports;
using testing_support::RedisServer;
using testing_support::TestDir;

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
