// SPDX-License-Identifier: Apache-2.0
// Our document API (/v1/document/parse, /v1/tasks/...) and MinerU's (/file_parse, /tasks,
// /health) over real sockets, on a TaskManager whose model is a scripted generator: uploads as
// multipart and raw bodies, polling, progress events, results as JSON, ZIP, images and page
// previews, deletion, a disconnecting /file_parse client, a full queue, and every error answer.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "../pipeline/hanging_generator.h"
#include "../pipeline/scripted_generator.h"
#include "../pipeline/simple_page_script.h"
#include "../support/http_client.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "base/json.h"
#include "image/encode.h"
#include "image/image.h"
#include "pipeline/block_requests.h"
#include "service/document_api.h"
#include "service/mineru_api.h"
#include "unzip.h"

namespace mineru::service {
namespace {

using testing_support::WaitUntil;

using pipeline::testing::HangingGenerator;
using pipeline::testing::PlainPng;
using pipeline::testing::ScriptedCall;
using pipeline::testing::ScriptedGenerator;
using pipeline::testing::SimplePageAnswer;
using std::chrono::milliseconds;
using testing_support::Client;
using testing_support::Exchange;
using testing_support::FormPart;
using testing_support::HttpReply;
using testing_support::MultipartBody;

std::string CorpusPdf() {
  return testing_support::ReadFile(std::string(MINERU_TEST_DATA_DIR) +
                                   "/corpus/mineru_small_ocr.pdf");  // 8 pages
}

Json BodyJson(const std::optional<HttpReply>& r) {
  EXPECT_TRUE(r);
  if (!r) return Json();
  Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << r->body;
  return json;
}

void ExpectApiError(const std::optional<HttpReply>& r, int status, std::string_view says) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  Json json = BodyJson(r);
  EXPECT_EQ(json.value("object", ""), "error") << r->body;
  ASSERT_TRUE(json["error"].is_object()) << r->body;
  EXPECT_NE(json["error"].value("message", "").find(says), std::string::npos) << r->body;
  // Every error names its code (docs/API.md, "Errors"); it was null for most.
  EXPECT_TRUE(json["error"]["code"].is_string()) << r->body;
}

// The code of an error answer ("" when it has none).
std::string CodeOf(const std::optional<HttpReply>& r) {
  if (!r) return "";
  Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json["error"].is_object()) return "";
  const Json& code = json["error"]["code"];
  return code.is_string() ? code.get<std::string>() : "";
}

void ExpectMineruError(const std::optional<HttpReply>& r, int status, std::string_view says) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  Json json = BodyJson(r);
  ASSERT_TRUE(json["error"].is_string()) << r->body;
  EXPECT_NE(json["error"].get<std::string>().find(says), std::string::npos) << r->body;
}

using testing::Unzip;

class TaskApiTest : public ::testing::Test {
 protected:
  // Takes the generator (it must outlive the task manager's threads) and starts the server.
  template <class G>
  G& Start(std::unique_ptr<G> owned, jobs::TaskManagerOptions options = {}) {
    G& generator = *owned;
    generator_ = std::move(owned);
    StartWith(generator, std::move(options));
    return generator;
  }
  void StartWith(pipeline::Generator& generator, jobs::TaskManagerOptions options) {
    dir_ = testing_support::TestDir();
    options.work_dir = dir_ + "/tasks";
    options.model_fingerprint = "scripted";
    options.document.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
    auto tasks = jobs::TaskManager::Create(generator, options);
    ASSERT_TRUE(tasks) << tasks.error().ToString();
    tasks_ = std::move(*tasks);
    DocumentApiOptions document;
    document.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
    AddDocumentRoutes(server_, *tasks_, document);
    MineruApiOptions mineru;
    mineru.ready = [this] { return server_.ready() && !not_ready_; };
    AddMineruRoutes(server_, *tasks_, mineru);
    ServerOptions server_options;
    server_options.port = 0;
    server_options.handler_threads = 8;
    ASSERT_TRUE(server_.Start(server_options));
    port_ = server_.port();
  }
  void TearDown() override {
    server_.Stop(milliseconds(2000));
    tasks_.reset();
  }

  std::optional<HttpReply> Upload(const std::string& path, const std::vector<FormPart>& parts) {
    std::string content_type;
    const std::string body = MultipartBody(parts, &content_type);
    return Exchange(port_, "POST", path, body, content_type);
  }
  std::optional<HttpReply> Get(const std::string& path) { return Exchange(port_, "GET", path); }

  // Polls GET /v1/tasks/{id} until the task is final.
  Json WaitFinal(const std::string& id) {
    for (int i = 0; i < 3000; ++i) {
      Json task = BodyJson(Get("/v1/tasks/" + id));
      const std::string status = task.value("status", "");
      if (status != "pending" && status != "processing") return task;
      std::this_thread::sleep_for(milliseconds(10));
    }
    ADD_FAILURE() << "task " << id << " did not finish";
    return Json();
  }

  std::string dir_;
  std::unique_ptr<pipeline::Generator> generator_;  // outlives tasks_
  std::unique_ptr<jobs::TaskManager> tasks_;
  HttpServer server_;
  int port_ = 0;
  std::atomic<bool> not_ready_{false};
};

TEST_F(TaskApiTest, SubmitPollResultImagesZipAndDelete) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  auto submitted = Upload("/v1/document/parse", {{"file", PlainPng(400, 300, 250), "scan.png"}});
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const Json task = BodyJson(submitted);
  const std::string id = task.value("task_id", "");
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(submitted->Header("location"), "/v1/tasks/" + id);
  EXPECT_EQ(task["file_names"], Json::array({"scan.png"}));
  EXPECT_EQ(task["status_url"], "/v1/tasks/" + id);
  EXPECT_EQ(task["events_url"], "/v1/tasks/" + id + "/events");

  const Json done = WaitFinal(id);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["progress"]["pages_done"], 1);
  EXPECT_EQ(done["progress"]["pages_total"], 1);
  EXPECT_TRUE(done["completed_at"].is_string());

  const Json result = BodyJson(Get("/v1/tasks/" + id + "/result"));
  ASSERT_EQ(result["documents"].size(), 1u);
  const Json& doc = result["documents"][0];
  EXPECT_EQ(doc["name"], "scan");
  EXPECT_NE(doc["markdown"].get<std::string>().find("Words on the page."), std::string::npos);
  EXPECT_TRUE(doc["middle_json"]["pdf_info"].is_array());
  EXPECT_TRUE(doc["content_list"].is_array());
  ASSERT_EQ(doc["model_json"].size(), 1u);
  EXPECT_EQ(doc["model_json"][0].size(), 3u);  // three layout boxes on page 0
  ASSERT_EQ(doc["images"].size(), 1u);

  const std::string image = doc["images"][0];
  auto jpeg = Get("/v1/tasks/" + id + "/files/0/images/" + image);
  ASSERT_TRUE(jpeg);
  EXPECT_EQ(jpeg->status, 200);
  EXPECT_EQ(jpeg->Header("content-type"), "image/jpeg");
  EXPECT_EQ(jpeg->body.substr(0, 3), "\xFF\xD8\xFF");
  ExpectApiError(Get("/v1/tasks/" + id + "/files/0/images/..%2Fx.jpg"), 404, "no image");
  ExpectApiError(Get("/v1/tasks/" + id + "/files/0/images/.hidden"), 404, "no image");
  ExpectApiError(Get("/v1/tasks/" + id + "/files/1/images/" + image), 404, "no document");

  auto preview = Get("/v1/tasks/" + id + "/pages/0/0");
  ASSERT_TRUE(preview);
  EXPECT_EQ(preview->status, 200) << preview->body;
  EXPECT_EQ(preview->body.substr(0, 3), "\xFF\xD8\xFF");
  ExpectApiError(Get("/v1/tasks/" + id + "/pages/0/1"), 404, "page 0");
  ExpectApiError(Get("/v1/tasks/" + id + "/pages/x/0"), 404, "0-based");

  auto zip = Get("/v1/tasks/" + id + "/zip");
  ASSERT_TRUE(zip);
  EXPECT_EQ(zip->Header("content-type"), "application/zip");
  const auto entries = Unzip(zip->body);
  EXPECT_EQ(entries.at("scan/scan.md"), doc["markdown"].get<std::string>());
  EXPECT_TRUE(entries.count("scan/scan_middle.json"));
  EXPECT_TRUE(entries.count("scan/scan_model.json"));
  EXPECT_TRUE(entries.count("scan/scan_content_list.json"));
  EXPECT_EQ(entries.at("scan/images/" + image), jpeg->body);

  // Events of a finished task: the final state at once, then the stream ends.
  auto events = Get("/v1/tasks/" + id + "/events");
  ASSERT_TRUE(events);
  EXPECT_NE(events->body.find("event: done\n"), std::string::npos) << events->body;

  auto deleted = Exchange(port_, "DELETE", "/v1/tasks/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  EXPECT_EQ(BodyJson(deleted)["status"], "completed");
  ExpectApiError(Get("/v1/tasks/" + id), 404, "not found");
  ExpectApiError(Exchange(port_, "DELETE", "/v1/tasks/" + id), 404, "not found");
}

TEST_F(TaskApiTest, RawPdfBodyWithPageRangeAndPreviews) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  auto submitted = Exchange(port_, "POST", "/v1/document/parse?filename=report%20one.pdf",
                            CorpusPdf(), "application/pdf");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const std::string id = BodyJson(submitted)["task_id"];
  EXPECT_EQ(BodyJson(submitted)["file_names"], Json::array({"report one.pdf"}));
  const Json done = WaitFinal(id);
  EXPECT_EQ(done["status"], "completed") << done.dump();
  EXPECT_GT(done["progress"]["pages_done"].get<int>(), 1);
  auto preview = Get("/v1/tasks/" + id + "/pages/0/1");
  ASSERT_TRUE(preview);
  ASSERT_EQ(preview->status, 200) << preview->body;
  auto decoded = image::DecodeImage(
      std::span(reinterpret_cast<const uint8_t*>(preview->body.data()), preview->body.size()));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(std::max(decoded->image.width, decoded->image.height), 1024);

  // A page range through the form fields.
  auto ranged = Upload("/v1/document/parse", {{"file", CorpusPdf(), "r.pdf", "application/pdf"},
                                              {"start_page_id", "1"},
                                              {"end_page_id", "1"}});
  ASSERT_TRUE(ranged);
  ASSERT_EQ(ranged->status, 202) << ranged->body;
  const Json one = WaitFinal(BodyJson(ranged)["task_id"]);
  EXPECT_EQ(one["progress"]["pages_total"], 1);
}

TEST_F(TaskApiTest, ProgressEventsArriveAsPagesFinish) {
  // The layout requests wait until the test has its stream open.
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  Start(std::make_unique<ScriptedGenerator>(
      [&](const ScriptedCall& call) -> std::optional<std::string> {
        if (call.prompt == pipeline::kLayoutPrompt) {
          std::unique_lock lock(mutex);
          opened.wait(lock, [&] { return open; });
        }
        return SimplePageAnswer(call);
      }));
  auto submitted = Upload("/v1/document/parse", {{"file", CorpusPdf(), "doc.pdf"}});
  ASSERT_TRUE(submitted);
  const std::string id = BodyJson(submitted)["task_id"];
  Client c(port_);
  ASSERT_TRUE(c.Send(testing_support::GetRequest("/v1/tasks/" + id + "/events")));
  ASSERT_TRUE(c.ReadUntil("event: progress\n"));  // the current state first
  {
    std::lock_guard lock(mutex);
    open = true;
  }
  opened.notify_all();
  ASSERT_TRUE(c.ReadUntil("event: done\n"));
  std::vector<int> pages_done;
  std::string last;
  for (const std::string& data : testing_support::SseData(c.buffer())) {
    Json info = Json::parse(data, nullptr, false);
    ASSERT_FALSE(info.is_discarded()) << data;
    pages_done.push_back(info["progress"]["pages_done"]);
    last = info["status"];
  }
  EXPECT_EQ(last, "completed");
  EXPECT_TRUE(std::is_sorted(pages_done.begin(), pages_done.end()));
  EXPECT_EQ(pages_done.front(), 0);
  EXPECT_GT(pages_done.back(), 1);
  EXPECT_GE(pages_done.size(), static_cast<size_t>(pages_done.back()) + 1);  // one per page
}

TEST_F(TaskApiTest, PendingResultIs202CancelledIs409QueueFullIs429) {
  jobs::TaskManagerOptions options;
  options.concurrent_tasks = 1;
  options.max_queued_tasks = 1;
  HangingGenerator& generator = Start(std::make_unique<HangingGenerator>(), options);
  const std::string png = PlainPng(200, 100, 7);
  auto first = Upload("/v1/document/parse", {{"file", png, "a.png"}});
  ASSERT_TRUE(first);
  const std::string id = BodyJson(first)["task_id"];
  WaitUntil([&] { return generator.submitted() != 0; });
  auto pending = Get("/v1/tasks/" + id + "/result");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->status, 202);
  EXPECT_EQ(BodyJson(pending)["status"], "processing");
  ASSERT_EQ(Upload("/v1/document/parse", {{"file", png, "b.png"}})->status, 202);
  auto full = Upload("/v1/document/parse", {{"file", png, "c.png"}});
  ExpectApiError(full, 429, "queue is full");
  EXPECT_EQ(full->Header("retry-after"), "1");
  EXPECT_EQ(CodeOf(full), "rate_limit_exceeded");
  auto mineru_full = Upload("/tasks", {{"files", png, "c.png"}});
  ASSERT_TRUE(mineru_full);
  EXPECT_EQ(mineru_full->status, 503);
  EXPECT_NE(BodyJson(mineru_full).value("detail", "").find("maximum capacity: 1"),
            std::string::npos);
  EXPECT_EQ(mineru_full->Header("retry-after"), "1");

  auto deleted = Exchange(port_, "DELETE", "/v1/tasks/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(BodyJson(deleted)["status"], "cancelled");
  WaitUntil([&] { return generator.cancelled() != 0; });
  EXPECT_EQ(generator.cancelled(), 1);  // the engine request of the deleted task
}

TEST_F(TaskApiTest, BadUploadsAndUnknownTasksGetClearErrors) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  ExpectApiError(Exchange(port_, "POST", "/v1/document/parse", "{}", "application/json"), 415,
                 "Content-Type 'application/json' is not accepted");
  ExpectApiError(
      Exchange(port_, "POST", "/v1/document/parse", "--x\r\n", "multipart/form-data; boundary=x"),
      400, "");
  ExpectApiError(Upload("/v1/document/parse", {{"formula_enable", "true"}}), 400, "no file");
  ExpectApiError(Upload("/v1/document/parse", {{"file", "hello", "notes.txt"}}), 400,
                 "Unsupported file type: notes.txt");
  ExpectApiError(Upload("/v1/document/parse",
                        {{"file", PlainPng(10, 10, 0), "a.png"}, {"formula_enable", "maybe"}}),
                 400, "formula_enable");
  ExpectApiError(Upload("/v1/document/parse",
                        {{"file", PlainPng(10, 10, 0), "a.png"}, {"start_page_id", "-1"}}),
                 400, "start_page_id");
  ExpectApiError(Upload("/v1/document/parse", {{"file", PlainPng(10, 10, 0), "a.png"},
                                               {"start_page_id", "3"},
                                               {"end_page_id", "2"}}),
                 400, "past end_page_id");
  ExpectApiError(Exchange(port_, "POST", "/v1/document/parse", "", "application/pdf"), 400,
                 "empty");
  for (const std::string path :
       {"/v1/tasks/nope", "/v1/tasks/nope/result", "/v1/tasks/nope/zip", "/v1/tasks/nope/events",
        "/v1/tasks/nope/pages/0/0", "/v1/tasks/nope/files/0/images/a.jpg"}) {
    ExpectApiError(Get(path), 404, "not found");
  }
  ExpectMineruError(Get("/tasks/nope"), 404, "Task not found");
  ExpectMineruError(Get("/tasks/nope/result"), 404, "Task not found");
  ExpectMineruError(Exchange(port_, "DELETE", "/tasks/nope"), 404, "Task not found");
  ExpectMineruError(Upload("/file_parse", {{"files", "hello", "notes.txt"}}), 400,
                    "Unsupported file type: notes.txt");
  ExpectMineruError(Upload("/file_parse", {{"return_md", "true"}}), 400, "no file");
}

TEST_F(TaskApiTest, FailedTaskIs409AndMineruFileParseIs500) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  const std::string broken = "%PDF-1.7\nnot really a PDF";
  auto submitted = Upload("/v1/document/parse", {{"file", broken, "broken.pdf"}});
  ASSERT_TRUE(submitted);
  const std::string id = BodyJson(submitted)["task_id"];
  EXPECT_EQ(WaitFinal(id)["status"], "failed");
  ExpectApiError(Get("/v1/tasks/" + id + "/result"), 409, "Failed to process file: broken.pdf");
  ExpectMineruError(Upload("/file_parse", {{"files", broken, "broken.pdf"}}), 500,
                    "Failed to process file: broken.pdf");
}

// max_task_files is a permanent limit: the exact limit is accepted, one more file is 413 naming
// it, without Retry-After (before: 429 with Retry-After, so a client honouring it retried an
// upload that can never pass). A queue that is full stays 429 (above).
TEST_F(TaskApiTest, TooManyFilesIs413NamingTheLimit) {
  jobs::TaskManagerOptions options;
  options.max_task_files = 2;
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer), options);
  const std::string png = PlainPng(20, 20, 1);
  auto two = Upload("/v1/document/parse", {{"file", png, "a.png"}, {"file", png, "b.png"}});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->status, 202) << two->body;
  auto three = Upload("/v1/document/parse",
                      {{"file", png, "a.png"}, {"file", png, "b.png"}, {"file", png, "c.png"}});
  ExpectApiError(three, 413, "--max-task-files");
  EXPECT_EQ(CodeOf(three), "max_task_files");
  EXPECT_EQ(three->Header("retry-after"), "");
}

// The codes of the document API's answers that name none of their own (before, "code" was null).
TEST_F(TaskApiTest, ErrorAnswersCarryTheirCodes) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  EXPECT_EQ(CodeOf(Get("/v1/tasks/nope")), "not_found");
  EXPECT_EQ(CodeOf(Exchange(port_, "POST", "/v1/document/parse", "{}", "application/json")),
            "unsupported_media_type");
  EXPECT_EQ(CodeOf(Upload("/v1/document/parse", {{"formula_enable", "true"}})), "invalid_request");
}

// No answer names a server path: a failed task's error (our task JSON, its 409 result, MinerU's
// task JSON and /file_parse) and the preview of its document. Before, each one
// carried the input's absolute path in the work directory ("<work>/<task id>/input/broken.pdf:
// not a PDF ...").
TEST_F(TaskApiTest, ErrorTextsNameNoServerPath) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  const std::string broken = "%PDF-1.7\nnot really a PDF";
  auto submitted = Upload("/v1/document/parse", {{"file", broken, "broken.pdf"}});
  ASSERT_TRUE(submitted);
  const std::string id = BodyJson(submitted)["task_id"];
  const Json task = WaitFinal(id);
  ASSERT_EQ(task["status"], "failed");
  std::vector<std::pair<std::string, std::string>> texts = {
      {"task error", task.value("error", "")}};
  auto result = Get("/v1/tasks/" + id + "/result");
  ExpectApiError(result, 409, "broken.pdf");
  texts.emplace_back("409 result", result->body);
  // A failed task keeps no files (--max-retained-bytes, issue 14): its preview is a 404 that
  // says so, naming neither the file nor its path.
  auto preview = Get("/v1/tasks/" + id + "/pages/0/0");
  ASSERT_TRUE(preview);
  EXPECT_EQ(preview->status, 404) << preview->body;
  EXPECT_NE(preview->body.find("its files are not kept"), std::string::npos) << preview->body;
  EXPECT_EQ(preview->body.find(dir_), std::string::npos) << preview->body;
  auto mineru_task = Get("/tasks/" + id);
  ASSERT_TRUE(mineru_task);
  texts.emplace_back("MinerU task", mineru_task->body);
  auto file_parse = Upload("/file_parse", {{"files", broken, "broken.pdf"}});
  ExpectMineruError(file_parse, 500, "broken.pdf");
  texts.emplace_back("MinerU /file_parse", file_parse->body);
  for (const auto& [what, text] : texts) {
    EXPECT_NE(text.find("broken.pdf"), std::string::npos) << what << ": " << text;
    EXPECT_EQ(text.find(dir_), std::string::npos) << what << ": " << text;
    EXPECT_EQ(text.find("/input/"), std::string::npos) << what << ": " << text;
  }
}

TEST_F(TaskApiTest, MineruFileParseAnswersWhatWasAskedAsJsonOrZip) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  const std::string png = PlainPng(400, 300, 250);
  auto md_only = Upload("/file_parse", {{"files", png, "scan.png"}});
  ASSERT_TRUE(md_only);
  ASSERT_EQ(md_only->status, 200) << md_only->body;
  EXPECT_NE(md_only->Header("x-mineru-task-status-url").find("/tasks/"), std::string::npos);
  const Json plain = BodyJson(md_only);
  EXPECT_EQ(plain["backend"], "vlm-auto-engine");
  EXPECT_TRUE(plain["version"].is_string());
  ASSERT_TRUE(plain["results"]["scan"].is_object());
  EXPECT_EQ(plain["results"]["scan"].size(), 1u);  // md_content only, MinerU's default
  EXPECT_NE(plain["results"]["scan"]["md_content"].get<std::string>().find("Words on the page."),
            std::string::npos);

  auto everything = Upload("/file_parse", {{"files", png, "scan.png"},
                                           {"files", PlainPng(300, 200, 240), "second.png"},
                                           {"backend", "vlm-http-client"},
                                           {"return_middle_json", "true"},
                                           {"return_model_output", "true"},
                                           {"return_content_list", "true"},
                                           {"return_images", "true"},
                                           {"lang_list", "ch"}});
  ASSERT_TRUE(everything);
  ASSERT_EQ(everything->status, 200) << everything->body;
  const Json all = BodyJson(everything);
  EXPECT_EQ(all["backend"], "vlm-http-client");
  ASSERT_EQ(all["results"].size(), 2u);
  const Json& scan = all["results"]["scan"];
  // JSON outputs travel as JSON-encoded strings, as MinerU sends them.
  ASSERT_TRUE(scan["middle_json"].is_string());
  EXPECT_TRUE(Json::parse(scan["middle_json"].get<std::string>())["pdf_info"].is_array());
  ASSERT_TRUE(scan["model_output"].is_string());
  ASSERT_TRUE(scan["content_list"].is_string());
  ASSERT_EQ(scan["images"].size(), 1u);
  EXPECT_EQ(scan["images"].begin().value().get<std::string>().rfind("data:image/jpeg;base64,", 0),
            0u);

  auto zipped = Upload("/file_parse", {{"files", png, "scan.png"},
                                       {"return_content_list", "true"},
                                       {"response_format_zip", "true"}});
  ASSERT_TRUE(zipped);
  ASSERT_EQ(zipped->status, 200);
  EXPECT_EQ(zipped->Header("content-type"), "application/zip");
  const auto entries = Unzip(zipped->body);
  EXPECT_EQ(entries.size(), 2u);  // .md and _content_list.json: what was asked
  EXPECT_TRUE(entries.count("scan/scan.md"));
  EXPECT_TRUE(entries.count("scan/scan_content_list.json"));
}

TEST_F(TaskApiTest, MineruTasksSubmitPollResultDeleteAndHealth) {
  Start(std::make_unique<ScriptedGenerator>(SimplePageAnswer));
  auto submitted = Upload(
      "/tasks", {{"files", PlainPng(400, 300, 250), "scan.png"}, {"return_middle_json", "true"}});
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 202) << submitted->body;
  const Json task = BodyJson(submitted);
  const std::string id = task["task_id"];
  for (const char* key : {"task_id", "status", "backend", "file_names", "created_at", "started_at",
                          "completed_at", "error", "status_url", "result_url", "message"}) {
    EXPECT_TRUE(task.contains(key)) << key;
  }
  EXPECT_EQ(task["status_url"], "/tasks/" + id);
  std::string status;
  for (int i = 0; i < 3000; ++i) {
    status = BodyJson(Get("/tasks/" + id))["status"];
    if (status == "completed" || status == "failed") break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(status, "completed");
  const Json result = BodyJson(Get("/tasks/" + id + "/result"));
  EXPECT_TRUE(result["results"]["scan"]["md_content"].is_string());
  EXPECT_TRUE(result["results"]["scan"]["middle_json"].is_string());  // as asked at submission

  const Json health = BodyJson(Get("/health"));
  EXPECT_EQ(health["status"], "healthy");
  EXPECT_EQ(health["completed_tasks"], 1);
  EXPECT_EQ(health["queued_tasks"], 0);
  EXPECT_EQ(health["task_retention_seconds"], 86400);

  auto deleted = Exchange(port_, "DELETE", "/tasks/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  ExpectMineruError(Get("/tasks/" + id), 404, "Task not found");
  // Not ready (as while draining, when the server also refuses new connections): 503.
  not_ready_ = true;
  auto after = Get("/health");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 503);
  EXPECT_EQ(BodyJson(after)["status"], "unhealthy");
  EXPECT_EQ(after->Header("retry-after"), "1");
}

TEST_F(TaskApiTest, FileParseClientThatLeavesCancelsAndDeletesItsTask) {
  HangingGenerator& generator = Start(std::make_unique<HangingGenerator>());
  std::string content_type;
  const std::string body =
      MultipartBody({{"files", PlainPng(200, 100, 9), "a.png"}}, &content_type);
  {
    Client c(port_);
    ASSERT_TRUE(c.Send(testing_support::PostRequest("/file_parse", body,
                                                    "Content-Type: " + content_type + "\r\n")));
    WaitUntil([&] { return generator.submitted() != 0; });
    ASSERT_EQ(generator.submitted(), 1);  // its page is in the engine
  }                                       // the client goes away
  WaitUntil([&] { return generator.cancelled() != 0; });
  EXPECT_EQ(generator.cancelled(), 1);
  WaitUntil([&] { return tasks_->Counts().cancelled + tasks_->Counts().processing == 0; });
  const jobs::TaskCounts counts = tasks_->Counts();
  EXPECT_EQ(counts.pending + counts.processing + counts.cancelled + counts.completed, 0);
}

}  // namespace
}  // namespace mineru::service
