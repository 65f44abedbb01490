// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp worker` end to end with real servers and a real Python client: a private
// RabbitMQ node and redis-server (tests/support), the tiny random checkpoint, and Debian's
// python3-celery calling `run_mineru_inference` through celery_client.py exactly as a Python
// team's code would (send_task, AsyncResult.get). Checked: results and a byte-identical cached
// repeat, a garbage document as FAILURE, an expired task as REVOKED, an unknown task name as
// FAILURE plus a dead-lettered copy, a worker killed mid-job whose message another worker
// finishes with one result stored, and Celery's remote control revoke: a running parse
// terminated from Python and from `serve --queue` (DELETE), a queued task revoked before any
// worker took it.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "../support/rabbitmq_server.h"
#include "../support/redis_server.h"
#include "base/json.h"
#include "cache/redis_client.h"
#include "cli_test_util.h"
#include "long_pdf.h"
#include "serve_process.h"

namespace mineru::apps {
namespace {

using testing::AssemblePdf;
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

// A PDF of `pages` small pages, each with a blue square in its own place, written object by
// object as tests/data/pdf/make_fixtures.py writes its fixtures. The random model writes
// --max-tokens of layout for every page, and no two pages look alike (so the block cache answers
// none from another), so at 3,000 tokens this takes a minute or more to parse: a revoke surely
// arrives mid-parse, on any machine.
std::string WriteLongPdf(const std::string& path, int pages) {
  std::vector<std::string> objects = {"<< /Type /Catalog /Pages 2 0 R >>", ""};
  std::string kids;
  for (int i = 0; i < pages; ++i) {
    const std::string content = "0 0 1 rg " + std::to_string(4 + i % 64) + " " +
                                std::to_string(4 + i / 64 * 8) + " 64 64 re f";
    kids += std::to_string(objects.size() + 1) + " 0 R ";
    objects.push_back("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 144 144] /Contents " +
                      std::to_string(objects.size() + 2) + " 0 R >>");
    objects.push_back("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content +
                      "\nendstream");
  }
  objects[1] = "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages) + " >>";
  testing::WriteFile(path, AssemblePdf(objects));
  return path;
}
// Pages of the long document.
constexpr int kLongPdfPages = 120;

// Waits (up to 60 s) until a worker took the Celery task `id`: its delivery counter exists.
bool WaitForDelivery(jobs::RedisClient& redis, const std::string& id) {
  for (int i = 0; i < 6000; ++i) {
    auto value = redis.Command({"GET", "mineru:celery:deliveries:" + id});
    if (value && !value->is_nil()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Celery's stored meta of task `id` once it is final (up to 170 s); null when none came.
Json WaitForFinalMeta(jobs::RedisClient& redis, const std::string& id) {
  for (int i = 0; i < 17000; ++i) {
    auto value = redis.Command({"GET", "celery-task-meta-" + id});
    if (value && !value->is_nil()) {
      Json meta = Json::parse(value->str, nullptr, /*allow_exceptions=*/false);
      if (meta.is_object() && meta.value("status", "") != "PROGRESS") return meta;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return nullptr;
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

  static jobs::RedisClient Redis() {
    auto options = jobs::ParseRedisUrl(Backend());
    EXPECT_TRUE(options);
    return jobs::RedisClient(options.value_or(jobs::RedisOptions{}));
  }

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

  // Waits (bounded: 60 s) until `queue` holds `messages` messages; serve publishes a task
  // from its runner thread, after the upload was answered.
  static bool WaitQueued(const std::string& queue, int messages) {
    for (int i = 0; i < 120; ++i) {
      if (Client({"count", queue}).value("messages", -1) == messages) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return false;
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

  // Issue 14: a parse that fails names its input by its name, never by the worker's path
  // ("<work dir>/<task>/input/document: ...", as the Python client saw it before).
  const std::string broken = testing::TestDir() + "/broken.pdf";
  testing::WriteFile(broken, "%PDF-1.7\nnot really a PDF");
  const Json parse_failed = Client({"run", broken});
  EXPECT_EQ(parse_failed.value("status", ""), "FAILURE") << parse_failed.dump();
  const std::string text = parse_failed.value("message", "");
  EXPECT_NE(text.find("document"), std::string::npos) << text;
  EXPECT_EQ(text.find("/input/"), std::string::npos) << text;
  EXPECT_EQ(text.find(*scratch_), std::string::npos) << text;

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
  ASSERT_TRUE(WaitQueued("celery", 1));  // published and confirmed

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

// A long parse (WriteLongPdf) stopped by AsyncResult.revoke(terminate=True) from Python; a task
// revoked before it was sent (Celery ids are the client's to choose), which is then never parsed;
// and the next task.
TEST_F(WorkerCliTest, PythonRevokesStopARunningParseAndSkipAQueuedTask) {
  auto worker = StartWorker(
      {"--max-tokens", "3000", "--cache-bytes", "0", "--hostname", "mineru@revoke-test"});
  // The worker declared its mailbox exactly as kombu does: Python's declaration of the same
  // exchange and queue passes RabbitMQ's equivalence check (else PRECONDITION_FAILED).
  const Json mailbox = Client({"declare-pidbox", "mineru@revoke-test"});
  EXPECT_EQ(mailbox.value("queue", ""), "mineru@revoke-test.celery.pidbox") << mailbox.dump();
  EXPECT_EQ(mailbox["consumers"], 1) << mailbox.dump();  // the worker listens on it

  const std::string kwargs = R"({"formula_enable": false, "table_enable": false})";
  const std::string long_pdf = WriteLongPdf(testing::TestDir() + "/long.pdf", kLongPdfPages);
  const std::string running = Client({"send", long_pdf, "--kwargs", kwargs}).value("id", "");
  ASSERT_FALSE(running.empty());
  jobs::RedisClient redis = Redis();
  ASSERT_TRUE(WaitForDelivery(redis, running)) << worker->log();
  Client({"revoke", running, "--terminate"});
  const Json terminated = Client({"get", running, "--timeout", "170"});
  EXPECT_EQ(terminated.value("status", ""), "REVOKED") << terminated.dump() << worker->log();
  EXPECT_EQ(terminated.value("exc_type", ""), "TaskRevokedError") << terminated.dump();
  EXPECT_EQ(terminated.value("message", ""), "terminated") << terminated.dump();

  const std::string queued = "0f1e2d3c-revoked-before-it-was-sent";
  Client({"revoke", queued});
  EXPECT_EQ(Client({"send", long_pdf, "--kwargs", kwargs, "--id", queued}).value("id", ""), queued);
  const Json skipped = Client({"get", queued, "--timeout", "170"});
  EXPECT_EQ(skipped.value("status", ""), "REVOKED") << skipped.dump() << worker->log();
  EXPECT_EQ(skipped.value("message", ""), "revoked") << skipped.dump();
  // Never parsed: a delivery is counted only when a parse is about to start.
  auto counted = redis.Command({"GET", "mineru:celery:deliveries:" + queued});
  ASSERT_TRUE(counted);
  EXPECT_TRUE(counted->is_nil()) << counted->str;

  // The worker goes on taking tasks.
  const std::string garbage = testing::TestDir() + "/notes.txt";
  testing::WriteFile(garbage, "this is not a document");
  const Json next = Client({"run", garbage, "--timeout", "170"});
  EXPECT_EQ(next.value("status", ""), "FAILURE") << next.dump() << worker->log();
  EXPECT_EQ(worker->Stop(), 0) << worker->log();
  EXPECT_NE(worker->log().find("0 succeeded, 1 failed, 2 revoked (1 terminated)"),
            std::string::npos)
      << worker->log();
}

// DELETE of a task `serve --queue` handed to a worker revokes it there: the worker stops the
// parse (REVOKED 'terminated' stored instead of a result).
TEST_F(WorkerCliTest, DeletingATaskInServeTerminatesItOnTheWorker) {
  auto worker = StartWorker(
      {"--max-tokens", "3000", "--cache-bytes", "0", "--hostname", "mineru@delete-test"});
  ServeProcess api({"--model", *model_, "--queue", Broker(), "--cache", Backend()});
  ASSERT_FALSE(api.url().empty()) << api.log();
  jobs::RedisClient redis = Redis();
  const auto deliveries = [&] {
    std::set<std::string> keys;
    auto reply = redis.Command({"KEYS", "mineru:celery:deliveries:*"});
    if (reply) {
      for (const auto& key : reply->elements) keys.insert(key.str);
    }
    return keys;
  };
  const std::set<std::string> before = deliveries();
  std::string content_type;
  const std::string body = testing_support::MultipartBody(
      {{"file", testing::ReadFile(WriteLongPdf(testing::TestDir() + "/long.pdf", kLongPdfPages)),
        "long.pdf", "application/pdf"},
       {"table_enable", "false"},
       {"formula_enable", "false"}},
      &content_type);
  auto submitted =
      testing_support::Exchange(api.port(), "POST", "/v1/document/parse", body, content_type);
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const std::string id = Json::parse(submitted->body).value("task_id", "");
  // The worker took it: a new delivery counter names the Celery task id.
  std::string celery_id;
  for (int i = 0; i < 6000 && celery_id.empty(); ++i) {
    for (const std::string& key : deliveries()) {
      if (!before.count(key))
        celery_id = key.substr(std::string("mineru:celery:deliveries:").size());
    }
    if (celery_id.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(celery_id.empty()) << worker->log() << api.log();

  auto deleted = testing_support::Exchange(api.port(), "DELETE", "/v1/tasks/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_LT(deleted->status, 300) << deleted->body;
  const Json meta = WaitForFinalMeta(redis, celery_id);
  EXPECT_EQ(meta.value("status", ""), "REVOKED") << meta.dump() << worker->log();
  EXPECT_EQ(meta["result"].value("exc_message", Json::array()), Json::array({"terminated"}))
      << meta.dump();
  EXPECT_EQ(api.Stop(), 0) << api.log();
  EXPECT_EQ(worker->Stop(), 0) << worker->log();
  EXPECT_NE(worker->log().find("0 succeeded, 0 failed, 1 revoked (1 terminated)"),
            std::string::npos)
      << worker->log();
}

// DELETE of a task `serve --queue` published while no worker runs: REVOKED is stored with the
// broadcast, so the worker that starts later never parses it, and takes the next task.
TEST_F(WorkerCliTest, TaskDeletedBeforeAnyWorkerRanIsNeverParsed) {
  ServeProcess api({"--model", *model_, "--queue", Broker(), "--cache", Backend()});
  ASSERT_FALSE(api.url().empty()) << api.log();
  jobs::RedisClient redis = Redis();
  const auto metas = [&] {
    std::set<std::string> keys;
    if (auto reply = redis.Command({"KEYS", "celery-task-meta-*"})) {
      for (const auto& key : reply->elements) keys.insert(key.str);
    }
    return keys;
  };
  const std::set<std::string> before = metas();
  auto submitted =
      testing_support::Exchange(api.port(), "POST", "/v1/document/parse?filename=shapes.pdf",
                                testing::ReadFile(kShapes), "application/pdf");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const std::string id = Json::parse(submitted->body).value("task_id", "");
  // The DELETE must find the task published: one cancelled before serve's runner published it
  // has nothing to revoke and stores nothing (on loaded cores the DELETE can come first).
  ASSERT_TRUE(WaitQueued("celery", 1));
  auto deleted = testing_support::Exchange(api.port(), "DELETE", "/v1/tasks/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200) << deleted->body;
  std::string revoked_key;  // a new key, within 60 s (a hang guard)
  for (int i = 0; i < 6000 && revoked_key.empty(); ++i) {
    for (const std::string& key : metas()) {
      if (!before.count(key)) revoked_key = key;
    }
    if (revoked_key.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(revoked_key.empty()) << "no REVOKED result stored\n" << api.log();
  auto stored = redis.Command({"GET", revoked_key});
  ASSERT_TRUE(stored);
  EXPECT_EQ(Json::parse(stored->str).value("status", ""), "REVOKED") << stored->str;

  auto worker = StartWorker({"--max-tokens", "16"});
  auto next =
      testing_support::Exchange(api.port(), "POST", "/v1/document/parse?filename=shapes.pdf",
                                testing::ReadFile(kShapes), "application/pdf");
  ASSERT_TRUE(next);
  ASSERT_EQ(next->status, 202) << next->body;
  const Json done = WaitForTask(api.port(), Json::parse(next->body).value("task_id", ""));
  EXPECT_EQ(done.value("status", ""), "completed") << done.dump() << worker->log();
  EXPECT_EQ(api.Stop(), 0) << api.log();
  EXPECT_EQ(worker->Stop(), 0) << worker->log();
  EXPECT_NE(worker->log().find("1 succeeded, 0 failed, 1 revoked (0 terminated)"),
            std::string::npos)
      << worker->log();
}

}  // namespace
}  // namespace mineru::apps
