// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp parse` end to end with a tiny random model (the golden shape plus the Qwen2
// tokenizer, written by make-model): every corpus PDF and an image parse without a crash and
// every JSON file validates against the schemas in schemas/ (tools/validate-outputs.py, Debian's
// python3-jsonschema); a 200-page PDF stays under a stated memory bound; bad inputs and model
// ids fail with a message. Needs the tokenizer.json that the fixture text_qwen_tokenizer writes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "../support/scratch.h"
#include "../support/subprocess.h"
#include "../support/wait.h"
#include "base/json.h"

namespace mineru::pipeline {
namespace {

using testing_support::WaitUntil;

namespace fs = std::filesystem;
using testing_support::Describe;
using testing_support::ProcessResult;
using testing_support::RunProcess;
using testing_support::TestDir;

const std::string kBinary = std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp";
const std::string kSourceDir = MINERU_SOURCE_DIR;

// The corpus: five real PDFs (tests/data/corpus/README.md says where they come from).
const std::string kCorpusDir = std::string(MINERU_TEST_DATA_DIR) + "/corpus";

// Peak memory of `parse` on the 200-page PDF: the tiny model, 4 pages in flight, 200 DPI pages
// of up to 1700 x 2200 pixels. Measured about 540 MB; a page image kept past its page (11 MB
// each) or any per-page growth would pass 1 GB long before the last page.
constexpr int64_t kPeakRssBound = int64_t{1} << 30;

ProcessResult RunCli(const std::vector<std::string>& args,
                     std::chrono::milliseconds timeout = std::chrono::seconds(300)) {
  std::vector<std::string> argv = {kBinary, "--threads", "2"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, {"MINERU_THREADS=2"}, timeout);
}

// A tiny random model with the real tokenizer, written once per test binary.
const std::string& TinyModel() {
  static const std::string dir = [] {
    const std::string out = testing_support::ScratchRoot() + "/tiny-model";
    const ProcessResult r = RunCli({"make-model", "--config", "tiny", "--seed", "3", "-o", out,
                                    "--tokenizer-source", MINERU_QWEN_TOKENIZER});
    EXPECT_TRUE(r.exited && r.exit_code == 0) << Describe(r);
    return out;
  }();
  return dir;
}

Json ParseJson(const std::string& text) {
  const size_t start = text.find('{');
  if (start == std::string::npos) return Json();
  Json json = Json::parse(text.substr(start), nullptr, /*allow_exceptions=*/false);
  return json.is_discarded() ? Json() : json;
}

TEST(ParseCliTest, EveryCorpusFileAndAnImageValidateAgainstTheSchemas) {
  const std::string out = TestDir() + "/out";
  const std::string image =
      std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny/images/odd_333x517.png";
  const ProcessResult r = RunCli({"parse", kCorpusDir, image, "-o", out, "--model", TinyModel(),
                                  "--max-tokens", "6", "--json"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << Describe(r);
  const Json report = ParseJson(r.out);
  ASSERT_TRUE(report.is_object()) << r.out;
  EXPECT_EQ(report["documents"].size(), 6u);
  EXPECT_EQ(report["pages"], 13 + 6 + 10 + 8 + 1 + 1);
  EXPECT_EQ(report["failed_pages"], 0);
  for (const char* stem : {"mineru_demo1", "mineru_demo2", "mineru_demo3", "mineru_small_ocr",
                           "mineru_unittest_test", "odd_333x517"}) {
    const fs::path dir = fs::path(out) / stem / "vlm";
    for (const std::string& suffix :
         {std::string(".md"), std::string("_middle.json"), std::string("_content_list.json"),
          std::string("_model.json"), std::string("_report.json")}) {
      EXPECT_TRUE(fs::exists(dir / (stem + suffix))) << (dir / (stem + suffix));
    }
  }
  const ProcessResult valid =
      RunProcess({"/usr/bin/python3", kSourceDir + "/tools/validate-outputs.py", out});
  EXPECT_TRUE(valid.exited && valid.exit_code == 0) << Describe(valid);
}

TEST(ParseCliTest, TwoHundredPagesStayUnderTheMemoryBound) {
  const std::string dir = TestDir();
  // 200 pages from the corpus PDFs, repeated (qpdf, from Debian).
  std::vector<std::string> argv = {"qpdf", "--empty", "--pages"};
  for (int round = 0; round < 6; ++round) {
    for (const char* name : {"mineru_demo1", "mineru_demo2", "mineru_demo3", "mineru_small_ocr",
                             "mineru_unittest_test"}) {
      argv.push_back(kCorpusDir + "/" + name + ".pdf");
    }
  }
  argv.insert(argv.end(), {"--", dir + "/all.pdf"});
  const ProcessResult merged = RunProcess(argv);
  ASSERT_TRUE(merged.exited && merged.exit_code == 0) << Describe(merged);
  const ProcessResult cut = RunProcess(
      {"qpdf", "--empty", "--pages", dir + "/all.pdf", "1-200", "--", dir + "/p200.pdf"});
  ASSERT_TRUE(cut.exited && cut.exit_code == 0) << Describe(cut);

  const ProcessResult r = RunCli({"parse", dir + "/p200.pdf", "-o", dir + "/out", "--model",
                                  TinyModel(), "--max-tokens", "4", "--json"},
                                 std::chrono::seconds(900));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << Describe(r);
  const Json report = ParseJson(r.out);
  ASSERT_TRUE(report.is_object()) << r.out;
  EXPECT_EQ(report["pages"], 200);
  const int64_t peak = report.value("peak_rss_bytes", int64_t{-1});
  ASSERT_GT(peak, 0);
  EXPECT_LT(peak, kPeakRssBound) << "peak resident memory " << peak / 1000000 << " MB";
  RecordProperty("peak_rss_mb", static_cast<int>(peak / 1000000));
}

TEST(ParseCliTest, BadInputsAndModelsFailWithAMessage) {
  const std::string dir = TestDir();
  ProcessResult r =
      RunCli({"parse", dir + "/missing.pdf", "-o", dir + "/out", "--model", TinyModel()});
  EXPECT_TRUE(r.exited && r.exit_code == 1) << Describe(r);
  EXPECT_NE(r.err.find("no such file or directory"), std::string::npos) << Describe(r);

  r = RunProcess({kBinary, "parse", kCorpusDir + "/mineru_unittest_test.pdf", "-o", dir + "/out",
                  "--model", "nobody/no-such-model"},
                 {"HF_ENDPOINT=http://127.0.0.1:1", "HF_HUB_CACHE=" + dir + "/cache"},
                 std::chrono::seconds(60));
  EXPECT_TRUE(r.exited && r.exit_code == 1) << Describe(r);
  EXPECT_NE(r.err.find("cannot download"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("--model DIR"), std::string::npos) << Describe(r);
  r = RunProcess({kBinary, "parse", kCorpusDir + "/mineru_unittest_test.pdf", "-o", dir + "/out",
                  "--model", "nobody/no-such-model"},
                 {"HF_HUB_OFFLINE=1", "HF_HUB_CACHE=" + dir + "/cache"});
  EXPECT_TRUE(r.exited && r.exit_code == 1) << Describe(r);
  EXPECT_NE(r.err.find("HF_HUB_OFFLINE"), std::string::npos) << Describe(r);

  r = RunCli({"parse", kCorpusDir + "/mineru_unittest_test.pdf", "-o", dir + "/out", "--model",
              TinyModel(), "-s", "3"});
  EXPECT_TRUE(r.exited && r.exit_code == 1) << Describe(r);
  EXPECT_NE(r.err.find("page range"), std::string::npos) << Describe(r);

  r = RunCli(
      {"parse", kCorpusDir, "-o", dir + "/out", "--model", TinyModel(), "--pages-in-flight", "0"});
  EXPECT_TRUE(r.exited && r.exit_code == 2) << Describe(r);
}

// A free TCP port on the loopback interface (bound, read back, released).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t length = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  close(fd);
  return ntohs(addr.sin_port);
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

// A Hugging Face Hub stand-in: Python's http.server over a directory laid out as the Hub's URLs
// (the listing at api/models/<repo>/revision/main, the files at <repo>/resolve/<sha>/...).
// It answers Range requests with the whole file, so resuming must start over correctly.
TEST(ParseCliTest, AHubIdIsDownloadedIntoTheCacheThenParsed) {
  const std::string dir = TestDir();
  const std::string repo = "test-org/tiny-mineru";
  const std::string sha = "0123456789abcdef0123456789abcdef01234567";
  const fs::path root = fs::path(dir) / "hub";
  Json siblings = Json::array();
  for (const auto& entry : fs::directory_iterator(TinyModel())) {
    const std::string name = entry.path().filename().string();
    siblings.push_back({{"rfilename", name}});
    fs::create_directories(root / repo / "resolve" / sha);
    fs::copy_file(entry.path(), root / repo / "resolve" / sha / name);
  }
  fs::create_directories(root / "api/models" / repo / "revision");
  testing_support::WriteFile((root / "api/models" / repo / "revision/main").string(),
                             Json{{"sha", sha}, {"siblings", siblings}}.dump());
  // Listings that must be refused: a file name leaving the snapshot, and one that is not JSON.
  fs::create_directories(root / "api/models/test-org/evil/revision");
  testing_support::WriteFile(
      (root / "api/models/test-org/evil/revision/main").string(),
      Json{{"sha", sha}, {"siblings", Json::array({{{"rfilename", "../../escape.txt"}}})}}.dump());
  fs::create_directories(root / "api/models/test-org/garbled/revision");
  testing_support::WriteFile((root / "api/models/test-org/garbled/revision/main").string(),
                             "<html>not a listing</html>");
  // A download cut short earlier: half of config.json, to be resumed (here: restarted).
  const fs::path snapshot = fs::path(dir) / "cache/models--test-org--tiny-mineru/snapshots" / sha;
  fs::create_directories(snapshot);
  const std::string config = testing_support::ReadFile(TinyModel() + "/config.json");
  testing_support::WriteFile((snapshot / "config.json.incomplete").string(),
                             config.substr(0, config.size() / 2));

  const int port = FreePort();
  const std::string port_text = std::to_string(port);
  std::vector<std::string> args = {"/usr/bin/python3", "-m",          "http.server", "--bind",
                                   "127.0.0.1",        "--directory", root.string(), port_text};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t server = 0;
  ASSERT_EQ(posix_spawn(&server, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  WaitUntil([&] { return Accepts(port); });
  const ProcessResult r =
      RunProcess({kBinary, "--threads", "2", "parse", kCorpusDir + "/mineru_unittest_test.pdf",
                  "-o", dir + "/out", "--model", repo, "--max-tokens", "4"},
                 {"HF_ENDPOINT=http://127.0.0.1:" + port_text, "HF_HUB_CACHE=" + dir + "/cache",
                  "MINERU_THREADS=2"},
                 std::chrono::seconds(300));
  auto refused = [&](const std::string& bad_repo) {
    return RunProcess(
        {kBinary, "parse", kCorpusDir + "/mineru_unittest_test.pdf", "-o", dir + "/out-bad",
         "--model", bad_repo},
        {"HF_ENDPOINT=http://127.0.0.1:" + port_text, "HF_HUB_CACHE=" + dir + "/cache"},
        std::chrono::seconds(60));
  };
  const ProcessResult evil = refused("test-org/evil");
  const ProcessResult garbled = refused("test-org/garbled");
  kill(server, SIGTERM);
  waitpid(server, nullptr, 0);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << Describe(r);
  EXPECT_TRUE(evil.exited && evil.exit_code == 1) << Describe(evil);
  EXPECT_NE(evil.err.find("unsafe"), std::string::npos) << Describe(evil);
  EXPECT_FALSE(fs::exists(fs::path(dir) / "cache" / "escape.txt"));
  EXPECT_TRUE(garbled.exited && garbled.exit_code == 1) << Describe(garbled);
  EXPECT_NE(garbled.err.find("corrupt"), std::string::npos) << Describe(garbled);
  for (const auto& entry : fs::directory_iterator(TinyModel())) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(testing_support::ReadFile((snapshot / name).string()),
              testing_support::ReadFile(entry.path().string()))
        << name;
  }
  EXPECT_FALSE(fs::exists(snapshot / "config.json.incomplete"));
  EXPECT_EQ(testing_support::ReadFile(dir + "/cache/models--test-org--tiny-mineru/refs/main"), sha);
  EXPECT_TRUE(fs::exists(dir + "/out/mineru_unittest_test/vlm/mineru_unittest_test.md"));
}

}  // namespace
}  // namespace mineru::pipeline
