// SPDX-License-Identifier: Apache-2.0
// The serve flags of page previews and task retention end to end: their ranges (one past each
// bound is a usage error naming the flag, before any model is loaded), and their values reaching
// the server: --max-retained-bytes 1 lets no finished task stay, --preview-cache-bytes 0 renders
// every preview again, and --max-preview-renders 1 with --max-preview-waiting 0 answers a second
// render in flight with 503 and Retry-After. The render helper of the previews is a script in front
// of the real one (found through MINERU_PDF_RENDER_HELPER) that counts its starts and waits while a
// "hold" file exists.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "../support/http_client.h"
#include "../support/wait.h"
#include "base/json.h"
#include "cli_test_util.h"
#include "long_pdf.h"
#include "serve_process.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::Describe;
using testing::RunCli;
using testing::ServeProcess;
using testing::Succeeded;
using testing::UsageError;
using testing_support::Exchange;
using testing_support::WaitUntil;

// The waits here cover whole documents on a served model (a longer hang guard than
// WaitUntil's default), and each look is an HTTP request to the server (less often).
constexpr std::chrono::seconds kDocumentWait{120};
constexpr std::chrono::milliseconds kRequestPoll{20};

std::string TinyModel(const std::string& scratch) {
  const std::string dir = scratch + "/model";
  const CliResult made = RunCli(
      {"make-model", "--config", "tiny", "-o", dir, "--tokenizer-source", MINERU_QWEN_TOKENIZER});
  EXPECT_TRUE(Succeeded(made)) << Describe(made);
  return dir;
}

std::string Submit(int port, const std::string& pdf) {
  auto r = Exchange(port, "POST", "/v1/document/parse?filename=doc.pdf", pdf, "application/pdf");
  EXPECT_TRUE(r);
  if (!r) return "";
  EXPECT_EQ(r->status, 202) << r->body;
  const Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  return json.is_object() ? json.value("task_id", "") : "";
}

std::string Status(int port, const std::string& id) {
  auto r = Exchange(port, "GET", "/v1/tasks/" + id);
  if (!r) return "";
  if (r->status == 404) return "gone";
  const Json json = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  return json.is_object() ? json.value("status", "") : "";
}

TEST(ServeLimitsCliTest, OnePastEachBoundIsAUsageErrorNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--max-preview-renders", "0"},  {"--max-preview-renders", "257"},
      {"--preview-cache-bytes", "-1"}, {"--preview-cache-bytes", "1099511627777"},
      {"--max-retained-bytes", "0"},   {"--max-retained-bytes", "1125899906842625"},
      {"--max-preview-waiting", "-1"}, {"--max-preview-waiting", "1025"},
  };
  for (const auto& [flag, value] : bad) {
    const CliResult r = RunCli({"serve", "--model", "/nonexistent", flag, value});
    EXPECT_TRUE(UsageError(r, {flag})) << flag << " " << value << Describe(r);
  }
  // Previews are serve's: the worker has no such flag.
  const CliResult worker =
      RunCli({"worker", "--model", "/nonexistent", "--queue", "amqp://127.0.0.1:1", "--cache",
              "redis://127.0.0.1:1", "--max-preview-renders", "1"});
  EXPECT_TRUE(UsageError(worker, {"--max-preview-renders"})) << Describe(worker);
}

TEST(ServeLimitsCliTest, RetentionAndPreviewFlagsReachTheServer) {
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  const std::string pdf = testing::LongPdf(3, testing::PageLook::kDistinct);

  // --max-retained-bytes 1: a finished task's files are over the quota, so it leaves at once.
  {
    ServeProcess server({"--model", model, "--work-dir", scratch + "/quota", "--max-tokens", "2",
                         "--max-retained-bytes", "1"});
    ASSERT_FALSE(server.url().empty()) << server.log();
    const std::string id = Submit(server.port(), pdf);
    ASSERT_FALSE(id.empty());
    EXPECT_TRUE(WaitUntil([&] { return Status(server.port(), id) == "gone"; }, kDocumentWait,
                          kRequestPoll));
    EXPECT_FALSE(fs::exists(scratch + "/quota/" + id));
  }

  // Previews through the counting helper: no cache, one render at a time.
  const std::string helper = scratch + "/counting-helper";
  testing::WriteFile(helper, "#!/bin/sh\necho started >> '" + scratch + "/starts'\nwhile [ -e '" +
                                 scratch + "/hold' ]; do sleep 0.01; done\nexec '" +
                                 std::string(MINERU_BINARY_DIR) +
                                 "/src/apps/mineru-pdf-render' \"$@\"\n");
  ::chmod(helper.c_str(), 0755);
  const auto starts = [&] {
    std::istringstream lines(testing::ReadFile(scratch + "/starts"));
    int n = 0;
    for (std::string line; std::getline(lines, line);) ++n;
    return n;
  };
  ServeProcess server(
      {"--model", model, "--work-dir", scratch + "/previews", "--max-tokens", "2",
       "--preview-cache-bytes", "0", "--max-preview-renders", "1", "--max-preview-waiting", "0"},
      {"MINERU_PDF_RENDER_HELPER=" + helper});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const int port = server.port();
  const std::string id = Submit(port, pdf);
  ASSERT_TRUE(
      WaitUntil([&] { return Status(port, id) == "completed"; }, kDocumentWait, kRequestPoll))
      << server.log();
  const std::string page = "/v1/tasks/" + id + "/pages/0/";
  const int before = starts();  // the parse's own renders
  for (int i = 0; i < 2; ++i) {
    auto r = Exchange(port, "GET", page + "0");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }
  EXPECT_EQ(starts(), before + 2);  // nothing kept: rendered twice

  testing::WriteFile(scratch + "/hold", "1");
  int held_status = 0;
  std::thread held([&] {
    auto r = Exchange(port, "GET", page + "1");
    held_status = r ? r->status : -1;
  });
  const bool in_flight =
      WaitUntil([&] { return starts() == before + 3; }, kDocumentWait, kRequestPoll);
  auto refused = Exchange(port, "GET", page + "2");
  fs::remove(scratch + "/hold");
  held.join();
  ASSERT_TRUE(in_flight);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_EQ(refused->Header("retry-after"), "1");
  EXPECT_NE(refused->body.find("--max-preview-renders"), std::string::npos) << refused->body;
  EXPECT_NE(refused->body.find("--max-preview-waiting"), std::string::npos) << refused->body;
  EXPECT_EQ(held_status, 200);
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

}  // namespace
}  // namespace mineru::apps
