// SPDX-License-Identifier: Apache-2.0
// Page previews (GET /v1/tasks/{id}/pages/{doc}/{page}, service/page_preview.h): cached in an
// LRU bounded in bytes and rendered under a concurrency cap. The render helper of the previews
// is a shell script in front of the real one that counts its starts (one per PDF opened) and,
// while a "hold" file exists, waits before it starts the real helper, so that a test can keep
// renders in flight.
//
// Reproduces the finding of issue 14: every GET of a preview opened the PDF again in a fresh
// render helper, with no cache and no cap (six previews of a PDF that inflates to 2 GiB cost 63
// CPU-seconds).
#include "service/page_preview.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "../pipeline/scripted_generator.h"
#include "../pipeline/simple_page_script.h"
#include "../support/http_client.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "base/json.h"
#include "service/document_api.h"

namespace mineru::service {
namespace {

namespace fs = std::filesystem;
using pipeline::testing::ScriptedGenerator;
using pipeline::testing::SimplePageAnswer;
using std::chrono::milliseconds;
using testing_support::Exchange;
using testing_support::HttpReply;
using testing_support::WaitUntil;

const std::string kCorpusPdf =
    std::string(MINERU_TEST_DATA_DIR) + "/corpus/mineru_small_ocr.pdf";  // 8 pages

// A render helper that appends a line to <dir>/starts when started and waits while <dir>/hold
// exists, then runs the real helper with the same arguments and descriptors.
class CountingHelper {
 public:
  explicit CountingHelper(const std::string& dir) : dir_(dir), path_(dir + "/counting-helper") {
    testing_support::WriteFile(path_, "#!/bin/sh\necho started >> '" + dir_ +
                                          "/starts'\nwhile [ -e '" + dir_ +
                                          "/hold' ]; do sleep 0.01; done\nexec '" +
                                          std::string(MINERU_PDF_RENDER_BUILD_PATH) + "' \"$@\"\n");
    ::chmod(path_.c_str(), 0755);
  }
  const std::string& path() const { return path_; }
  int starts() const {
    std::istringstream lines(testing_support::ReadFile(dir_ + "/starts"));
    int n = 0;
    for (std::string line; std::getline(lines, line);) ++n;
    return n;
  }
  void Hold() const { testing_support::WriteFile(dir_ + "/hold", "1"); }
  void Release() const { fs::remove(dir_ + "/hold"); }

 private:
  std::string dir_;
  std::string path_;
};

class PagePreviewTest : public ::testing::Test {
 protected:
  // A server with our document API, whose previews go through the counting helper, and one
  // task holding the 8-page corpus PDF.
  void Start(PreviewOptions previews) {
    dir_ = testing_support::TestDir();
    helper_ = std::make_unique<CountingHelper>(dir_);
    jobs::TaskManagerOptions options;
    options.work_dir = dir_ + "/tasks";
    options.model_fingerprint = "scripted";
    options.document.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;  // the task's own pages
    auto tasks = jobs::TaskManager::Create(generator_, options);
    ASSERT_TRUE(tasks) << tasks.error().ToString();
    tasks_ = std::move(*tasks);
    DocumentApiOptions document;
    document.render.helper_path = helper_->path();
    document.previews = previews;
    AddDocumentRoutes(server_, *tasks_, document);
    ServerOptions server_options;
    server_options.port = 0;
    server_options.handler_threads = 16;
    ASSERT_TRUE(server_.Start(server_options));
    port_ = server_.port();
    auto submitted = Exchange(port_, "POST", "/v1/document/parse?filename=ocr.pdf",
                              testing_support::ReadFile(kCorpusPdf), "application/pdf");
    ASSERT_TRUE(submitted);
    ASSERT_EQ(submitted->status, 202) << submitted->body;
    id_ = Json::parse(submitted->body).value("task_id", "");
    ASSERT_FALSE(id_.empty());
  }
  void TearDown() override {
    if (helper_) helper_->Release();
    server_.Stop(milliseconds(2000));
    tasks_.reset();
  }
  std::optional<HttpReply> Preview(int page) {
    return Exchange(port_, "GET", "/v1/tasks/" + id_ + "/pages/0/" + std::to_string(page));
  }

  ScriptedGenerator generator_{SimplePageAnswer};
  std::string dir_;
  std::unique_ptr<CountingHelper> helper_;
  std::unique_ptr<jobs::TaskManager> tasks_;
  HttpServer server_;
  int port_ = 0;
  std::string id_;
};

TEST_F(PagePreviewTest, RepeatedPreviewsOfAPageRenderItOnce) {
  Start({});
  std::string first;
  for (int i = 0; i < 6; ++i) {  // the six previews of the finding
    auto r = Preview(0);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->Header("content-type"), "image/jpeg");
    if (i == 0) first = r->body;
    EXPECT_EQ(r->body, first);  // the same bytes from the cache
  }
  EXPECT_EQ(helper_->starts(), 1);
  auto other = Preview(1);  // another page is another render
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200);
  EXPECT_NE(other->body, first);
  EXPECT_EQ(helper_->starts(), 2);

  // A page past the end costs nothing: the first render learnt the page count.
  for (int i = 0; i < 3; ++i) {
    auto past = Preview(8);
    ASSERT_TRUE(past);
    EXPECT_EQ(past->status, 404) << past->body;
    EXPECT_NE(past->body.find("8 pages"), std::string::npos) << past->body;
  }
  EXPECT_EQ(helper_->starts(), 2);

  // Six clients asking for one page at once share one render, without a render slot each.
  helper_->Hold();
  std::vector<std::thread> clients;
  std::vector<int> statuses(6, 0);
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&, i] {
      auto r = Preview(2);
      statuses[i] = r ? r->status : -1;
    });
  }
  const bool started = WaitUntil([&] { return helper_->starts() == 3; });
  helper_->Release();
  for (std::thread& t : clients) t.join();
  EXPECT_TRUE(started);
  EXPECT_EQ(statuses, std::vector<int>(6, 200));
  EXPECT_EQ(helper_->starts(), 3);
}

// max_renders = 2 and no waiting: two renders in flight are served, a third distinct preview is
// 503 with Retry-After naming the limit, and the same request passes once a render has ended.
TEST_F(PagePreviewTest, RendersBeyondTheCapAre503WithRetryAfterUntilOneEnds) {
  Start({.max_renders = 2, .max_waiting = 0});
  helper_->Hold();
  std::vector<std::thread> clients;
  std::vector<int> statuses(2, 0);
  for (int page = 0; page < 2; ++page) {
    clients.emplace_back([&, page] {
      auto r = Preview(page);
      statuses[page] = r ? r->status : -1;
    });
  }
  const bool both_in_flight = WaitUntil([&] { return helper_->starts() == 2; });
  auto refused = Preview(2);
  const int starts_after_refusal = helper_->starts();
  helper_->Release();
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(both_in_flight);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_EQ(refused->Header("retry-after"), "1");
  EXPECT_NE(refused->body.find("--max-preview-renders"), std::string::npos) << refused->body;
  EXPECT_EQ(starts_after_refusal, 2);  // refused before any work
  EXPECT_EQ(statuses, (std::vector<int>{200, 200}));
  auto retried = Preview(2);
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->status, 200) << retried->body;
}

// max_waiting at its boundary: with one render in flight (max_renders = 1) and max_waiting = 1,
// a preview of another page waits for the slot and is served once the render ends; one more
// while it waits is refused naming both limits, before any work. (The web UI's <img> elements
// load a document's pages at once and cannot retry a 503: with the default cap of 2 and no
// waiting, its browser test saw broken previews.)
TEST(PagePreviewsTest, WaitersUpToTheLimitGetTheirPreviewOneMoreIsRefused) {
  const std::string dir = testing_support::TestDir();
  CountingHelper helper(dir);
  pdf::RenderOptions render;
  render.helper_path = helper.path();
  PagePreviews previews({.cache_bytes = 0, .max_renders = 1, .max_waiting = 1});
  helper.Hold();
  std::optional<Result<PreviewBytes>> first, second;
  std::thread rendering([&] { first = previews.Get("task/0", kCorpusPdf, 0, render); });
  const bool rendering_started = WaitUntil([&] { return helper.starts() == 1; });
  std::thread waiting([&] { second = previews.Get("task/0", kCorpusPdf, 1, render); });
  const bool waiting_started = WaitUntil([&] { return previews.Stats().waited == 1; });
  Result<PreviewBytes> refused = previews.Get("task/0", kCorpusPdf, 2, render);
  const int starts_after_refusal = helper.starts();
  helper.Release();
  rendering.join();
  waiting.join();
  ASSERT_TRUE(rendering_started);
  ASSERT_TRUE(waiting_started);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(refused.error().message.find("--max-preview-waiting"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("--max-preview-renders"), std::string::npos);
  EXPECT_EQ(starts_after_refusal, 1);  // the waiter had not started, the refused one never does
  ASSERT_TRUE(first && *first) << (first ? first->error().ToString() : "no result");
  ASSERT_TRUE(second && *second) << (second ? second->error().ToString() : "no result");
  EXPECT_NE(***first, ***second);  // two pages
  EXPECT_EQ(helper.starts(), 2);
  const PreviewStats stats = previews.Stats();
  EXPECT_EQ(stats.waited, 1);
  EXPECT_EQ(stats.refused, 1);
  EXPECT_EQ(stats.in_flight, 0);
}

// The byte bound, exactly: a cache of exactly one preview's bytes keeps it, one byte less keeps
// nothing; and the least recently used preview is the one that leaves.
TEST(PagePreviewsTest, CacheKeepsExactlyItsBytesAndEvictsTheLeastRecentlyUsed) {
  pdf::RenderOptions render;
  render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
  auto page0 = RenderPreview(kCorpusPdf, 0, render);
  auto page1 = RenderPreview(kCorpusPdf, 1, render);
  ASSERT_TRUE(page0 && page1);
  const uint64_t size0 = page0->size(), size1 = page1->size();

  PagePreviews exact({.cache_bytes = size0});
  ASSERT_TRUE(exact.Get("doc", kCorpusPdf, 0, render));
  auto again = exact.Get("doc", kCorpusPdf, 0, render);
  ASSERT_TRUE(again);
  EXPECT_EQ(**again, *page0);  // the renderer's bytes
  EXPECT_EQ(exact.Stats().renders, 1);
  EXPECT_EQ(exact.Stats().cache.bytes, size0);

  PagePreviews short_by_one({.cache_bytes = size0 - 1});
  ASSERT_TRUE(short_by_one.Get("doc", kCorpusPdf, 0, render));
  ASSERT_TRUE(short_by_one.Get("doc", kCorpusPdf, 0, render));
  EXPECT_EQ(short_by_one.Stats().renders, 2);
  EXPECT_EQ(short_by_one.Stats().cache.bytes, 0u);

  // Room for both pages: both kept; a third page pushes out the least recently used (page 1,
  // since page 0 was read after it).
  auto page2 = RenderPreview(kCorpusPdf, 2, render);
  ASSERT_TRUE(page2);
  PagePreviews two({.cache_bytes = size0 + std::max(size1, page2->size())});
  ASSERT_TRUE(two.Get("doc", kCorpusPdf, 0, render));
  ASSERT_TRUE(two.Get("doc", kCorpusPdf, 1, render));
  ASSERT_TRUE(two.Get("doc", kCorpusPdf, 0, render));
  EXPECT_EQ(two.Stats().renders, 2);
  ASSERT_TRUE(two.Get("doc", kCorpusPdf, 2, render));
  ASSERT_TRUE(two.Get("doc", kCorpusPdf, 0, render));
  EXPECT_EQ(two.Stats().renders, 3);  // page 0 stayed
  ASSERT_TRUE(two.Get("doc", kCorpusPdf, 1, render));
  EXPECT_EQ(two.Stats().renders, 4);  // page 1 had left

  // Errors are answered, never cached.
  EXPECT_EQ(two.Get("doc", kCorpusPdf, -1, render).error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(two.Get("missing", "/nonexistent/file.pdf", 0, render));
  EXPECT_EQ(two.Stats().cache.entries, 2);
}

}  // namespace
}  // namespace mineru::service
