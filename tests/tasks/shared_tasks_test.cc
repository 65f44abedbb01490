// SPDX-License-Identifier: Apache-2.0
// Tasks shared between nodes through a real redis-server (tasks/task_store.h,
// tasks/shared_tasks.h): the stored encodings and what they refuse; task managers as two API
// nodes, where the second answers the first's tasks (state, outputs, images, progress), sends
// cancel and delete requests that the owner carries out, sees a stopped owner's unfinished
// tasks as failed, and where Redis failing leaves every node its own tasks.
#include "tasks/shared_tasks.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "../cache/sample_outputs.h"
#include "../pipeline/hanging_generator.h"
#include "../pipeline/scripted_generator.h"
#include "../pipeline/simple_page_script.h"
#include "../support/redis_server.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "cache/document_codec.h"
#include "cache/redis_cache.h"
#include "tasks/task_manager.h"
#include "tasks/task_store.h"
#include "wait_task.h"

namespace mineru::jobs {
namespace {

using testing_support::WaitUntil;

using pipeline::testing::HangingGenerator;
using pipeline::testing::PlainPng;
using pipeline::testing::ScriptedGenerator;
using pipeline::testing::SimplePageAnswer;
using std::chrono::milliseconds;
using testing::WaitFinal;
using testing_support::RedisServer;
using testing_support::TestDir;

SharedTask FullTask() {
  SharedTask t;
  t.node = NewUuid4();
  t.version = 42;
  TaskInfo& i = t.info;
  i.id = NewUuid4();
  i.status = TaskStatus::kFailed;
  i.file_names = {"a b.pdf", "c.png"};
  i.documents = {"a b", "c"};
  i.options.formula = false;
  i.options.table = true;
  i.options.start_page = 2;
  i.options.end_page = 7;
  i.created_at = WallClock::time_point(milliseconds(1'700'000'000'123));
  i.started_at = WallClock::time_point(milliseconds(1'700'000'001'000));
  i.completed_at = WallClock::time_point(milliseconds(1'700'000'002'500));
  i.error = "Failed to process file: a b.pdf: \"quoted\" \xC3\xA9";
  i.queued_ahead = 3;
  i.progress = {.documents_done = 1,
                .documents_total = 2,
                .pages_done = 5,
                .pages_total = 6,
                .blocks_done = 70,
                .generated_tokens = 1234};
  i.cache_hits = 1;
  i.near_duplicates = {"0f0e0d0c-0000-4000-8000-000000000000/x"};
  i.annotation = "{\"backend\":\"vlm\"}";
  return t;
}

TEST(SharedTaskCodecTest, RoundTripsEveryField) {
  const SharedTask t = FullTask();
  auto back = DecodeSharedTask(EncodeSharedTask(t));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->node, t.node);
  EXPECT_EQ(back->version, t.version);
  const TaskInfo& a = t.info;
  const TaskInfo& b = back->info;
  EXPECT_EQ(b.id, a.id);
  EXPECT_EQ(b.status, a.status);
  EXPECT_EQ(b.file_names, a.file_names);
  EXPECT_EQ(b.documents, a.documents);
  EXPECT_EQ(b.options.Key(), a.options.Key());
  EXPECT_EQ(b.created_at, a.created_at);
  EXPECT_EQ(b.started_at, a.started_at);
  EXPECT_EQ(b.completed_at, a.completed_at);
  EXPECT_EQ(b.error, a.error);
  EXPECT_EQ(b.queued_ahead, a.queued_ahead);
  EXPECT_EQ(b.progress.documents_done, 1);
  EXPECT_EQ(b.progress.documents_total, 2);
  EXPECT_EQ(b.progress.pages_done, 5);
  EXPECT_EQ(b.progress.pages_total, 6);
  EXPECT_EQ(b.progress.blocks_done, 70);
  EXPECT_EQ(b.progress.generated_tokens, 1234);
  EXPECT_EQ(b.cache_hits, 1);
  EXPECT_EQ(b.near_duplicates, a.near_duplicates);
  EXPECT_EQ(b.annotation, a.annotation);

  // Unset optionals stay unset.
  SharedTask fresh = FullTask();
  fresh.info.status = TaskStatus::kPending;
  fresh.info.started_at.reset();
  fresh.info.completed_at.reset();
  fresh.info.error.reset();
  fresh.info.options.start_page.reset();
  fresh.info.options.end_page.reset();
  auto pending = DecodeSharedTask(EncodeSharedTask(fresh));
  ASSERT_TRUE(pending);
  EXPECT_FALSE(pending->info.started_at || pending->info.completed_at || pending->info.error ||
               pending->info.options.start_page || pending->info.options.end_page);
  EXPECT_EQ(pending->info.status, TaskStatus::kPending);
}

// The last millisecond a WallClock time point holds (int64 nanoseconds: April 2262).
constexpr int64_t kLastMillis = INT64_MAX / 1'000'000;

TEST(SharedTaskCodecTest, RefusesValuesThatBreakARule) {
  const Json good = ParseJson(EncodeSharedTask(FullTask()), "test").value();
  const auto with = [&](const std::string& pointer, Json value) {
    Json j = good;
    j[Json::json_pointer(pointer)] = std::move(value);
    return DumpJson(j);
  };
  const auto without = [&](const std::string& key) {
    Json j = good;
    j.erase(key);
    return DumpJson(j);
  };
  std::vector<std::string> too_many(kMaxSharedTaskDocuments + 1, "d");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not JSON", "{\"format\":1,"},
      {"not an object", "[1,2]"},
      {"another format", with("/format", 2)},
      {"an id that is a path", with("/id", "../../etc")},
      {"a bad node id", with("/node", "node-1")},
      {"an unknown status", with("/status", "done")},
      {"a document name with a slash", with("/documents/0", "a/b")},
      {"a hidden document name", with("/documents/0", ".x")},
      {"an empty document name", with("/documents/1", "")},
      {"documents and files that do not pair", with("/documents", Json::array({"a"}))},
      {"too many documents", with("/documents", too_many)},
      {"a negative page count", with("/progress/pages_done", -1)},
      {"a page range beyond int", with("/options/start_page", int64_t{1} << 40)},
      {"a string where a number goes", with("/queued_ahead", "3")},
      {"no progress", without("progress")},
      {"no annotation", without("annotation")},
      {"no version", without("version")},
      {"no creation time", with("/created_at_ms", nullptr)},
      // Found with fuzz/shared_task_fuzzer.cc under UBSan: times past the clock overflowed.
      {"a creation time past the clock", with("/created_at_ms", INT64_MAX)},
      {"a start time past the clock", with("/started_at_ms", int64_t{1} << 62)},
      {"a completion time past the clock", with("/completed_at_ms", kLastMillis + 1)},
  };
  for (const auto& [what, value] : cases) {
    auto decoded = DecodeSharedTask(value);
    ASSERT_FALSE(decoded) << what;
    EXPECT_EQ(decoded.error().code, ErrorCode::kCorrupt) << what;
  }
  // The document bound is inclusive.
  Json at_bound = good;
  std::vector<std::string> names, files;
  for (size_t i = 0; i < kMaxSharedTaskDocuments; ++i) {
    names.push_back("d" + std::to_string(i));
    files.push_back("d" + std::to_string(i) + ".pdf");
  }
  at_bound["documents"] = names;
  at_bound["file_names"] = files;
  EXPECT_TRUE(DecodeSharedTask(DumpJson(at_bound)));
  // So is the clock's: its last millisecond reads back as itself.
  auto last = DecodeSharedTask(with("/completed_at_ms", kLastMillis));
  ASSERT_TRUE(last) << last.error().ToString();
  EXPECT_EQ(ParseJson(EncodeSharedTask(*last), "test").value()["completed_at_ms"], kLastMillis);
}

TEST(SharedTaskCodecTest, DenseValuesAtTheValueCapAreRefusedInOnePass) {
  // Issue 14: stored task states went through the quadratic depth-limited parse: a value of
  // --cache-max-value-bytes (64 MiB) of `{}` in Redis cost hours on every node that read it. Now
  // one pass refuses it at the JSON values limit, as corrupt (counted, the task unknown).
  std::string value = R"({"documents": [)";
  while (value.size() + 5 <= kDefaultMaxRedisValueBytes) value += "{},";
  value.back() = ']';
  value += '}';
  auto decoded = DecodeSharedTask(value);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(decoded.error().message.find("max_values"), std::string::npos)
      << decoded.error().message;
}

TEST(SharedTaskCodecTest, OutputsRoundTripAndRefuseCorruption) {
  const std::vector<DocumentOutputs> docs = {testing::SampleOutputs("# A\n", "a"),
                                             testing::SampleOutputs("# B\n", "b")};
  const std::string bytes = SerializeTaskOutputs(docs);
  auto back = ParseTaskOutputs(bytes);
  ASSERT_TRUE(back) << back.error().ToString();
  ASSERT_EQ(back->size(), 2u);
  for (size_t d = 0; d < 2; ++d) {
    EXPECT_EQ(SerializeDocumentOutputs((*back)[d]), SerializeDocumentOutputs(docs[d]));
  }
  EXPECT_TRUE(ParseTaskOutputs(SerializeTaskOutputs({})));

  std::string wrong_magic = bytes;
  wrong_magic[0] = 'X';
  std::string wrong_version = bytes;
  wrong_version[4] = 2;
  std::string huge_count = bytes;
  huge_count[8 + 7] = 0x7F;
  for (const std::string& bad : {bytes.substr(0, 10), bytes.substr(0, bytes.size() - 1),
                                 bytes + "x", wrong_magic, wrong_version, huge_count}) {
    auto parsed = ParseTaskOutputs(bad);
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().code, ErrorCode::kCorrupt) << parsed.error().ToString();
  }
}

// Every sharing error a node reports.
struct Errors {
  std::mutex mutex;
  std::vector<std::string> seen;
  void Add(const Error& e) {
    std::lock_guard lock(mutex);
    seen.push_back(e.ToString());
  }
  size_t count() {
    std::lock_guard lock(mutex);
    return seen.size();
  }
};

TaskManagerOptions NodeOptions(const std::string& dir, const std::string& url, Errors* errors) {
  TaskManagerOptions o;
  o.work_dir = dir;
  o.model_fingerprint = "test-model";
  o.document.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
  o.cache_url = url;
  o.cache_bytes = 0;  // every task parses: these tests are about tasks, not the cache
  o.block_cache_bytes = 0;
  o.share_tasks = true;
  o.on_share_error = [errors](const Error& e) { errors->Add(e); };
  return o;
}

std::unique_ptr<TaskManager> Node(pipeline::Generator& generator, TaskManagerOptions options) {
  auto node = TaskManager::Create(generator, std::move(options));
  EXPECT_TRUE(node) << node.error().ToString();
  return node ? std::move(*node) : nullptr;
}

// Polls `node` until `id` has `status` (5 s at most); the last state seen.
std::optional<TaskInfo> WaitStatus(TaskManager& node, const std::string& id, TaskStatus status) {
  std::optional<TaskInfo> info;
  for (int i = 0; i < 500; ++i) {
    info = node.Get(id);
    if (info && info->status == status) return info;
    std::this_thread::sleep_for(milliseconds(10));
  }
  ADD_FAILURE() << "task " << id << " did not become " << TaskStatusName(status) << "; it is "
                << (info ? TaskStatusName(info->status) : "unknown");
  return info;
}

// The states one subscriber heard.
struct Heard {
  std::mutex mutex;
  std::vector<TaskStatus> statuses;
  TaskManager::Subscriber Fn() {
    return [this](const TaskInfo& info) {
      std::lock_guard lock(mutex);
      statuses.push_back(info.status);
      return true;
    };
  }
  std::vector<TaskStatus> Get() {
    std::lock_guard lock(mutex);
    return statuses;
  }
};

TEST(SharedTasksTest, AnyNodeAnswersAnotherNodesTask) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string dir = TestDir();
  Errors errors;
  ScriptedGenerator generator1(SimplePageAnswer);
  HangingGenerator generator2;  // node 2 must never parse
  auto node1 = Node(generator1, NodeOptions(dir + "/node1", server.Url(), &errors));
  auto node2 = Node(generator2, NodeOptions(dir + "/node2", server.Url(), &errors));
  ASSERT_TRUE(node1 && node2);

  const std::string png = PlainPng(400, 300, 250);
  auto task = node1->Submit({{"scan.png", png}}, {}, "annotation");
  ASSERT_TRUE(task);
  // Known everywhere as soon as its id is known.
  std::optional<TaskInfo> seen = node2->Get(task->id);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->file_names, std::vector<std::string>{"scan.png"});
  EXPECT_EQ(seen->annotation, "annotation");

  const TaskInfo done = WaitFinal(*node1, task->id);
  ASSERT_EQ(done.status, TaskStatus::kCompleted) << done.error.value_or("");
  std::optional<TaskInfo> there = WaitStatus(*node2, task->id, TaskStatus::kCompleted);
  ASSERT_TRUE(there);
  EXPECT_EQ(there->progress.pages_done, 1);
  EXPECT_EQ(there->documents, done.documents);
  // Times travel in milliseconds.
  ASSERT_TRUE(there->completed_at && done.completed_at);
  EXPECT_EQ(std::chrono::floor<milliseconds>(*there->completed_at),
            std::chrono::floor<milliseconds>(*done.completed_at));

  auto here = node1->Outputs(task->id);
  auto away = node2->Outputs(task->id);
  ASSERT_TRUE(here && away) << (away ? "" : away.error().ToString());
  ASSERT_EQ(away->size(), 1u);
  EXPECT_EQ(SerializeDocumentOutputs((*away)[0]), SerializeDocumentOutputs((*here)[0]));
  ASSERT_FALSE((*here)[0].images.empty());
  const auto& [image_name, image_bytes] = (*here)[0].images[0];
  auto image = node2->OutputImage(task->id, 0, image_name);
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image, image_bytes);
  EXPECT_EQ(node1->OutputImage(task->id, 0, image_name).value_or(""), image_bytes);
  EXPECT_EQ(node2->OutputImage(task->id, 0, "missing.jpg").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(node2->OutputImage(task->id, 1, image_name).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(node2->OutputImage(task->id, 0, "../x.jpg").error().code, ErrorCode::kNotFound);

  // The inputs stay with their owner.
  auto input = node2->InputPath(task->id, 0);
  ASSERT_FALSE(input);
  EXPECT_EQ(input.error().code, ErrorCode::kNotFound);
  EXPECT_NE(input.error().message.find("another node"), std::string::npos);
  EXPECT_TRUE(node1->InputPath(task->id, 0));

  // A subscriber to a finished task hears its final state once.
  Heard heard;
  EXPECT_NE(node2->Subscribe(task->id, heard.Fn()), 0u);
  EXPECT_EQ(heard.Get(), std::vector<TaskStatus>{TaskStatus::kCompleted});

  // Unknown and malformed ids are unknown everywhere.
  EXPECT_FALSE(node2->Get(NewUuid4()));
  EXPECT_FALSE(node2->Get("../../etc/passwd"));
  EXPECT_EQ(node2->Subscribe(NewUuid4(), heard.Fn()), 0u);
  EXPECT_EQ(node2->Outputs(NewUuid4()).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(generator2.submitted(), 0);
  EXPECT_EQ(errors.count(), 0u);

  // A node that does not share sees only its own tasks.
  TaskManagerOptions own = NodeOptions(dir + "/node3", server.Url(), &errors);
  own.share_tasks = false;
  auto node3 = Node(generator2, own);
  ASSERT_TRUE(node3);
  EXPECT_FALSE(node3->Get(task->id));
}

TEST(SharedTasksTest, CancelAndDeleteFromAnotherNodeReachTheOwner) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string dir = TestDir();
  Errors errors;
  HangingGenerator generator1;  // node 1's pages never finish on their own
  HangingGenerator generator2;
  auto node1 = Node(generator1, NodeOptions(dir + "/node1", server.Url(), &errors));
  auto node2 = Node(generator2, NodeOptions(dir + "/node2", server.Url(), &errors));
  ASSERT_TRUE(node1 && node2);
  const std::string png = PlainPng(400, 300, 250);

  auto first = node1->Submit({{"a.png", png}}, {});
  ASSERT_TRUE(first);
  ASSERT_TRUE(WaitStatus(*node2, first->id, TaskStatus::kProcessing));
  WaitUntil([&] { return generator1.submitted() != 0; });  // the page reached node 1's engine
  ASSERT_GE(generator1.submitted(), 1);
  Heard heard;
  const uint64_t token = node2->Subscribe(first->id, heard.Fn());
  EXPECT_NE(token & SharedTasks::kForeignTokenBit, 0u);
  std::optional<TaskInfo> before = node2->Cancel(first->id);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, TaskStatus::kProcessing);  // the state the request was sent in
  ASSERT_TRUE(WaitStatus(*node1, first->id, TaskStatus::kCancelled));
  WaitUntil([&] { return generator1.cancelled() != 0; });
  EXPECT_GE(generator1.cancelled(), 1);  // the owner's engine requests were cancelled
  ASSERT_TRUE(WaitStatus(*node2, first->id, TaskStatus::kCancelled));
  WaitUntil([&] { return heard.Get().size() >= 2; });
  EXPECT_EQ(heard.Get(),
            (std::vector<TaskStatus>{TaskStatus::kProcessing, TaskStatus::kCancelled}));

  auto second = node1->Submit({{"b.png", png}}, {});
  ASSERT_TRUE(second);
  ASSERT_TRUE(WaitStatus(*node2, second->id, TaskStatus::kProcessing));
  Heard deleted;
  node2->Subscribe(second->id, deleted.Fn());
  ASSERT_TRUE(node2->Delete(second->id));
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = !node1->Get(second->id) && !node2->Get(second->id);
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the owner did not delete the task";
  WaitUntil([&] { return deleted.Get().size() >= 2; });
  ASSERT_FALSE(deleted.Get().empty());
  EXPECT_EQ(deleted.Get().back(), TaskStatus::kCancelled);  // subscribers hear the end
  EXPECT_EQ(errors.count(), 0u);
}

TEST(SharedTasksTest, StoppedOwnersUnfinishedTasksReadAsFailed) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string dir = TestDir();
  Errors errors;
  HangingGenerator generator1, generator2;
  TaskManagerOptions options1 = NodeOptions(dir + "/node1", server.Url(), &errors);
  options1.concurrent_tasks = 1;
  auto node1 = Node(generator1, options1);
  auto node2 = Node(generator2, NodeOptions(dir + "/node2", server.Url(), &errors));
  ASSERT_TRUE(node1 && node2);
  const std::string png = PlainPng(400, 300, 250);
  auto running = node1->Submit({{"a.png", png}}, {});
  auto waiting = node1->Submit({{"b.png", png}}, {});
  ASSERT_TRUE(running && waiting);
  ASSERT_TRUE(WaitStatus(*node2, running->id, TaskStatus::kProcessing));
  std::optional<TaskInfo> pending = node2->Get(waiting->id);
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->status, TaskStatus::kPending);
  EXPECT_EQ(pending->queued_ahead, 0);

  node1.reset();  // the owner stops: running tasks end cancelled, pending ones with no one
  std::optional<TaskInfo> cancelled = node2->Get(running->id);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, TaskStatus::kCancelled);
  std::optional<TaskInfo> orphan = node2->Get(waiting->id);
  ASSERT_TRUE(orphan);
  EXPECT_EQ(orphan->status, TaskStatus::kFailed);
  EXPECT_NE(orphan->error.value_or("").find("stopped"), std::string::npos);
  // Deleting it needs no owner.
  ASSERT_TRUE(node2->Delete(waiting->id));
  EXPECT_FALSE(node2->Get(waiting->id));
  EXPECT_EQ(errors.count(), 0u);
}

TEST(SharedTasksTest, OutputsOverTheCapStayWithTheirOwner) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string dir = TestDir();
  Errors errors;
  ScriptedGenerator generator1(SimplePageAnswer);
  HangingGenerator generator2;
  TaskManagerOptions options1 = NodeOptions(dir + "/node1", server.Url(), &errors);
  options1.cache_max_value_bytes = 64;
  auto node1 = Node(generator1, options1);
  auto node2 = Node(generator2, NodeOptions(dir + "/node2", server.Url(), &errors));
  ASSERT_TRUE(node1 && node2);
  auto task = node1->Submit({{"a.png", PlainPng(400, 300, 250)}}, {});
  ASSERT_TRUE(task);
  ASSERT_EQ(WaitFinal(*node1, task->id).status, TaskStatus::kCompleted);
  ASSERT_TRUE(WaitStatus(*node2, task->id, TaskStatus::kCompleted));
  auto outputs = node2->Outputs(task->id);
  ASSERT_FALSE(outputs);
  EXPECT_EQ(outputs.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(outputs.error().message.find("could not share"), std::string::npos);
  EXPECT_TRUE(node1->Outputs(task->id));
  EXPECT_EQ(errors.count(), 1u);  // the refused store, reported once by the owner
}

TEST(SharedTasksTest, CorruptStoredStateIsReportedNotServed) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  Errors errors;
  HangingGenerator generator;
  auto node = Node(generator, NodeOptions(TestDir(), server.Url(), &errors));
  ASSERT_TRUE(node);
  RedisClient redis(ParseRedisUrl(server.Url()).value());
  const std::string id = NewUuid4();
  SharedTask other = FullTask();  // a valid value, stored under another task's key
  ASSERT_TRUE(redis.Command({"SET", "mineru:task:" + id, EncodeSharedTask(other)}));
  EXPECT_FALSE(node->Get(id));
  const std::string id2 = NewUuid4();
  ASSERT_TRUE(redis.Command({"SET", "mineru:task:" + id2, "{\"format\":1}"}));
  EXPECT_FALSE(node->Get(id2));
  EXPECT_EQ(errors.count(), 2u);
}

TEST(SharedTasksTest, RedisDownLeavesEveryNodeItsOwnTasks) {
  RedisServer server;
  ASSERT_TRUE(server.Start());
  const std::string url = server.Url();
  server.Stop();
  const std::string dir = TestDir();
  Errors errors;
  ScriptedGenerator generator(SimplePageAnswer);
  auto node = Node(generator, NodeOptions(dir, url, &errors));
  ASSERT_TRUE(node);
  auto task = node->Submit({{"a.png", PlainPng(400, 300, 250)}}, {});
  ASSERT_TRUE(task);
  EXPECT_EQ(WaitFinal(*node, task->id).status, TaskStatus::kCompleted);
  EXPECT_TRUE(node->Outputs(task->id));
  EXPECT_FALSE(node->Get(NewUuid4()));
  EXPECT_GE(errors.count(), 1u);

  TaskManagerOptions unshared = NodeOptions(dir + "/x", "", &errors);
  auto refused = TaskManager::Create(generator, unshared);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace mineru::jobs
