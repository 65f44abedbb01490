// SPDX-License-Identifier: Apache-2.0
// The tiny MinerU2.5-Pro-shaped checkpoint (`make-model --config pro-tiny` with the Qwen2
// vocabulary) through the binary: `parse` picks the pro profile from the checkpoint's files and
// writes MinerU 3.4.4's files (every one valid against schemas/), `--profile 2509` forces the
// other; `serve` reports the profile on /v1/models and answers the chat shapes of today's client
// (no image, several images, a token limit past the context clamped to it); `worker` serves a
// Python Celery client with the pro profile.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/http_client.h"
#include "../support/rabbitmq_server.h"
#include "../support/redis_server.h"
#include "../support/subprocess.h"
#include "base/json.h"
#include "cli_test_util.h"
#include "image/data_url.h"
#include "image/encode.h"
#include "serve_process.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::Describe;
using testing::RunCli;
using testing::ServeProcess;
using testing::Succeeded;

const std::string kCorpus = std::string(MINERU_TEST_DATA_DIR) + "/corpus";
const std::string kValidator = std::string(MINERU_SOURCE_DIR) + "/tools/validate-outputs.py";
const std::string kClient = std::string(MINERU_SOURCE_DIR) + "/tests/apps/celery_client.py";

class ProProfileCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new std::string(testing::ScratchRoot() + "/pro_profile_cli/pro-tiny");
    fs::remove_all(*model_);
    const CliResult made = RunCli({"make-model", "--config", "pro-tiny", "--seed", "5", "-o",
                                   *model_, "--tokenizer-source", MINERU_QWEN_TOKENIZER});
    ASSERT_TRUE(Succeeded(made)) << Describe(made);
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(fs::is_regular_file(*model_ + "/chat_template.jinja")); }

  static std::string* model_;
};

std::string* ProProfileCliTest::model_ = nullptr;

Json ReadJson(const std::string& path) {
  Json json = Json::parse(testing::ReadFile(path), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << path;
  return json;
}

TEST_F(ProProfileCliTest, ParseChoosesTheProProfileAndWritesValidMineru344Files) {
  const std::string out = testing::TestDir() + "/out";
  const CliResult r = RunCli({"parse", kCorpus + "/mineru_demo1.pdf", "-o", out, "--model", *model_,
                              "-e", "1", "--max-tokens", "24"});
  ASSERT_TRUE(Succeeded(r)) << Describe(r);
  EXPECT_NE(r.err.find("profile: pro (config.json nests text_config)"), std::string::npos) << r.err;
  const std::string dir = out + "/mineru_demo1/vlm/mineru_demo1";
  EXPECT_EQ(ReadJson(dir + "_report.json")["profile"], "pro");
  const Json middle = ReadJson(dir + "_middle.json");
  EXPECT_EQ(middle["_version_name"], "3.4.4");
  ASSERT_EQ(middle["pdf_info"].size(), 2u);
  for (const Json& page : middle["pdf_info"]) {
    EXPECT_TRUE(page.contains("preproc_blocks")) << page.dump();
    EXPECT_TRUE(page.contains("para_blocks")) << page.dump();
  }
  EXPECT_TRUE(fs::is_regular_file(dir + "_content_list_v2.json"));
  EXPECT_TRUE(fs::is_regular_file(dir + "_layout.pdf"));
  const CliResult valid = testing_support::RunProcess({"/usr/bin/python3", kValidator, out});
  EXPECT_TRUE(valid.exited && valid.exit_code == 0) << Describe(valid);
}

TEST_F(ProProfileCliTest, ProfileCanBeForced) {
  const std::string out = testing::TestDir() + "/out";
  const CliResult r = RunCli({"parse", kCorpus + "/mineru_demo1.pdf", "-o", out, "--model", *model_,
                              "-e", "0", "--max-tokens", "8", "--profile", "2509"});
  ASSERT_TRUE(Succeeded(r)) << Describe(r);
  EXPECT_NE(r.err.find("profile: 2509 (forced)"), std::string::npos) << r.err;
  const std::string dir = out + "/mineru_demo1/vlm/mineru_demo1";
  EXPECT_EQ(ReadJson(dir + "_report.json")["profile"], "2509");
  EXPECT_EQ(ReadJson(dir + "_middle.json")["_version_name"], "2.7.6");
  const CliResult bad = RunCli({"parse", kCorpus + "/mineru_demo1.pdf", "-o", out, "--model",
                                *model_, "--profile", "pro-2605"});
  EXPECT_TRUE(testing::ExitedWith(bad, 2)) << Describe(bad);
}

// A data URL of a w x h grey PNG.
std::string PngDataUrl(int64_t w, int64_t h) {
  image::RgbImage img;
  img.width = w;
  img.height = h;
  img.pixels.assign(static_cast<size_t>(w * h * 3), 128);
  auto png = image::EncodePng(img);
  EXPECT_TRUE(png);
  return image::MakeDataUrl("image/png", *png);
}

Json ImagePart(const std::string& url) {
  return Json{{"type", "image_url"}, {"image_url", {{"url", url}}}};
}
Json TextPart(const std::string& text) { return Json{{"type", "text"}, {"text", text}}; }

// The body mineru-vl-utils 1.2.1's http-client sends, with `parts` as the user content.
Json ClientBody(const std::string& model, Json parts) {
  return Json{{"model", model},
              {"messages",
               {{{"role", "system"}, {"content", "You are a helpful assistant."}},
                {{"role", "user"}, {"content", std::move(parts)}}}},
              {"temperature", 0.0},
              {"top_p", 0.01},
              {"top_k", 1},
              {"presence_penalty", 1.0},
              {"frequency_penalty", 0.05},
              {"repetition_penalty", 1.0},
              {"vllm_xargs", {{"no_repeat_ngram_size", 100}, {"debug", false}}},
              {"skip_special_tokens", false}};
}

Json Chat(int port, const Json& body) {
  auto reply = testing_support::Exchange(port, "POST", "/v1/chat/completions", body.dump());
  EXPECT_TRUE(reply);
  if (!reply) return nullptr;
  EXPECT_EQ(reply->status, 200) << reply->body;
  return Json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
}

TEST_F(ProProfileCliTest, ServeAnswersTodaysClientShapes) {
  constexpr int64_t kContext = 600;
  ServeProcess server({"--model", *model_, "--served-model-name", "mineru", "--max-context",
                       std::to_string(kContext)});
  ASSERT_FALSE(server.url().empty()) << server.log();
  EXPECT_NE(server.log().find("profile: pro"), std::string::npos) << server.log();

  auto models = testing_support::Exchange(server.port(), "GET", "/v1/models");
  ASSERT_TRUE(models);
  const Json listed = Json::parse(models->body, nullptr, false);
  ASSERT_EQ(listed["data"].size(), 1u) << models->body;
  EXPECT_EQ(listed["data"][0]["id"], "mineru");
  EXPECT_EQ(listed["data"][0]["mineru_profile"], "pro");

  // Text only (the cross-page table merge request), with a limit.
  Json text_only =
      ClientBody("mineru", Json::array({TextPart("Please merge the next two tables.")}));
  text_only["max_tokens"] = 4;
  text_only["max_completion_tokens"] = 4;
  const Json a = Chat(server.port(), text_only);
  ASSERT_TRUE(a.is_object());
  EXPECT_EQ(a["usage"]["completion_tokens"], 4) << a.dump();
  EXPECT_EQ(a["choices"][0]["finish_reason"], "length");
  const int64_t text_tokens = a["usage"]["prompt_tokens"].get<int64_t>();

  // One and two images: a 56 x 56 crop grows to 224 x 224 under the Pro min_pixels (50176),
  // 64 image tokens, plus <|vision_start|> and <|vision_end|>; text parts stay in place.
  const std::string image = PngDataUrl(56, 56);
  Json one = ClientBody(
      "mineru", Json::array({ImagePart(image), TextPart("Please merge the next two tables.")}));
  one["max_tokens"] = 2;
  Json two = ClientBody(
      "mineru", Json::array({ImagePart(image), TextPart("Please merge the next two tables."),
                             ImagePart(image)}));
  two["max_tokens"] = 2;
  const Json b = Chat(server.port(), one);
  const Json c = Chat(server.port(), two);
  ASSERT_TRUE(b.is_object() && c.is_object());
  EXPECT_EQ(b["usage"]["prompt_tokens"].get<int64_t>(), text_tokens + 66) << b.dump();
  EXPECT_EQ(c["usage"]["prompt_tokens"].get<int64_t>(), text_tokens + 2 * 66) << c.dump();

  // A limit far past the context: clamped to what the context leaves, finish_reason "length".
  Json huge = ClientBody("mineru", Json::array({TextPart("x")}));
  huge["vllm_xargs"]["no_repeat_ngram_size"] = 0;
  huge["max_tokens"] = 1000000;
  huge["max_completion_tokens"] = 1000000;
  const Json d = Chat(server.port(), huge);
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["choices"][0]["finish_reason"], "length") << d.dump();
  EXPECT_EQ(d["usage"]["total_tokens"], kContext) << d.dump();
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST_F(ProProfileCliTest, ServeParsesADocumentWithTheProProfile) {
  ServeProcess server({"--model", *model_, "--max-tokens", "16"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  std::string content_type;
  const std::string body = testing_support::MultipartBody(
      {{"files", testing::ReadFile(kCorpus + "/mineru_demo1.pdf"), "demo.pdf", "application/pdf"},
       {"end_page_id", "0"},
       {"return_middle_json", "true"},
       {"return_content_list", "true"},
       {"image_analysis", "false"},
       {"backend", "vlm-auto-engine"}},
      &content_type);
  auto reply = testing_support::Exchange(server.port(), "POST", "/file_parse", body, content_type);
  ASSERT_TRUE(reply);
  ASSERT_EQ(reply->status, 200) << reply->body;
  const Json answer = Json::parse(reply->body, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << reply->body;
  // MinerU 3.4's answer: the task's status fields, then backend, version and results.
  EXPECT_EQ(answer["status"], "completed") << reply->body;
  EXPECT_EQ(answer["backend"], "vlm-engine") << reply->body;
  const Json middle =
      Json::parse(answer["results"]["demo"]["middle_json"].get<std::string>(), nullptr, false);
  EXPECT_EQ(middle["_version_name"], "3.4.4");
  EXPECT_TRUE(middle["pdf_info"][0].contains("preproc_blocks"));
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST_F(ProProfileCliTest, WorkerServesACeleryClientWithTheProProfile) {
  testing_support::RabbitMqServer rabbit(testing::TestDir() + "/rabbitmq");
  const std::string started = rabbit.Start();
  ASSERT_TRUE(started.empty()) << started;
  testing_support::RedisServer redis;
  ASSERT_TRUE(redis.Start());
  ServeProcess worker("worker",
                      {"--model", *model_, "--queue", rabbit.url(), "--cache", redis.Url(),
                       "--concurrent-tasks", "1", "--max-tokens", "16"},
                      {}, "worker ready");
  ASSERT_FALSE(worker.url().empty()) << worker.log();
  EXPECT_NE(worker.log().find("profile: pro"), std::string::npos) << worker.log();
  const auto r = testing_support::RunProcess(
      {"/usr/bin/python3", kClient, rabbit.url(), redis.Url(), "run", kCorpus + "/mineru_demo1.pdf",
       "--kwargs", R"({"return_middle_json": true, "end_page_id": 0, "image_analysis": false})"},
      {}, std::chrono::seconds(180));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << testing_support::Describe(r);
  const Json result = Json::parse(r.out, nullptr, false);
  ASSERT_EQ(result.value("status", ""), "SUCCESS") << r.out;
  EXPECT_EQ(result["result"]["pages"], 1);
  EXPECT_EQ(result["result"]["middle_json"]["_version_name"], "3.4.4");
  EXPECT_EQ(worker.Stop(), 0) << worker.log();
  rabbit.Stop();
}

}  // namespace
}  // namespace mineru::apps
