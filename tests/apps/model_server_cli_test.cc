// SPDX-License-Identifier: Apache-2.0
// `--model-server` end to end against `mineru-cpp serve` on the tiny random checkpoints (2509 and
// pro-tiny, both with the Qwen2 tokenizer): `parse --model-server` writes byte-for-byte the files
// in-process `parse` writes, on every corpus PDF, for both profiles (the layout PDF's creation
// time aside); the profile is taken from the server's /v1/models; `serve --model-server` parses
// through the task API and MinerU's /file_parse as a serve with the weights does, and serves no
// OpenAI routes; `worker --model-server` answers a Python Celery client with what an in-process
// worker answers. Refusals: --model with --model-server, neither, a server that is not there.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../support/http_client.h"
#include "../support/rabbitmq_server.h"
#include "../support/redis_server.h"
#include "../support/subprocess.h"
#include "base/json.h"
#include "cli_test_util.h"
#include "output_trees.h"
#include "serve_process.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::CorpusPdfs;
using testing::Describe;
using testing::RunCli;
using testing::ServeProcess;
using testing::Succeeded;
using testing::TreeDifferences;

const std::string kCorpus = std::string(MINERU_TEST_DATA_DIR) + "/corpus";
const std::string kClient = std::string(MINERU_SOURCE_DIR) + "/tests/apps/celery_client.py";

Json ReadJson(const std::string& path) {
  return Json::parse(testing::ReadFile(path), nullptr, /*allow_exceptions=*/false);
}

class ModelServerCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string root = testing::ScratchRoot() + "/model_server_cli";
    tiny_ = new std::string(root + "/tiny");
    pro_ = new std::string(root + "/pro-tiny");
    for (const auto& [config, dir] : {std::pair{"tiny", tiny_}, std::pair{"pro-tiny", pro_}}) {
      fs::remove_all(*dir);
      const CliResult made = RunCli({"make-model", "--config", config, "--seed", "5", "-o", *dir,
                                     "--tokenizer-source", MINERU_QWEN_TOKENIZER});
      ASSERT_TRUE(Succeeded(made)) << Describe(made);
    }
  }
  static void TearDownTestSuite() {
    delete tiny_;
    delete pro_;
    tiny_ = pro_ = nullptr;
  }

  // parse in process, then through `serve` on the same checkpoint: the same files.
  static void ExpectSameFilesThroughTheServer(const std::string& model,
                                              const std::string& profile) {
    ServeProcess server({"--model", model});
    ASSERT_FALSE(server.url().empty()) << server.log();
    const std::string local = testing::TestDir() + "/local",
                      remote = testing::TestDir() + "/remote";
    std::vector<std::string> common = {"-e", "1", "--max-tokens", "24"};
    std::vector<std::string> in_process = {"parse"}, through = {"parse"};
    for (const std::string& pdf : CorpusPdfs()) {
      in_process.push_back(pdf);
      through.push_back(pdf);
    }
    in_process.insert(in_process.end(), {"-o", local, "--model", model});
    through.insert(through.end(), {"-o", remote, "--model-server", server.url()});
    in_process.insert(in_process.end(), common.begin(), common.end());
    through.insert(through.end(), common.begin(), common.end());
    const CliResult a = RunCli(in_process);
    ASSERT_TRUE(Succeeded(a)) << Describe(a);
    const CliResult b = RunCli(through);
    ASSERT_TRUE(Succeeded(b)) << Describe(b);
    EXPECT_NE(b.err.find("profile: " + profile + " (the model server says mineru_profile " +
                         profile + ")"),
              std::string::npos)
        << b.err;
    EXPECT_NE(b.err.find("model server: "), std::string::npos) << b.err;
    EXPECT_EQ(TreeDifferences(local, remote), std::vector<std::string>{});
    // Every request went to the server: as many as the in-process parse made, none failed.
    size_t reports = 0;
    for (const std::string& pdf : CorpusPdfs()) {
      const std::string stem = fs::path(pdf).stem().string();
      const Json report = ReadJson(remote + "/" + stem + "/vlm/" + stem + "_report.json");
      ASSERT_TRUE(report.is_object()) << stem;
      EXPECT_EQ(report["profile"], profile);
      EXPECT_EQ(report["failed_blocks"], 0) << report.dump();
      EXPECT_EQ(report["failed_pages"].size(), 0u) << report.dump();
      EXPECT_EQ(report["request_retries"], 0) << report.dump();
      // --max-tokens 24 cuts every random layout answer: each page's is listed as truncated.
      EXPECT_GE(report["truncated_requests"].size(), report["pages"].get<size_t>())
          << report.dump();
      ++reports;
    }
    EXPECT_EQ(reports, CorpusPdfs().size());
    EXPECT_EQ(server.Stop(), 0) << server.log();
  }

  static std::string* tiny_;
  static std::string* pro_;
};

std::string* ModelServerCliTest::tiny_ = nullptr;
std::string* ModelServerCliTest::pro_ = nullptr;

TEST_F(ModelServerCliTest, ParseThroughServeWritesTheInProcessFiles2509) {
  ExpectSameFilesThroughTheServer(*tiny_, "2509");
}

TEST_F(ModelServerCliTest, ParseThroughServeWritesTheInProcessFilesPro) {
  ExpectSameFilesThroughTheServer(*pro_, "pro");
}

TEST_F(ModelServerCliTest, ModelAndModelServerExcludeEachOtherAndOneIsNeeded) {
  const std::string out = testing::TestDir() + "/out";
  const std::string pdf = kCorpus + "/mineru_demo1.pdf";
  EXPECT_TRUE(testing::UsageError(
      RunCli({"parse", pdf, "-o", out, "--model", *tiny_, "--model-server", "http://127.0.0.1:9"}),
      {"--model"}));
  const CliResult serve = RunCli({"serve", "--port", "0"});
  EXPECT_TRUE(testing::ExitedWith(serve, 2)) << Describe(serve);
  EXPECT_NE(serve.err.find("--model DIR or --model-server URL"), std::string::npos) << serve.err;
  const CliResult worker =
      RunCli({"worker", "--queue", "amqp://127.0.0.1:9", "--cache", "redis://127.0.0.1:9"});
  EXPECT_TRUE(testing::ExitedWith(worker, 2)) << Describe(worker);
  EXPECT_NE(worker.err.find("--model DIR or --model-server URL"), std::string::npos) << worker.err;
}

TEST_F(ModelServerCliTest, AnUnreachableOrWrongServerIsAClearError) {
  const std::string out = testing::TestDir() + "/out";
  const std::string pdf = kCorpus + "/mineru_demo1.pdf";
  // Port 9 (discard) on loopback: nothing listens. Two quick retries, then the error.
  const CliResult r = RunCli({"parse", pdf, "-o", out, "--model-server", "http://127.0.0.1:9",
                              "--model-server-retries", "1"});
  EXPECT_TRUE(testing::FailedWith(r, {"model server", "/v1/models", "connect"})) << Describe(r);
  EXPECT_TRUE(testing::FailedWith(
      RunCli({"parse", pdf, "-o", out, "--model-server", "ftp://host/"}), {"only http and https"}));
  ServeProcess server({"--model", *tiny_});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const CliResult wrong = RunCli({"parse", pdf, "-o", out, "--model-server", server.url(),
                                  "--model-server-model", "no-such-model"});
  EXPECT_TRUE(testing::FailedWith(wrong, {"does not serve 'no-such-model'", "tiny"}))
      << Describe(wrong);
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

// A model server behind an API key: refused without it (the 401 named), accepted with
// --model-server-api-key and with $MINERU_VL_API_KEY (MinerU's client reads the same variable).
TEST_F(ModelServerCliTest, TheApiKeyComesFromTheFlagOrTheEnvironment) {
  ServeProcess server({"--model", *tiny_, "--api-key", "model-server-key"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const std::string out = testing::TestDir() + "/out";
  const std::vector<std::string> parse = {"parse",
                                          kCorpus + "/mineru_demo1.pdf",
                                          "-o",
                                          out,
                                          "-e",
                                          "0",
                                          "--max-tokens",
                                          "8",
                                          "--model-server",
                                          server.url()};
  std::vector<std::string> with_flag = parse;
  with_flag.insert(with_flag.end(), {"--model-server-api-key", "model-server-key"});
  const CliResult refused = RunCli(parse, {"MINERU_VL_API_KEY="});
  EXPECT_TRUE(testing::FailedWith(refused, {"/v1/models", "HTTP 401"})) << Describe(refused);
  const CliResult flag = RunCli(with_flag);
  EXPECT_TRUE(Succeeded(flag)) << Describe(flag);
  const CliResult env = RunCli(parse, {"MINERU_VL_API_KEY=model-server-key"});
  EXPECT_TRUE(Succeeded(env)) << Describe(env);
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST_F(ModelServerCliTest, ServeWithAModelServerParsesAsServeWithTheWeights) {
  ServeProcess model_server({"--model", *tiny_});
  ASSERT_FALSE(model_server.url().empty()) << model_server.log();
  ServeProcess front({"--model-server", model_server.url(), "--max-tokens", "16"});
  ASSERT_FALSE(front.url().empty()) << front.log();
  ServeProcess alone({"--model", *tiny_, "--max-tokens", "16"});
  ASSERT_FALSE(alone.url().empty()) << alone.log();
  EXPECT_NE(front.log().find("profile: 2509"), std::string::npos) << front.log();

  auto parse = [](const ServeProcess& server) {
    std::string content_type;
    const std::string body = testing_support::MultipartBody(
        {{"files", testing::ReadFile(kCorpus + "/mineru_demo1.pdf"), "demo.pdf", "application/pdf"},
         {"end_page_id", "1"},
         {"return_middle_json", "true"},
         {"return_content_list", "true"},
         {"return_md", "true"}},
        &content_type);
    auto reply =
        testing_support::Exchange(server.port(), "POST", "/file_parse", body, content_type);
    EXPECT_TRUE(reply);
    if (!reply) return Json();
    EXPECT_EQ(reply->status, 200) << reply->body;
    return Json::parse(reply->body, nullptr, false);
  };
  const Json a = parse(front), b = parse(alone);
  ASSERT_TRUE(a.is_object() && b.is_object());
  EXPECT_EQ(a["results"], b["results"]);
  EXPECT_TRUE(a["results"]["demo"].contains("md_content")) << a.dump();

  // The front has no weights: no OpenAI routes (the model server answers those).
  auto models = testing_support::Exchange(front.port(), "GET", "/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 404);
  // Its /metrics counts the model server's requests: two pages, two layout requests at least.
  auto metrics = testing_support::Exchange(front.port(), "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("mineru_model_server_requests_total{outcome=\"truncated\"} 2"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("mineru_model_server_request_seconds_count 2"), std::string::npos)
      << metrics->body;
  EXPECT_EQ(front.Stop(), 0) << front.log();
  EXPECT_EQ(alone.Stop(), 0) << alone.log();
  EXPECT_EQ(model_server.Stop(), 0) << model_server.log();
}

TEST_F(ModelServerCliTest, WorkerWithAModelServerAnswersAPythonCeleryClient) {
  const std::string dir = testing::TestDir();
  testing_support::RabbitMqServer rabbit(dir + "/rabbitmq");
  const std::string started = rabbit.Start();
  ASSERT_TRUE(started.empty()) << started;
  testing_support::RedisServer redis;
  ASSERT_TRUE(redis.Start());
  ServeProcess model_server({"--model", *pro_});
  ASSERT_FALSE(model_server.url().empty()) << model_server.log();
  const std::string pdf = kCorpus + "/mineru_demo1.pdf";
  // What the worker must answer: the files an in-process parse of the same pages writes.
  const std::string local = dir + "/local";
  const CliResult parsed = RunCli({"parse", pdf, "-o", local, "--model", *pro_, "-e", "0",
                                   "--max-tokens", "16", "--no-image-analysis"});
  ASSERT_TRUE(Succeeded(parsed)) << Describe(parsed);
  const Json expected_middle = ReadJson(local + "/mineru_demo1/vlm/mineru_demo1_middle.json");
  ASSERT_TRUE(expected_middle.is_object());

  ServeProcess worker("worker",
                      {"--model-server", model_server.url(), "--queue", rabbit.url(), "--cache",
                       redis.Url(), "--concurrent-tasks", "1", "--max-tokens", "16"},
                      {}, "worker ready");
  ASSERT_FALSE(worker.url().empty()) << worker.log();
  EXPECT_NE(worker.log().find("profile: pro (the model server says mineru_profile pro)"),
            std::string::npos)
      << worker.log();
  const auto r = testing_support::RunProcess(
      {"/usr/bin/python3", kClient, rabbit.url(), redis.Url(), "run", pdf, "--kwargs",
       R"({"return_middle_json": true, "end_page_id": 0, "image_analysis": false})"},
      {}, std::chrono::seconds(180));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << testing_support::Describe(r);
  const Json result = Json::parse(r.out, nullptr, false);
  ASSERT_EQ(result.value("status", ""), "SUCCESS") << r.out;
  EXPECT_EQ(result["result"]["pages"], 1);
  EXPECT_EQ(result["result"]["middle_json"], expected_middle);
  EXPECT_EQ(worker.Stop(), 0) << worker.log();
  EXPECT_EQ(model_server.Stop(), 0) << model_server.log();
  rabbit.Stop();
}

}  // namespace
}  // namespace mineru::apps
