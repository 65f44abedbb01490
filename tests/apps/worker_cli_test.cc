// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp worker` end to end with real servers and a real Python client: a private
// RabbitMQ node and redis-server (tests/support), the tiny random checkpoint, and Debian's
// python3-celery calling `run_mineru_inference` through celery_client.py exactly as a Python
// team's code would (send_task, AsyncResult.get). Checked: results and a byte-identical cached
// repeat, a garbage document as FAILURE, an expired task as REVOKED, an unknown task name as
// FAILURE plus a dead-lettered copy, and a worker killed mid-job whose message another worker
// finishes with one result stored.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "../support/http_client.h"
#include "../support/rabbitmq_server.h"
#include "../support/redis_server.h"
#include "base/json.h"
#include "cli_test_util.h"
#include "jobs/redis_client.h"
#include "serve_process.h"

namespace mineru::apps {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::RunCli;
using testing::ServeProcess;
using testing::Succeeded;

const std::string kClient = std::string(MINERU_SOURCE_DIR) + "/tests/apps/celery_client.py";
const std::string kShapes = std::string(MINERU_TEST_DATA_DIR) + "/pdf/shapes.pdf";  // 3 pages

// Polls GET /v1/tasks/{id} until the task is final (or 120 s pass); the last task object.
Json WaitForTask(int port, const std::string& id) {
  Json task;
  for (int i = 0; i < 6000; ++i) {
    auto polled = testing_support::Exchange(port, "GET", "/v1/tasks/" + id);
    if (!polled) break;
    task = Json::parse(polled->body, nullptr, /*allow_exceptions=*/false);
    if (task.is_discarded() ||
        (task.value("status", "") != "pending" && task.value("status", "") != "processing")) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return task;
}

class WorkerCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new std::string(testing::ScratchRoot() + "/worker-cli");
    rabbit_ = new testing_support::RabbitMqServer(*scratch_ + "/rabbitmq");
    const std::string started = rabbit_->Start();
    ASSERT_TRUE(started.empty()) << started;
    redis_ = new testing_support::RedisServer();
    ASSERT_TRUE(redis_->Start());
    model_ = new std::string(*scratch_ + "/model");
    const CliResult made = RunCli({"make-model", "--config", "tiny", "-o", *model_,
                                   "--tokenizer-source", MINERU_QWEN_TOKENIZER});
    ASSERT_TRUE(Succeeded(made)) << Describe(made);
  }
  static void TearDownTestSuite() {
    delete redis_;
    if (rabbit_) rabbit_->Stop();
    delete rabbit_;
    delete model_;
    delete scratch_;
  }

  static std::string Broker() { return rabbit_->url(); }
  static std::string Backend() { return redis_->Url(); }

  std::unique_ptr<ServeProcess> StartWorker(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        "--model", *model_, "--queue", Broker(), "--cache", Backend(), "--concurrent-tasks", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto worker =
        std::make_unique<ServeProcess>("worker", args, std::vector<std::string>{}, "worker ready");
    EXPECT_FALSE(worker->url().empty()) << worker->log();
    return worker;
  }

  // Runs celery_client.py and parses its one JSON line.
  static Json Client(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/python3", kClient, Broker(), Backend()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = testing_support::RunProcess(argv, {}, std::chrono::seconds(180));
    EXPECT_TRUE(r.exited && r.exit_code == 0) << testing_support::Describe(r);
    Json json = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(json.is_discarded()) << testing_support::Describe(r);
    return json;
  }

  static std::string* scratch_;
  static std::string* model_;
  static testing_support::RabbitMqServer* rabbit_;
  static testing_support::RedisServer* redis_;
};

std::string* WorkerCliTest::scratch_ = nullptr;
std::string* WorkerCliTest::model_ = nullptr;
testing_support::RabbitMqServer* WorkerCliTest::rabbit_ = nullptr;
testing_support::RedisServer* WorkerCliTest::redis_ = nullptr;

TEST_F(WorkerCliTest, PythonCeleryClientGetsResultsFailuresAndRevocations) {
  auto worker = StartWorker({"--max-tokens", "16"});

  const Json first =
      Client({"run", kShapes, "--kwargs", R"({"return_middle_json": true})", "--priority", "3"});
  ASSERT_EQ(first.value("status", ""), "SUCCESS") << first.dump();
  const Json& result = first["result"];
  EXPECT_EQ(result["pages"], 3) << result.dump();
  EXPECT_TRUE(result["md_content"].is_string());
  EXPECT_TRUE(result["content_list"].is_array());
  EXPECT_EQ(result["middle_json"]["pdf_info"].size(), 3u);
  EXPECT_EQ(result["cache_hit"], false);

  const Json again = Client({"run", kShapes, "--kwargs", R"({"return_middle_json": true})"});
  ASSERT_EQ(again.value("status", ""), "SUCCESS") << again.dump();
  EXPECT_EQ(again["result"]["cache_hit"], true);
  EXPECT_EQ(again["result"]["md_content"], result["md_content"]);
  EXPECT_EQ(again["result"]["middle_json"], result["middle_json"]);

  const std::string garbage = testing::TestDir() + "/notes.txt";
  testing::WriteFile(garbage, "this is not a document");
  const Json failed = Client({"run", garbage});
  EXPECT_EQ(failed.value("status", ""), "FAILURE") << failed.dump();
  EXPECT_EQ(failed.value("exc_type", ""), "ValueError") << failed.dump();
  EXPECT_NE(failed.value("message", "").find("Unsupported file type"), std::string::npos);

  const Json expired = Client({"run", kShapes, "--expires-in", "-60"});
  EXPECT_EQ(expired.value("status", ""), "REVOKED") << expired.dump();
  EXPECT_EQ(expired.value("exc_type", ""), "TaskRevokedError") << expired.dump();

  const Json unknown = Client({"run", kShapes, "--task", "some_other_task"});
  EXPECT_EQ(unknown.value("status", ""), "FAILURE") << unknown.dump();
  EXPECT_EQ(unknown.value("exc_type", ""), "NotRegistered") << unknown.dump();
  const Json dead = Client({"count", "celery.mineru.dead"});
  EXPECT_EQ(dead["messages"], 1) << dead.dump();  // kept, with its reason in the headers

  EXPECT_EQ(worker->Stop(), 0) << worker->log();
  EXPECT_NE(worker->log().find("2 succeeded"), std::string::npos) << worker->log();
}

TEST_F(WorkerCliTest, AJobOfAKilledWorkerIsFinishedByAnotherWithOneResult) {
  // A long parse (the random model writes up to 3,000 tokens per page), so that the first
  // worker is surely mid-job when it is killed.
  auto first = StartWorker({"--max-tokens", "3000", "--cache-bytes", "0"});
  const Json sent = Client({"send", kShapes, "--kwargs", R"({"table_enable": false})"});
  const std::string id = sent.value("id", "");
  ASSERT_FALSE(id.empty()) << sent.dump();
  auto redis_options = jobs::ParseRedisUrl(Backend());
  ASSERT_TRUE(redis_options);
  jobs::RedisClient redis(*redis_options);
  const std::string counter = "mineru:celery:deliveries:" + id;
  bool taken = false;
  for (int i = 0; i < 3000 && !taken; ++i) {
    auto value = redis.Command({"GET", counter});
    taken = value && !value->is_nil();
    if (!taken) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(taken) << first->log();
  first->Kill();  // mid-job: the message was never acked

  auto second = StartWorker({"--max-tokens", "3000", "--cache-bytes", "0"});
  const Json done = Client({"get", id, "--timeout", "170"});
  EXPECT_EQ(done.value("status", ""), "SUCCESS") << done.dump() << second->log();
  auto count = redis.Command({"GET", counter});
  ASSERT_TRUE(count);
  EXPECT_EQ(count->str, "2");  // delivered to the killed worker, then to this one
  EXPECT_EQ(second->Stop(), 0) << second->log();
  EXPECT_NE(second->log().find("1 succeeded"), std::string::npos) << second->log();
}

TEST_F(WorkerCliTest, ServeQueuesDocumentsToWorkersAndShowsTheirProgress) {
  auto first = StartWorker({"--max-tokens", "16"});
  auto second = StartWorker({"--max-tokens", "16"});
  ServeProcess api({"--model", *model_, "--queue", Broker(), "--cache", Backend()});
  ASSERT_FALSE(api.url().empty()) << api.log();
  std::string content_type;
  const std::string body = testing_support::MultipartBody(
      {{"file", testing::ReadFile(kShapes), "shapes.pdf", "application/pdf"},
       {"table_enable", "false"},
       {"end_page_id", "1"}},
      &content_type);
  Json task;
  std::string id;
  for (int round = 0; round < 2; ++round) {
    auto submitted =
        testing_support::Exchange(api.port(), "POST", "/v1/document/parse", body, content_type);
    ASSERT_TRUE(submitted);
    ASSERT_EQ(submitted->status, 202) << submitted->body;
    id = Json::parse(submitted->body).value("task_id", "");
    task = WaitForTask(api.port(), id);
    ASSERT_EQ(task["status"], "completed") << task.dump() << api.log();
    EXPECT_EQ(task["progress"]["pages_done"], 2);
    EXPECT_EQ(task["cache_hits"], round);  // the repeat is answered from the cache
  }
  auto result = testing_support::Exchange(api.port(), "GET", "/v1/tasks/" + id + "/result");
  ASSERT_TRUE(result);
  const Json documents = Json::parse(result->body)["documents"];
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(documents[0]["middle_json"]["pdf_info"].size(), 2u);
  EXPECT_TRUE(documents[0]["markdown"].is_string());
  EXPECT_EQ(api.Stop(), 0) << api.log();
  first->Stop();
  second->Stop();
  // One of the two workers parsed the document, once.
  const bool first_did = first->log().find("1 succeeded") != std::string::npos;
  const bool second_did = second->log().find("1 succeeded") != std::string::npos;
  EXPECT_NE(first_did, second_did) << first->log() << second->log();
}

TEST_F(WorkerCliTest, ADocumentAcceptedBeforeABrokerRestartIsNotLost) {
  ServeProcess api({"--model", *model_, "--queue", Broker(), "--cache", Backend()});
  ASSERT_FALSE(api.url().empty()) << api.log();
  // No worker yet: the accepted document waits in the (durable) queue, confirmed by the broker.
  std::string content_type;
  const std::string body = testing_support::MultipartBody(
      {{"file", testing::ReadFile(kShapes), "shapes.pdf", "application/pdf"},
       {"formula_enable", "false"},
       {"start_page_id", "2"}},
      &content_type);
  auto submitted =
      testing_support::Exchange(api.port(), "POST", "/v1/document/parse", body, content_type);
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const std::string id = Json::parse(submitted->body).value("task_id", "");
  const Json queued = Client({"count", "celery"});
  ASSERT_EQ(queued["messages"], 1) << queued.dump();  // published and confirmed

  const std::string stopped = rabbit_->Stop();
  ASSERT_TRUE(stopped.empty()) << stopped;
  const std::string restarted = rabbit_->Start();
  ASSERT_TRUE(restarted.empty()) << restarted;

  auto worker = StartWorker({"--max-tokens", "16"});
  const Json task = WaitForTask(api.port(), id);
  EXPECT_EQ(task["status"], "completed") << task.dump() << api.log() << worker->log();
  EXPECT_EQ(task["progress"]["pages_done"], 1);
  EXPECT_EQ(api.Stop(), 0) << api.log();
  EXPECT_EQ(worker->Stop(), 0) << worker->log();
}

}  // namespace
}  // namespace mineru::apps
