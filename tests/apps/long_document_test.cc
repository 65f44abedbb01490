// SPDX-License-Identifier: Apache-2.0
// A 5,000-page PDF (small pages, long_pdf.h) through `mineru-cpp serve`'s task API and through
// `parse`, on the tiny random model with a 2-token cap:
//   - through MinerU's POST /tasks: every page parsed, progress reported page by page, serve's
//     peak resident memory under kServeMemoryBound (the pages are alike, so the block cache
//     answers their layout requests after the first: the pipeline goes through all 5,000 pages,
//     the engine not 5,000 times);
//   - a 5,000-page task of distinct pages cancelled mid-way with DELETE /tasks/{id}: its files
//     are gone, the engine is back to 0 KV blocks and no request, the server's open descriptors
//     are back to what they were before (the upload, the render helper's pipes), resident memory
//     is back within kSettledMemoryMargin of what it was before, and the next task completes;
//   - `parse` of the same document: progress on stderr for every page and peak memory under
//     kParseMemoryBound. The tiny model's layout request costs about 0.4 CPU-seconds a page
//     (its vision tower sees MinerU's 1036 x 1036 layout image), so CI parses a 40-page slice
//     of the 5,000 pages (the last 40, -s/-e: the far end of the page tree);
//     MINERU_LONG_PARSE_PAGES=N parses the last N, 5000 all of them (about 32 CPU-minutes;
//     docs/PERFORMANCE.md has the figures of what was run).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "../support/http_client.h"
#include "base/json.h"
#include "cli_test_util.h"
#include "long_pdf.h"
#include "serve_process.h"
#include "serve_usage.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::Describe;
using testing::LongPdf;
using testing::PageLook;
using testing::RunCli;
using testing::ServeProcess;
using testing::Succeeded;
using testing_support::Exchange;
using testing_support::FormPart;
using testing_support::MultipartBody;

constexpr int kPages = 5000;
// serve's peak resident memory (VmHWM) over its whole life with a 5,000-page task: the tiny
// model, the engine's buffers, the document's pages in flight and its assembled outputs.
// Measured 276 MiB; a per-page growth of 50 KB would pass it.
constexpr int64_t kServeMemoryBound = int64_t{512} << 20;
// Resident memory after a cancelled task, over what it was before the task.
constexpr int64_t kSettledMemoryMargin = int64_t{64} << 20;
// parse's peak resident memory on the 5,000-page document, any slice of it.
constexpr int64_t kParseMemoryBound = int64_t{512} << 20;
// Descriptors after a cancelled task, over what they were before: a connection the server has
// not finished closing.
constexpr int kSettledDescriptorMargin = 2;
constexpr int kDefaultParsePages = 40;

// The tiny checkpoint with the Qwen2 tokenizer, written once per test binary.
const std::string& TinyModel() {
  static const std::string dir = [] {
    const std::string out = testing::ScratchRoot() + "/long-document-model";
    const CliResult made = RunCli(
        {"make-model", "--config", "tiny", "-o", out, "--tokenizer-source", MINERU_QWEN_TOKENIZER});
    EXPECT_TRUE(Succeeded(made)) << Describe(made);
    return out;
  }();
  return dir;
}

// The 5,000-page PDF of `look`, written once per test binary.
const std::string& LongDocument(PageLook look) {
  static const std::string same = [] {
    const std::string path = testing::ScratchRoot() + "/same-5000.pdf";
    testing::WriteFile(path, LongPdf(kPages, PageLook::kSame));
    return path;
  }();
  static const std::string distinct = [] {
    const std::string path = testing::ScratchRoot() + "/distinct-5000.pdf";
    testing::WriteFile(path, LongPdf(kPages, PageLook::kDistinct));
    return path;
  }();
  return look == PageLook::kSame ? same : distinct;
}

Json JsonOf(const std::optional<testing_support::HttpReply>& r) {
  if (!r) return Json();
  Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  return json.is_discarded() ? Json() : json;
}

// MinerU's POST /tasks with one file; the task id, empty on failure (the test fails).
std::string SubmitTask(int port, const std::string& path, const std::string& name) {
  std::string content_type;
  const std::string body =
      MultipartBody({{"files", testing::ReadFile(path), name, "application/pdf"}}, &content_type);
  auto r = Exchange(port, "POST", "/tasks", body, content_type);
  EXPECT_TRUE(r);
  if (!r) return "";
  EXPECT_EQ(r->status, 202) << r->body;
  const Json json = JsonOf(r);
  return json.is_object() ? json.value("task_id", "") : "";
}

Json TaskState(int port, const std::string& id) {
  return JsonOf(Exchange(port, "GET", "/v1/tasks/" + id));
}

std::string StatusOf(const Json& task) { return task.is_object() ? task.value("status", "") : ""; }

// A field of the task's progress; -1 when it has none (yet).
int Progress(const Json& task, const char* field) {
  if (!task.is_object() || !task.contains("progress") || !task["progress"].is_object()) return -1;
  const Json& value = task["progress"][field];
  return value.is_number_integer() ? value.get<int>() : -1;
}

bool IsFinal(const Json& task) {
  if (!task.is_object()) return false;
  const std::string status = StatusOf(task);
  return status == "completed" || status == "failed" || status == "cancelled";
}

std::string Metrics(int port) {
  auto r = Exchange(port, "GET", "/metrics");
  return r ? r->body : "";
}

// Polls until the engine holds no request and no KV block and no task is processing (or 60 s
// pass); whether it got there.
bool EngineIdle(int port) {
  for (int i = 0; i < 600; ++i) {
    const std::string m = Metrics(port);
    if (testing::MetricSample(m, "mineru_kv_cache_blocks_used") == 0 &&
        testing::MetricSample(m, "mineru_requests_running") == 0 &&
        testing::MetricSample(m, "mineru_requests_waiting") == 0 &&
        testing::MetricSample(m, "mineru_tasks_processing") == 0) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(LongDocumentTest, FiveThousandPagesThroughTasksReportProgressWithinTheMemoryBound) {
  const std::string work = testing::TestDir() + "/work";
  ServeProcess server({"--model", TinyModel(), "--work-dir", work, "--max-tokens", "2"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const int port = server.port();
  const std::string id = SubmitTask(port, LongDocument(PageLook::kSame), "long.pdf");
  ASSERT_FALSE(id.empty());

  std::vector<int> pages_done;  // every distinct value seen, in order
  Json task;
  for (int i = 0; i < 18000 && !IsFinal(task); ++i) {  // 30 minutes at most
    task = TaskState(port, id);
    const int done = Progress(task, "pages_done");
    if (pages_done.empty() || done != pages_done.back()) pages_done.push_back(done);
    if (!IsFinal(task)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(StatusOf(task), "completed") << task.dump() << server.log();
  EXPECT_EQ(Progress(task, "pages_total"), kPages);
  EXPECT_EQ(Progress(task, "pages_done"), kPages);
  EXPECT_TRUE(std::is_sorted(pages_done.begin(), pages_done.end()));
  // Progress while it ran: values strictly between none and all (a poll every 100 ms over
  // 5,000 pages sees many).
  const auto between = std::count_if(pages_done.begin(), pages_done.end(),
                                     [](int n) { return n > 0 && n < kPages; });
  EXPECT_GE(between, 3) << "pages_done values seen: " << pages_done.size();

  auto result = Exchange(port, "GET", "/v1/tasks/" + id + "/result");
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200) << result->body.substr(0, 300);
  const Json json = JsonOf(result);
  ASSERT_TRUE(json["documents"].is_array() && !json["documents"].empty())
      << json.dump(1).substr(0, 300);
  const Json& middle = json["documents"][0]["middle_json"];
  ASSERT_TRUE(middle.is_object() && middle["pdf_info"].is_array());
  EXPECT_EQ(middle["pdf_info"].size(), static_cast<size_t>(kPages));

  const testing::ProcessUsage usage = testing::UsageOf(server.pid());
  ASSERT_GT(usage.peak_rss_bytes, 0);
  EXPECT_LT(usage.peak_rss_bytes, kServeMemoryBound)
      << "peak resident memory " << testing::Megabytes(usage.peak_rss_bytes) << " MiB";
  RecordProperty("serve_peak_rss_mib", static_cast<int>(testing::Megabytes(usage.peak_rss_bytes)));
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST(LongDocumentTest, CancellingAFiveThousandPageTaskMidwayFreesEverything) {
  const std::string work = testing::TestDir() + "/work";
  ServeProcess server({"--model", TinyModel(), "--work-dir", work, "--max-tokens", "2"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const int port = server.port();
  // A small task first, so that what the engine and the pipeline allocate once is counted in
  // the memory before.
  const std::string small = testing::TestDir() + "/small.pdf";
  testing::WriteFile(small, LongPdf(2, PageLook::kDistinct, 7));
  const std::string warm = SubmitTask(port, small, "small.pdf");
  Json task;
  for (int i = 0; i < 6000 && !IsFinal(task); ++i) {
    task = TaskState(port, warm);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(StatusOf(task), "completed") << task.dump();
  ASSERT_TRUE(EngineIdle(port));
  const testing::ProcessUsage before = testing::UsageOf(server.pid());

  const std::string id = SubmitTask(port, LongDocument(PageLook::kDistinct), "long.pdf");
  ASSERT_FALSE(id.empty());
  int done = 0;
  for (int i = 0; i < 6000 && done < 8; ++i) {  // progress: 8 pages parsed
    task = TaskState(port, id);
    done = Progress(task, "pages_done");
    ASSERT_FALSE(IsFinal(task)) << task.dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(done, 8) << task.dump();
  EXPECT_EQ(Progress(task, "pages_total"), kPages);
  EXPECT_TRUE(fs::exists(fs::path(work) / id));

  auto deleted = Exchange(port, "DELETE", "/tasks/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200) << deleted->body;
  EXPECT_TRUE(EngineIdle(port)) << Metrics(port);
  // Its files went with it (the only task directory left is the small task's).
  bool gone = false;
  for (int i = 0; i < 600 && !gone; ++i) {
    gone = !fs::exists(fs::path(work) / id);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(work)) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{warm});
  auto unknown = Exchange(port, "GET", "/tasks/" + id);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);

  testing::ProcessUsage after = testing::UsageOf(server.pid());
  for (int i = 0; i < 50 && after.open_fds > before.open_fds; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after = testing::UsageOf(server.pid());
  }
  EXPECT_LE(after.open_fds, before.open_fds + kSettledDescriptorMargin)
      << "before " << before.open_fds << ", after " << after.open_fds;
  EXPECT_LE(after.rss_bytes, before.rss_bytes + kSettledMemoryMargin)
      << "before " << testing::Megabytes(before.rss_bytes) << " MiB, after "
      << testing::Megabytes(after.rss_bytes) << " MiB";
  RecordProperty("rss_before_mib", static_cast<int>(testing::Megabytes(before.rss_bytes)));
  RecordProperty("rss_after_mib", static_cast<int>(testing::Megabytes(after.rss_bytes)));
  RecordProperty("fds_before", before.open_fds);
  RecordProperty("fds_after", after.open_fds);

  // The server goes on: the next task completes.
  const std::string next = SubmitTask(port, small, "again.pdf");
  task = Json();
  for (int i = 0; i < 6000 && !IsFinal(task); ++i) {
    task = TaskState(port, next);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(StatusOf(task), "completed") << task.dump();
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST(LongDocumentTest, ParseReportsEveryPageWithinTheMemoryBound) {
  int pages = kDefaultParsePages;
  if (const char* env = std::getenv("MINERU_LONG_PARSE_PAGES")) pages = std::atoi(env);
  ASSERT_TRUE(pages >= 1 && pages <= kPages) << "MINERU_LONG_PARSE_PAGES=" << pages;
  const std::string out = testing::TestDir() + "/out";
  std::vector<std::string> args = {"parse",        LongDocument(PageLook::kDistinct),
                                   "-o",           out,
                                   "--model",      TinyModel(),
                                   "--max-tokens", "2",
                                   "--json"};
  if (pages < kPages) {  // the last `pages` pages: the far end of the page tree
    args.insert(args.end(),
                {"-s", std::to_string(kPages - pages), "-e", std::to_string(kPages - 1)});
  }
  args.insert(args.begin(), std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp");
  // The whole document takes about 32 CPU-minutes: the timeout only guards against a hang.
  const CliResult r =
      testing_support::RunProcess(args, {"MINERU_THREADS=2"}, std::chrono::minutes(60));
  ASSERT_TRUE(Succeeded(r)) << Describe(r);
  const size_t start = r.out.find('{');
  ASSERT_NE(start, std::string::npos) << r.out;
  const Json report = Json::parse(r.out.substr(start), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(report.is_object()) << r.out;
  EXPECT_EQ(report.value("pages", 0), pages);
  EXPECT_EQ(report.value("failed_pages", -1), 0);
  // Progress: one "page N/M done" line per page, N counting up to M.
  int lines = 0, last = 0;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    const size_t at = line.find(": page ");
    if (at == std::string::npos || line.find(" done") == std::string::npos) continue;
    const int n = std::atoi(line.c_str() + at + 7);
    EXPECT_EQ(n, last + 1) << line;
    last = n;
    ++lines;
  }
  EXPECT_EQ(lines, pages) << r.err.substr(0, 2000);
  const int64_t peak = report.value("peak_rss_bytes", int64_t{-1});
  ASSERT_GT(peak, 0);
  EXPECT_LT(peak, kParseMemoryBound)
      << "peak resident memory " << testing::Megabytes(peak) << " MiB";
  RecordProperty("parse_pages", pages);
  RecordProperty("parse_peak_rss_mib", static_cast<int>(testing::Megabytes(peak)));
}

}  // namespace
}  // namespace mineru::apps
