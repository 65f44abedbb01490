// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp serve` end to end on a tiny random checkpoint with the Qwen2 tokenizer: every
// surface answers through the one binary (probes, web UI, our document API, MinerU's health,
// metrics), a repeated document is a cache hit that bench-http's parse mode measures, SIGTERM
// exits 0 and removes the default work directory, and bad flags or models are refused. With a
// real redis-server: two nodes answer each other's tasks, and a stopped Redis costs only the
// cache.
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "../support/http_client.h"
#include "../support/redis_server.h"
#include "base/json.h"
#include "cli_test_util.h"
#include "serve_process.h"
#include "serve_usage.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::Describe;
using testing::MetricSample;
using testing::RunCli;
using testing::ServeProcess;
using testing::Succeeded;
using testing::UsageError;
using testing_support::Exchange;

const std::string kShapesPdf = std::string(MINERU_TEST_DATA_DIR) + "/pdf/shapes.pdf";  // 3 pages

// A tiny checkpoint in <scratch>/model (scratch: the test's one TestDir()).
std::string TinyModel(const std::string& scratch) {
  const std::string dir = scratch + "/model";
  const CliResult made = RunCli(
      {"make-model", "--config", "tiny", "-o", dir, "--tokenizer-source", MINERU_QWEN_TOKENIZER});
  EXPECT_TRUE(Succeeded(made)) << Describe(made);
  return dir;
}

Json JsonOf(const std::optional<testing_support::HttpReply>& r) {
  EXPECT_TRUE(r);
  if (!r) return Json();
  Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << r->body;
  return json;
}

TEST(ServeCliTest, EverySurfaceAnswersAndSigtermExitsZero) {
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  const std::string work = scratch + "/work";
  ServeProcess server({"--model", model, "--work-dir", work, "--max-tokens", "8"});
  ASSERT_EQ(server.url().rfind("http://127.0.0.1:", 0), 0u) << server.log();
  const int port = server.port();

  auto ready = Exchange(port, "GET", "/health/ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  auto index = Exchange(port, "GET", "/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->Header("content-security-policy").find("default-src 'self'"), std::string::npos);
  EXPECT_EQ(JsonOf(Exchange(port, "GET", "/health"))["status"], "healthy");

  // A document through our API, polled to completion.
  auto submitted = Exchange(port, "POST", "/v1/document/parse?filename=shapes.pdf",
                            testing::ReadFile(kShapesPdf), "application/pdf");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const std::string id = JsonOf(submitted)["task_id"];
  Json task;
  for (int i = 0; i < 6000; ++i) {
    task = JsonOf(Exchange(port, "GET", "/v1/tasks/" + id));
    if (task["status"] != "pending" && task["status"] != "processing") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(task["status"], "completed") << task.dump();
  EXPECT_EQ(task["progress"]["pages_done"], 3);
  EXPECT_TRUE(fs::exists(work + "/" + id));  // --work-dir is used

  // The same document again through bench-http's parse and file_parse modes: from the cache.
  const CliResult bench = RunCli({"bench-http", "--url", server.url(), "--kind", "parse", "--file",
                                  kShapesPdf, "--clients", "1", "--requests", "2"});
  EXPECT_TRUE(Succeeded(bench)) << Describe(bench);
  const CliResult mineru = RunCli({"bench-http", "--url", server.url(), "--kind", "file_parse",
                                   "--file", kShapesPdf, "--clients", "1", "--requests", "2"});
  EXPECT_TRUE(Succeeded(mineru)) << Describe(mineru);

  auto metrics = Exchange(port, "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(MetricSample(metrics->body, "mineru_pages_total", ""), 3.0) << metrics->body;
  EXPECT_EQ(MetricSample(metrics->body, "mineru_cache_requests_total", "result=\"hit\""), 4.0);
  EXPECT_GE(MetricSample(metrics->body, "mineru_http_requests_total",
                         "route=\"/v1/document/parse\",status=\"202\""),
            3.0);
  EXPECT_GT(MetricSample(metrics->body, "process_resident_memory_bytes", ""), 0.0);
  EXPECT_GT(MetricSample(metrics->body, "mineru_generation_tokens_total", ""), 0.0);

  // --unique uploads other bytes each time: a miss, parsed again.
  const CliResult unique =
      RunCli({"bench-http", "--url", server.url(), "--kind", "parse", "--unique", "--file",
              kShapesPdf, "--clients", "1", "--requests", "1"});
  EXPECT_TRUE(Succeeded(unique)) << Describe(unique);
  auto after = Exchange(port, "GET", "/metrics");
  ASSERT_TRUE(after);
  EXPECT_EQ(MetricSample(after->body, "mineru_cache_requests_total", "result=\"hit\""), 4.0);
  EXPECT_EQ(MetricSample(after->body, "mineru_pages_total", ""), 6.0);

  EXPECT_EQ(server.Stop(), 0) << server.log();
  EXPECT_NE(server.log().find("received SIGTERM"), std::string::npos) << server.log();
}

// Polls GET /v1/tasks/{id} on `port` until the task is final (or 120 s pass); the last object.
Json WaitFinal(int port, const std::string& id) {
  Json task;
  for (int i = 0; i < 6000; ++i) {
    task = JsonOf(Exchange(port, "GET", "/v1/tasks/" + id));
    if (task.value("status", "") != "pending" && task.value("status", "") != "processing") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return task;
}

TEST(ServeCliTest, TwoNodesOnOneRedisAnswerEachOthersTasks) {
  testing_support::RedisServer redis;
  ASSERT_TRUE(redis.Start());
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  ServeProcess a({"--model", model, "--work-dir", scratch + "/a", "--max-tokens", "8", "--cache",
                  redis.Url()});
  ServeProcess b({"--model", model, "--work-dir", scratch + "/b", "--max-tokens", "8", "--cache",
                  redis.Url()});
  ASSERT_FALSE(a.url().empty()) << a.log();
  ASSERT_FALSE(b.url().empty()) << b.log();

  auto submitted = Exchange(a.port(), "POST", "/v1/document/parse?filename=shapes.pdf",
                            testing::ReadFile(kShapesPdf), "application/pdf");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const std::string id = JsonOf(submitted)["task_id"];
  // Node b knows the task from the moment a answered, and follows it to the end.
  auto first_look = Exchange(b.port(), "GET", "/v1/tasks/" + id);
  ASSERT_TRUE(first_look);
  EXPECT_EQ(first_look->status, 200) << first_look->body;
  const Json done = WaitFinal(b.port(), id);
  ASSERT_EQ(done["status"], "completed") << done.dump();
  EXPECT_EQ(done["progress"]["pages_done"], 3);

  // The same result from either node, and the ZIP, MinerU's task API and the event stream
  // from the node that did not parse it.
  auto from_a = Exchange(a.port(), "GET", "/v1/tasks/" + id + "/result");
  auto from_b = Exchange(b.port(), "GET", "/v1/tasks/" + id + "/result");
  ASSERT_TRUE(from_a && from_b);
  EXPECT_EQ(from_b->status, 200) << from_b->body;
  EXPECT_EQ(from_b->body, from_a->body);
  auto zip = Exchange(b.port(), "GET", "/v1/tasks/" + id + "/zip");
  ASSERT_TRUE(zip);
  EXPECT_EQ(zip->status, 200);
  EXPECT_EQ(zip->body.substr(0, 2), "PK");
  auto mineru_task = Exchange(b.port(), "GET", "/tasks/" + id);
  ASSERT_TRUE(mineru_task);
  EXPECT_EQ(mineru_task->status, 200) << mineru_task->body;
  EXPECT_EQ(JsonOf(mineru_task)["task_id"], id);
  auto mineru_result = Exchange(b.port(), "GET", "/tasks/" + id + "/result");
  ASSERT_TRUE(mineru_result);
  EXPECT_EQ(mineru_result->status, 200) << mineru_result->body;
  auto events = Exchange(b.port(), "GET", "/v1/tasks/" + id + "/events");
  ASSERT_TRUE(events);
  EXPECT_NE(events->body.find("event: done"), std::string::npos) << events->body;
  // Page previews render from the input, which only the accepting node keeps.
  auto preview = Exchange(b.port(), "GET", "/v1/tasks/" + id + "/pages/0/0");
  ASSERT_TRUE(preview);
  EXPECT_EQ(preview->status, 404);
  EXPECT_NE(preview->body.find("another node"), std::string::npos) << preview->body;

  // bench-http reads the task's state from the node that does not own it.
  const CliResult reads = RunCli({"bench-http", "--url", b.url(), "--kind", "get", "--path",
                                  "/v1/tasks/" + id, "--clients", "1,4", "--requests", "20"});
  EXPECT_TRUE(Succeeded(reads)) << Describe(reads);
  EXPECT_NE(reads.out.find("bench-http get"), std::string::npos) << reads.out;

  // Deleted through b: gone from a too.
  auto deleted = Exchange(b.port(), "DELETE", "/v1/tasks/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200) << deleted->body;
  int status = 200;
  for (int i = 0; i < 200 && status != 404; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto polled = Exchange(a.port(), "GET", "/v1/tasks/" + id);
    ASSERT_TRUE(polled);
    status = polled->status;
  }
  EXPECT_EQ(status, 404);
  auto unknown = Exchange(b.port(), "GET", "/v1/tasks/" + id);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  const CliResult gone = RunCli({"bench-http", "--url", b.url(), "--kind", "get", "--path",
                                 "/v1/tasks/" + id, "--clients", "1", "--requests", "1"});
  EXPECT_EQ(gone.exit_code, 1) << Describe(gone);  // every request answered 404
  EXPECT_EQ(a.Stop(), 0) << a.log();
  EXPECT_EQ(b.Stop(), 0) << b.log();
}

TEST(ServeCliTest, RedisStoppedCostsOnlyTheCache) {
  testing_support::RedisServer redis;
  ASSERT_TRUE(redis.Start());
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  ServeProcess server({"--model", model, "--work-dir", scratch + "/work", "--max-tokens", "8",
                       "--cache", redis.Url()});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const int port = server.port();
  redis.Stop();

  // MinerU's synchronous parse and our task API both still answer.
  std::string content_type;
  const std::string form = testing_support::MultipartBody(
      {{"files", testing::ReadFile(kShapesPdf), "shapes.pdf", "application/pdf"}}, &content_type);
  auto parsed = Exchange(port, "POST", "/file_parse", form, content_type);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->status, 200) << parsed->body;
  auto submitted = Exchange(port, "POST", "/v1/document/parse?filename=shapes.pdf",
                            testing::ReadFile(kShapesPdf), "application/pdf");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  EXPECT_EQ(WaitFinal(port, JsonOf(submitted)["task_id"])["status"], "completed");
  auto unknown = Exchange(port, "GET", "/v1/tasks/00000000-0000-4000-8000-000000000000");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  auto ready = Exchange(port, "GET", "/health/ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  // The failed lookups are counted (the repeat was still a hit: the in-process cache).
  auto metrics = Exchange(port, "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_GT(MetricSample(metrics->body, "mineru_cache_requests_total", "result=\"error\""), 0.0)
      << metrics->body;
  EXPECT_EQ(
      MetricSample(metrics->body, "mineru_cache_requests_total", "tier=\"memory\",result=\"hit\""),
      1.0)
      << metrics->body;
  EXPECT_GT(MetricSample(metrics->body, "mineru_shared_task_errors_total", ""), 0.0);
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST(ServeCliTest, DefaultWorkDirectoryIsRemovedAtExit) {
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  const std::string tmp = scratch + "/tmp";
  fs::create_directories(tmp);
  ServeProcess server({"--model", model}, {"TMPDIR=" + tmp});
  ASSERT_FALSE(server.url().empty()) << server.log();
  EXPECT_FALSE(fs::is_empty(tmp));  // mineru-cpp-XXXXXX
  EXPECT_EQ(server.Stop(), 0) << server.log();
  EXPECT_TRUE(fs::is_empty(tmp));
}

// Without --served-model-name the model id is the checkpoint directory's name: before, it was
// the --model argument itself, so /v1/models and every "unknown model" error showed the server's
// path to its checkpoint (here <scratch>/model/).
TEST(ServeCliTest, ModelIdIsTheDirectoryNameNotItsPath) {
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  ServeProcess server({"--model", model + "/", "--work-dir", scratch + "/work"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto models = Exchange(server.port(), "GET", "/v1/models");
  const Json listed = JsonOf(models);
  ASSERT_EQ(listed["data"].size(), 1u) << models->body;
  EXPECT_EQ(listed["data"][0]["id"], "model");
  EXPECT_EQ(models->body.find(scratch), std::string::npos) << models->body;
  const Json chat{{"model", "gpt-4o"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  auto unknown = Exchange(server.port(), "POST", "/v1/chat/completions", chat.dump());
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  EXPECT_NE(unknown->body.find("'model'"), std::string::npos) << unknown->body;
  EXPECT_EQ(unknown->body.find(scratch), std::string::npos) << unknown->body;
}

TEST(ServeCliTest, BadFlagsAndModelsAreRefused) {
  EXPECT_TRUE(UsageError(RunCli({"serve", "--model", "m", "--port", "70000"})));
  EXPECT_TRUE(UsageError(RunCli({"serve", "--model", "m", "--max-queued-tasks", "0"})));
  EXPECT_TRUE(UsageError(RunCli({"serve", "--model", "m", "--concurrent-tasks", "0"})));
  EXPECT_TRUE(UsageError(RunCli({"serve", "--model", "m", "--max-form-parts", "0"})));
  EXPECT_TRUE(UsageError(RunCli({"serve"})));  // --model is required
  const CliResult missing = RunCli({"serve", "--model", testing::TestDir() + "/no-such-model"});
  EXPECT_TRUE(testing::ExitedWith(missing, 1)) << Describe(missing);
}

// White PNGs of 28 x 28 (2,352 bytes decoded) and 28 x 29 (2,436 bytes), and the first as base64.
const std::string kWhitePng28(
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x1c\x00\x00"
    "\x00\x1c\x08\x02\x00\x00\x00\xfd\x6f\x48\xc3\x00\x00\x00\x22\x49\x44\x41\x54\x78\xda\x63"
    "\xf8\x4f\x03\xc0\x30\x6a\xe8\xa8\xa1\xa3\x86\x8e\x1a\x3a\x6a\xe8\xa8\xa1\xa3\x86\x8e\x1a"
    "\x3a\x32\x0c\x05\x00\xf2\x60\x27\x58\x07\x98\x30\xea\x00\x00\x00\x00\x49\x45\x4e\x44\xae"
    "\x42\x60\x82",
    91);
const std::string kWhitePng28x29(
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x1c\x00\x00"
    "\x00\x1d\x08\x02\x00\x00\x00\x36\x33\x9b\x66\x00\x00\x00\x23\x49\x44\x41\x54\x78\xda\x63"
    "\xf8\x4f\x03\xc0\x30\x6a\xe8\xa8\xa1\xa3\x86\x8e\x1a\x3a\x6a\xe8\xa8\xa1\xa3\x86\x8e\x1a"
    "\x3a\x6a\x28\xd9\x00\x00\xe8\x3b\x7b\x04\xfc\xee\xee\xad\x00\x00\x00\x00\x49\x45\x4e\x44"
    "\xae\x42\x60\x82",
    92);
constexpr char kWhitePng28Base64[] =
    "iVBORw0KGgoAAAANSUhEUgAAABwAAAAcCAIAAAD9b0jDAAAAIklEQVR42mP4TwPAMGroqKGjho4aOmroqKGjho4aOjIM"
    "BQDyYCdYB5gw6gAAAABJRU5ErkJggg==";

// The flags of issue 14's request limits reach the chat API and the uploads: each limit set on
// the command line is exact there (the limit accepted, one past it refused naming the flag), and
// contradictory or out-of-range values are usage errors.
TEST(ServeCliTest, RequestCostFlagsReachTheChatApiAndUploads) {
  EXPECT_TRUE(UsageError(RunCli({"serve", "--model", "m", "--max-no-repeat-ngram-size", "0"})));
  EXPECT_TRUE(UsageError(RunCli({"serve", "--model", "m", "--max-stop-strings", "4097"})));
  EXPECT_TRUE(UsageError(RunCli({"serve", "--model", "m", "--max-image-bytes-in-flight", "10",
                                 "--max-request-decoded-bytes", "20"})));
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  ServeProcess server({"--model", model, "--work-dir", scratch + "/work", "--max-tokens", "4",
                       "--max-no-repeat-ngram-size", "100", "--max-stop-strings", "1",
                       "--max-request-decoded-bytes", "2352", "--max-image-bytes-in-flight",
                       "1000000"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const int port = server.port();
  const auto chat = [&](Json body) {
    body["max_tokens"] = 4;
    return Exchange(port, "POST", "/v1/chat/completions", body.dump());
  };
  const std::string png = std::string("data:image/png;base64,") + kWhitePng28Base64;
  const Json image_part = {{"type", "image_url"}, {"image_url", {{"url", png}}}};
  const Json text = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  Json ngram = text;
  ngram["vllm_xargs"] = {{"no_repeat_ngram_size", 100}};
  auto at = chat(ngram);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->status, 200) << at->body;
  ngram["vllm_xargs"] = {{"no_repeat_ngram_size", 101}};
  auto past = chat(ngram);
  ASSERT_TRUE(past);
  EXPECT_EQ(past->status, 400) << past->body;
  EXPECT_NE(past->body.find("--max-no-repeat-ngram-size"), std::string::npos) << past->body;
  Json stops = text;
  stops["stop"] = {"a", "b"};
  auto two = chat(stops);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->status, 400) << two->body;
  EXPECT_NE(two->body.find("--max-stop-strings"), std::string::npos) << two->body;
  // One 28 x 28 image is exactly the decoded-bytes limit; two are 413.
  Json one_image = {{"messages", {{{"role", "user"}, {"content", {image_part}}}}}};
  auto fits = chat(one_image);
  ASSERT_TRUE(fits);
  EXPECT_EQ(fits->status, 200) << fits->body;
  Json two_images = {{"messages", {{{"role", "user"}, {"content", {image_part, image_part}}}}}};
  auto over = chat(two_images);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 413) << over->body;
  EXPECT_NE(over->body.find("--max-request-decoded-bytes"), std::string::npos) << over->body;
  // The same limit for an uploaded image document: 28 x 28 is accepted, 28 x 29 refused.
  auto upload =
      Exchange(port, "POST", "/v1/document/parse?filename=page.png", kWhitePng28, "image/png");
  ASSERT_TRUE(upload);
  EXPECT_EQ(upload->status, 202) << upload->body;
  auto taller =
      Exchange(port, "POST", "/v1/document/parse?filename=page.png", kWhitePng28x29, "image/png");
  ASSERT_TRUE(taller);
  EXPECT_EQ(taller->status, 400) << taller->body;
  EXPECT_NE(taller->body.find("--max-request-decoded-bytes"), std::string::npos) << taller->body;
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

}  // namespace
}  // namespace mineru::apps

namespace mineru::apps {
namespace {

TEST(WorkerCliArgsTest, BadUrlsAndMissingBackendAreRefusedBeforeAnyWork) {
  const std::string model = testing::TestDir() + "/no-such-model";
  EXPECT_TRUE(testing::UsageError(RunCli({"worker", "--model", model})));  // --queue required
  // No result backend: a usage error naming --cache.
  const CliResult no_cache = RunCli({"worker", "--model", model, "--queue", "amqp://h/"});
  EXPECT_TRUE(testing::ExitedWith(no_cache, 2)) << Describe(no_cache);
  EXPECT_NE(no_cache.err.find("--cache"), std::string::npos) << Describe(no_cache);
  const CliResult bad_queue =
      RunCli({"worker", "--model", model, "--queue", "http://h/", "--cache", "redis://h"});
  EXPECT_TRUE(testing::FailedWith(bad_queue, {"amqp"})) << Describe(bad_queue);
  const CliResult bad_cache =
      RunCli({"worker", "--model", model, "--queue", "amqp://h/", "--cache", "memcached://h"});
  EXPECT_TRUE(testing::ExitedWith(bad_cache, 2)) << Describe(bad_cache);  // checked as a flag
  EXPECT_NE(bad_cache.err.find("is not a Redis URL"), std::string::npos) << Describe(bad_cache);
  // serve --queue needs the result backend too.
  const CliResult serve_no_cache = RunCli({"serve", "--model", model, "--queue", "amqp://h/"});
  EXPECT_TRUE(testing::ExitedWith(serve_no_cache, 2)) << Describe(serve_no_cache);
  EXPECT_NE(serve_no_cache.err.find("--queue needs --cache"), std::string::npos);
  const CliResult serve_bad_queue =
      RunCli({"serve", "--model", model, "--queue", "http://h/", "--cache", "redis://h"});
  EXPECT_TRUE(testing::FailedWith(serve_bad_queue, {"amqp"})) << Describe(serve_bad_queue);
}

}  // namespace
}  // namespace mineru::apps
