// SPDX-License-Identifier: Apache-2.0
// Whole documents through pipeline::RemoteGenerator against the scripted stand-in model server
// (model_server_stub.h), every request answered with a layout of four recognised regions
// (title, text, table, equation; 2509's client does not send the image region), so each page
// makes one layout request and four block requests. What a fault costs the document, in its
// outputs and its report:
//   * a block whose request is refused (400) is left empty with a warning naming the status;
//     the document completes (MinerU issue #4090: there one failed request fails the document);
//   * a storm of 503 is retried and counted (request_retries), the outputs complete;
//   * an answer cut at its token limit (finish_reason "length") is kept and listed in
//     truncated_requests with its page, block and type;
//   * a model server that goes away in the middle of a document (its process stopped while it
//     holds a request) and comes back on the same port: the request is retried and the
//     document completes with every page;
//   * a server that never comes back: every request fails, each page is a failed page, the
//     document still writes its files.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <optional>
#include <regex>
#include <string>

#include "../support/scratch.h"
#include "base/json.h"
#include "pipeline/document.h"
#include "remote_generator_fixture.h"

namespace mineru::pipeline::testing {
namespace {

namespace fs = std::filesystem;

const std::string kShapes = std::string(MINERU_TEST_DATA_DIR) + "/pdf/shapes.pdf";  // 3 pages

// Layout answer of every request (2509 grammar). Block requests get it too: their content is
// the same text, which the post-processing of each type takes as it takes any model text.
constexpr std::string_view kLayout =
    "<|box_start|>080 040 920 090<|box_end|><|ref_start|>title<|ref_end|><|rotate_up|>\n"
    "<|box_start|>080 110 920 250<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>\n"
    "<|box_start|>080 270 920 420<|box_end|><|ref_start|>table<|ref_end|><|rotate_up|>\n"
    "<|box_start|>200 440 800 500<|box_end|><|ref_start|>equation<|ref_end|><|rotate_up|>";
constexpr int kBlocksPerPage = 4;

// One action answering with the layout, with extra keys (e.g. "finish_reason").
std::string Answer(const Json& extra = Json::object()) {
  Json action{{"do", "answer"}, {"content", std::string(kLayout)}};
  for (const auto& [key, value] : extra.items()) action[key] = value;
  return action.dump();
}

std::string Script(std::initializer_list<std::string> actions) {
  std::string out = "[";
  for (const std::string& a : actions) out += (out.size() > 1 ? "," : "") + a;
  return out + "]";
}

class RemoteDocumentTest : public RemoteGeneratorTest {
 protected:
  // Pages one at a time, so that the script's actions meet the requests in a known order: a
  // page's layout request, then its four block requests (in any order among themselves).
  static DocumentOptions DocOptions(int end_page) {
    DocumentOptions options;
    options.end_page = end_page;
    options.pages_in_flight = 1;
    options.extract.block_attempts = 1;  // as `--model-server` sets it: the generator retries
    options.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
    return options;
  }

  Json Report(const std::string& out) const {
    const std::string path = out + "/shapes/vlm/shapes_report.json";
    auto json = ParseJson(testing_support::ReadFile(path), "report");
    EXPECT_TRUE(json) << path;
    return json ? *json : Json();
  }
};

TEST_F(RemoteDocumentTest, ARefusedBlockIsLeftEmptyAndTheDocumentCompletes) {
  ASSERT_TRUE(
      StartStub(Script({Answer(), Answer(), R"({"do": "status", "status": 400})", Answer()})));
  auto generator = Make(Options());
  ASSERT_TRUE(generator);
  const std::string out = testing_support::TestDir();
  auto result = ParseDocument(*generator, kShapes, out, DocOptions(0));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->failed_pages.size(), 0u);
  EXPECT_EQ(result->failed_blocks, 1);
  const Json report = Report(out);
  EXPECT_EQ(report["failed_blocks"], 1) << report.dump();
  // The warning names the block, its type and the status.
  std::optional<int> failed;
  static const std::regex kWarning(R"(block ([0-9]+) \([a-z_]+\): recognition failed.*HTTP 400)");
  for (const Json& w : report["warnings"]) {
    std::smatch m;
    const std::string text = w.get<std::string>();
    if (std::regex_search(text, m, kWarning)) failed = std::stoi(m[1].str());
  }
  ASSERT_TRUE(failed) << report.dump();
  // Every other block kept its answer (the table's layout-shaped answer holds no OTSL cell, so
  // its HTML is empty either way: it is not counted).
  auto model = ParseJson(testing_support::ReadFile(out + "/shapes/vlm/shapes_model.json"), "m",
                         JsonFileLimits());
  ASSERT_TRUE(model && model->is_array() && model->size() == 1u);
  const Json& blocks = (*model)[0];
  ASSERT_EQ(blocks.size(), static_cast<size_t>(kBlocksPerPage)) << model->dump();
  for (int i = 0; i < kBlocksPerPage; ++i) {
    const Json content = blocks[i].value("content", Json());
    const bool has = content.is_string() && !content.get<std::string>().empty();
    if (i == *failed) {
      EXPECT_FALSE(has) << i << ": " << blocks[i].dump();
    } else if (blocks[i].value("type", "") != "table") {
      EXPECT_TRUE(has) << i << ": " << blocks[i].dump();
    }
  }
  EXPECT_EQ(generator->Stats().succeeded, kBlocksPerPage);
  EXPECT_EQ(generator->Stats().failed, 1);
  EXPECT_EQ(stub_.ChatRequests(), 1 + kBlocksPerPage);  // a 400 is not retried
}

TEST_F(RemoteDocumentTest, AStormOf503IsRetriedAndCounted) {
  const std::string busy = R"({"do": "status", "status": 503})";
  ASSERT_TRUE(StartStub(Script({busy, busy, Answer(), busy, Answer()})));
  auto generator = Make(Options());
  ASSERT_TRUE(generator);
  const std::string out = testing_support::TestDir();
  auto result = ParseDocument(*generator, kShapes, out, DocOptions(0));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->failed_blocks, 0);
  EXPECT_EQ(result->failed_pages.size(), 0u);
  const Json report = Report(out);
  EXPECT_EQ(report["request_retries"], 3) << report.dump();
  // The requests' latency as the pipeline saw it (request-seconds, retries included).
  EXPECT_GT(result->extract.requests, 0);
  EXPECT_EQ(stub_.ChatRequests(), 1 + kBlocksPerPage + 3);
  EXPECT_EQ(generator->Stats().retries, 3);
}

TEST_F(RemoteDocumentTest, ATruncatedAnswerIsKeptAndListed) {
  ASSERT_TRUE(StartStub(Script({Answer(), Answer(Json{{"finish_reason", "length"}}), Answer()})));
  auto generator = Make(Options());
  ASSERT_TRUE(generator);
  const std::string out = testing_support::TestDir();
  auto result = ParseDocument(*generator, kShapes, out, DocOptions(0));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->failed_blocks, 0);
  const Json report = Report(out);
  ASSERT_EQ(report["truncated_requests"].size(), 1u) << report.dump();
  const Json& t = report["truncated_requests"][0];
  EXPECT_EQ(t["page_idx"], 0);
  ASSERT_TRUE(t["block"].is_number_integer()) << t.dump();
  const int block = t["block"].get<int>();
  EXPECT_GE(block, 0);
  EXPECT_LT(block, kBlocksPerPage);
  static const char* kTypes[] = {"title", "text", "table", "equation"};
  EXPECT_EQ(t["type"], kTypes[block]) << t.dump();
  EXPECT_EQ(generator->Stats().truncated, 1);
}

TEST_F(RemoteDocumentTest, AServerThatGoesAwayMidDocumentAndComesBackLosesNothing) {
  // Page 1 (five requests) answered; page 2's layout request is held until the stub is stopped.
  const std::string held = Answer(Json{{"gate", "never"}, {"max_wait", 30}});
  ASSERT_TRUE(
      StartStub(Script({Answer(), Answer(), Answer(), Answer(), Answer(), held, Answer()})));
  RemoteGeneratorOptions options = Options();
  options.server.retry.max_retries = 30;  // long enough for Python to start again
  options.server.retry.backoff_base = std::chrono::milliseconds(20);
  options.server.retry.max_retry_after = std::chrono::seconds(1);
  auto generator = Make(options);
  ASSERT_TRUE(generator);
  const std::string out = testing_support::TestDir();
  auto parse = std::async(std::launch::async,
                          [&] { return ParseDocument(*generator, kShapes, out, DocOptions(2)); });
  ASSERT_TRUE(stub_.WaitForChatRequests(1 + kBlocksPerPage + 1));
  stub_.Stop();  // the held request's connection dies with the process
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // down for a while
  ASSERT_TRUE(stub_.Restart());
  ASSERT_TRUE(stub_.SetScript(Script({Answer()})));
  ASSERT_EQ(parse.wait_for(kHangGuard), std::future_status::ready);
  auto result = parse.get();
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->pages, 3);
  EXPECT_EQ(result->failed_pages.size(), 0u);
  EXPECT_EQ(result->failed_blocks, 0);
  EXPECT_GE(Report(out)["request_retries"].get<int>(), 1);
  // Pages 2 and 3 were answered by the restarted server: their layouts and blocks at least.
  EXPECT_GE(stub_.ChatRequests(), 2 * (1 + kBlocksPerPage));
}

TEST_F(RemoteDocumentTest, AServerThatNeverComesBackFailsEachPageButWritesTheFiles) {
  ASSERT_TRUE(StartStub(Script({Answer()})));
  RemoteGeneratorOptions options = Options();
  options.server.retry.max_retries = 2;
  auto generator = Make(options);
  ASSERT_TRUE(generator);
  stub_.Stop();
  const std::string out = testing_support::TestDir();
  auto result = ParseDocument(*generator, kShapes, out, DocOptions(1));
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->failed_pages.size(), 2u);
  const Json report = Report(out);
  ASSERT_EQ(report["failed_pages"].size(), 2u) << report.dump();
  EXPECT_NE(report["failed_pages"][0]["error"].get<std::string>().find("model server"),
            std::string::npos)
      << report.dump();
  EXPECT_TRUE(fs::is_regular_file(out + "/shapes/vlm/shapes.md"));
  EXPECT_TRUE(fs::is_regular_file(out + "/shapes/vlm/shapes_middle.json"));
  EXPECT_EQ(generator->Stats().failed, 2);
  EXPECT_EQ(generator->Stats().retries, 4);
}

}  // namespace
}  // namespace mineru::pipeline::testing
