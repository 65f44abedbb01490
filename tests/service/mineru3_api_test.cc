// SPDX-License-Identifier: Apache-2.0
// MinerU 3.4.4's mineru-api over real sockets, on a TaskManager whose model is a scripted
// generator: /file_parse answering the task's status fields with backend, version and results,
// the X-MinerU-Task-* headers, ZIPs named after the task with the original file on request,
// client_side_output_generation, the form checks answered 400 {"detail": ...}, the public-bind
// rule for *-http-client backends and server_url, a failed task's 409, /tasks/{id}/result's
// 202 and 409 bodies, and /health's fields.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "../pipeline/hanging_generator.h"
#include "../pipeline/scripted_generator.h"
#include "../pipeline/simple_page_script.h"
#include "../support/http_client.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "base/json.h"
#include "service/mineru_api.h"
#include "unzip.h"

namespace mineru::service {
namespace {

using testing_support::WaitUntil;

using pipeline::testing::HangingGenerator;
using pipeline::testing::PlainPng;
using pipeline::testing::ScriptedGenerator;
using pipeline::testing::SimplePageAnswer;
using std::chrono::milliseconds;
using testing_support::Exchange;
using testing_support::FormPart;
using testing_support::HttpReply;

// The fields of MinerU 3.4's task status payload.
constexpr const char* kStatusFields[] = {"task_id",    "status",     "backend",      "file_names",
                                         "created_at", "started_at", "completed_at", "error",
                                         "status_url", "result_url"};

Json BodyJson(const std::optional<HttpReply>& r) {
  EXPECT_TRUE(r);
  if (!r) return Json();
  Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << r->body;
  return json;
}

// MinerU 3.x's error body {"detail": message}, which also carries 2.7's {"error": message}.
void ExpectDetail(const std::optional<HttpReply>& r, int status, std::string_view detail) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  const Json json = BodyJson(r);
  EXPECT_EQ(json.value("detail", ""), detail) << r->body;
  EXPECT_EQ(json.value("error", ""), detail) << r->body;
}

using testing::Unzip;

class Mineru3ApiTest : public ::testing::Test {
 protected:
  template <class G>
  G& Start(std::unique_ptr<G> owned, MineruApiOptions api = Version34(),
           jobs::TaskManagerOptions options = {}) {
    G& generator = *owned;
    generator_ = std::move(owned);
    dir_ = testing_support::TestDir();
    options.work_dir = dir_ + "/tasks";
    options.model_fingerprint = "scripted";
    options.document.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
    auto tasks = jobs::TaskManager::Create(generator, options);
    EXPECT_TRUE(tasks) << tasks.error().ToString();
    if (!tasks) return generator;
    tasks_ = std::move(*tasks);
    AddMineruRoutes(server_, *tasks_, api);
    ServerOptions server_options;
    server_options.port = 0;
    server_options.handler_threads = 8;
    EXPECT_TRUE(server_.Start(server_options));
    port_ = server_.port();
    return generator;
  }
  static MineruApiOptions Version34() {
    MineruApiOptions api;
    api.version = MineruApiVersion::k3_4;
    return api;
  }
  void TearDown() override {
    server_.Stop(milliseconds(2000));
    tasks_.reset();
  }

  std::optional<HttpReply> Upload(const std::string& path, const std::vector<FormPart>& parts) {
    std::string content_type;
    const std::string body = testing_support::MultipartBody(parts, &content_type);
    return Exchange(port_, "POST", path, body, content_type);
  }
  std::optional<HttpReply> Get(const std::string& path) { return Exchange(port_, "GET", path); }

  std::string dir_;
  std::unique_ptr<pipeline::Generator> generator_;  // outlives tasks_
  std::unique_ptr<jobs::TaskManager> tasks_;
  HttpServer server_;
  int port_ = 0;
};

TEST_F(Mineru3ApiTest, FileParseAnswersStatusFieldsBackendVersionResultsAndHeaders) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  auto r = Upload("/file_parse", {{"files", PlainPng(400, 300, 250), "scan.png"},
                                  {"output_dir", "/tmp/ignored"},
                                  {"lang_list", "en"},
                                  {"parse_method", "ocr"}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json body = BodyJson(r);
  for (const char* key : kStatusFields) EXPECT_TRUE(body.contains(key)) << key;
  const std::string id = body.value("task_id", "");
  EXPECT_EQ(body["status"], "completed");
  EXPECT_TRUE(body["error"].is_null());
  EXPECT_TRUE(body["completed_at"].is_string());
  EXPECT_EQ(body["file_names"], Json::array({"scan.png"}));
  EXPECT_EQ(body["backend"], "hybrid-engine");  // 3.4's default backend
  EXPECT_TRUE(body["version"].is_string());
  EXPECT_EQ(body["results"]["scan"].size(), 1u);  // md_content only, the default
  EXPECT_NE(body["results"]["scan"].value("md_content", "").find("Words on the page."),
            std::string::npos);
  EXPECT_EQ(r->Header("x-mineru-task-id"), id);
  EXPECT_EQ(r->Header("x-mineru-task-status"), "completed");
  EXPECT_EQ(r->Header("x-mineru-task-status-url"), "/tasks/" + id);
  EXPECT_EQ(r->Header("x-mineru-task-result-url"), "/tasks/" + id + "/result");
  EXPECT_EQ(BodyJson(Get("/tasks/" + id))["status"], "completed");

  // The 2.x alias is answered under its current name.
  auto alias = Upload("/file_parse", {{"files", PlainPng(400, 300, 250), "scan.png"},
                                      {"backend", "vlm-auto-engine"}});
  EXPECT_EQ(BodyJson(alias)["backend"], "vlm-engine");
}

TEST_F(Mineru3ApiTest, ZipIsNamedAfterTheTaskAndCarriesTheOriginalFileWhenAsked) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  const std::string png = PlainPng(400, 300, 250);
  auto r = Upload("/file_parse", {{"files", png, "scan.png"},
                                  {"response_format_zip", "true"},
                                  {"return_original_file", "true"}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string id = r->Header("x-mineru-task-id");
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(r->Header("content-type"), "application/zip");
  EXPECT_EQ(r->Header("content-disposition"), "attachment; filename=\"" + id + ".zip\"");
  EXPECT_EQ(r->Header("x-mineru-task-status"), "completed");
  const auto entries = Unzip(r->body);
  EXPECT_EQ(entries.size(), 2u);
  EXPECT_TRUE(entries.count("scan/scan.md"));
  ASSERT_TRUE(entries.count("scan/scan_origin.png"));
  EXPECT_EQ(entries.at("scan/scan_origin.png"), png);

  // The same ZIP from /tasks/{id}/result (the choice was kept with the task).
  auto again = Get("/tasks/" + id + "/result");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->Header("content-disposition"), "attachment; filename=\"" + id + ".zip\"");
  EXPECT_EQ(Unzip(again->body), entries);

  // Not asked, or asked without a ZIP: no original.
  auto plain = Upload("/file_parse", {{"files", png, "scan.png"}, {"response_format_zip", "1"}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(Unzip(plain->body).count("scan/scan_origin.png"), 0u);
  auto json = Upload("/file_parse", {{"files", png, "scan.png"}, {"return_original_file", "1"}});
  EXPECT_EQ(BodyJson(json)["results"]["scan"].size(), 1u);
}

TEST_F(Mineru3ApiTest, ClientSideOutputGenerationReturnsTheStagedOutputsOnly) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  auto r = Upload("/file_parse", {{"files", PlainPng(400, 300, 250), "scan.png"},
                                  {"client_side_output_generation", "true"},
                                  {"return_md", "true"},
                                  {"return_content_list", "true"}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json body = BodyJson(r);
  const Json& scan = body["results"]["scan"];
  EXPECT_FALSE(scan.contains("md_content"));
  EXPECT_FALSE(scan.contains("content_list"));
  EXPECT_TRUE(scan["middle_json"].is_string());
  EXPECT_TRUE(scan["model_output"].is_string());
  EXPECT_TRUE(scan["images"].is_object());
}

TEST_F(Mineru3ApiTest, BadFormValuesAre400WithMinerusDetail) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  const std::string png = PlainPng(40, 30, 250);
  for (const std::string path : {"/file_parse", "/tasks"}) {
    ExpectDetail(Upload(path, {{"files", png, "a.png"}, {"backend", "vlm-transformers"}}), 400,
                 "Invalid backend. Allowed values: pipeline, vlm-engine, hybrid-engine, "
                 "vlm-http-client, hybrid-http-client");
    ExpectDetail(Upload(path, {{"files", png, "a.png"}, {"effort", "max"}}), 400,
                 "Invalid effort. Allowed values: medium, high");
    ExpectDetail(Upload(path, {{"files", png, "a.png"}, {"parse_method", "vlm"}}), 400,
                 "Invalid parse_method. Allowed values: auto, ocr, txt");
    ExpectDetail(Upload(path, {{"files", png, "a.png"}, {"lang_list", "klingon"}}), 400,
                 "Language klingon not supported. Allowed values: ch, ch_server, korean, ta, te, "
                 "ka, th, el, arabic, east_slavic, cyrillic, devanagari");
    auto unsupported = Upload(path, {{"files", "hello", "notes.txt"}});
    ASSERT_TRUE(unsupported);
    EXPECT_EQ(unsupported->status, 400);
    EXPECT_TRUE(
        BodyJson(unsupported).value("detail", "").starts_with("Unsupported file type: notes.txt"))
        << unsupported->body;
  }
  ExpectDetail(Get("/tasks/nope"), 404, "Task not found");
  ExpectDetail(Get("/tasks/nope/result"), 404, "Task not found");
  EXPECT_EQ(tasks_->Counts().pending + tasks_->Counts().completed, 0);  // nothing was queued
}

TEST_F(Mineru3ApiTest, PublicBindRefusesHttpClientBackendsAndServerUrlUnlessAllowed) {
  MineruApiOptions api = Version34();
  api.public_bind = true;
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer), api);
  const std::string png = PlainPng(40, 30, 250);
  for (const std::vector<FormPart>& fields : std::vector<std::vector<FormPart>>{
           {{"backend", "vlm-http-client"}},
           {{"backend", "hybrid-http-client"}},
           {{"backend", "pipeline"}, {"server_url", "http://x:1"}}}) {
    std::vector<FormPart> parts = {{"files", png, "a.png"}};
    parts.insert(parts.end(), fields.begin(), fields.end());
    for (const std::string path : {"/file_parse", "/tasks"}) {
      auto r = Upload(path, parts);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 400) << r->body;
      EXPECT_NE(BodyJson(r).value("detail", "").find("--allow-public-http-client"),
                std::string::npos)
          << r->body;
    }
  }
  // Local backends and a blank server_url pass.
  auto local = Upload("/tasks",
                      {{"files", png, "a.png"}, {"backend", "hybrid-engine"}, {"server_url", " "}});
  ASSERT_TRUE(local);
  EXPECT_EQ(local->status, 202) << local->body;
}

TEST_F(Mineru3ApiTest, PublicBindWithTheFlagAllowsHttpClientBackends) {
  MineruApiOptions api = Version34();
  api.public_bind = true;
  api.allow_public_http_client = true;
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer), api);
  auto r = Upload("/file_parse", {{"files", PlainPng(40, 30, 250), "a.png"},
                                  {"backend", "hybrid-http-client"},
                                  {"server_url", "http://127.0.0.1:1"}});  // never contacted
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyJson(r)["backend"], "hybrid-http-client");
}

TEST_F(Mineru3ApiTest, FailedTaskIs409WithTheStatusFields) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  auto r = Upload("/file_parse", {{"files", "%PDF-1.7\nnot really a PDF", "broken.pdf"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409) << r->body;
  const Json body = BodyJson(r);
  for (const char* key : kStatusFields) EXPECT_TRUE(body.contains(key)) << key;
  EXPECT_EQ(body["status"], "failed");
  EXPECT_EQ(body["message"], "Task execution failed");
  EXPECT_NE(body.value("error", "").find("Failed to process file: broken.pdf"), std::string::npos)
      << r->body;
  EXPECT_EQ(r->Header("x-mineru-task-status"), "failed");
  const std::string id = body.value("task_id", "");
  auto result = Get("/tasks/" + id + "/result");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 409);
  EXPECT_EQ(BodyJson(result)["message"], "Task execution failed");
  EXPECT_EQ(BodyJson(result)["status"], "failed");
}

TEST_F(Mineru3ApiTest, UnfinishedResultIs202WithTheStatusFields) {
  jobs::TaskManagerOptions options;
  options.concurrent_tasks = 1;
  HangingGenerator& generator =
      Start(std::make_unique<HangingGenerator>(), Version34(), std::move(options));
  auto submitted = Upload("/tasks", {{"files", PlainPng(200, 100, 7), "a.png"}});
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const Json task = BodyJson(submitted);
  EXPECT_EQ(task["message"], "Task submitted successfully");
  EXPECT_EQ(task["backend"], "hybrid-engine");
  const std::string id = task.value("task_id", "");
  WaitUntil([&] { return generator.submitted() != 0; });
  auto pending = Get("/tasks/" + id + "/result");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->status, 202);
  const Json body = BodyJson(pending);
  for (const char* key : kStatusFields) EXPECT_TRUE(body.contains(key)) << key;
  EXPECT_EQ(body["status"], "processing");
  EXPECT_EQ(body["message"], "Task result is not ready yet");
}

TEST_F(Mineru3ApiTest, HealthReportsProtocol2AndTheServersLimits) {
  jobs::TaskManagerOptions options;
  options.concurrent_tasks = 3;
  options.document.pages_in_flight = 5;
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer), Version34(), std::move(options));
  auto r = Get("/health");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json health = BodyJson(r);
  std::vector<std::string> keys;
  for (auto it = health.begin(); it != health.end(); ++it) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys,
            (std::vector<std::string>{
                "completed_tasks", "failed_tasks", "max_concurrent_requests", "processing_tasks",
                "processing_window_size", "protocol_version", "queued_tasks", "status",
                "task_cleanup_interval_seconds", "task_retention_seconds", "version"}));
  EXPECT_EQ(health["status"], "healthy");
  EXPECT_EQ(health["protocol_version"], 2);
  EXPECT_EQ(health["max_concurrent_requests"], 3);
  EXPECT_EQ(health["processing_window_size"], 5);
  EXPECT_EQ(health["task_cleanup_interval_seconds"], 300);
}

// The 2.7 answers stay where the releases differ; the rest is shared.
TEST_F(Mineru3ApiTest, Version27KeepsItsDefaultBackendAnd500ForAFailedFileParse) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer), MineruApiOptions{});
  auto ok = Upload("/file_parse", {{"files", PlainPng(400, 300, 250), "scan.png"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(BodyJson(ok)["backend"], "vlm-auto-engine");
  EXPECT_EQ(BodyJson(ok)["status"], "completed");  // the status fields are there too
  auto failed = Upload("/file_parse", {{"files", "%PDF-1.7\nnot really a PDF", "broken.pdf"}});
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 500) << failed->body;
  EXPECT_NE(BodyJson(failed).value("detail", "").find("Failed to process file: broken.pdf"),
            std::string::npos);
  EXPECT_EQ(failed->Header("x-mineru-task-status"), "failed");
  ExpectDetail(Upload("/tasks", {{"files", PlainPng(40, 30, 250), "a.png"}, {"effort", "x"}}), 400,
               "Invalid effort. Allowed values: medium, high");
}

}  // namespace
}  // namespace mineru::service
