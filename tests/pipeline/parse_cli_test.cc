// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp parse` end to end with a tiny random model (the golden shape plus the Qwen2
// tokenizer, written by make-model): every corpus PDF and an image parse without a crash and
// every JSON file validates against the schemas in schemas/ (tools/validate-outputs.py, Debian's
// python3-jsonschema); a 200-page PDF stays under a stated memory bound; bad inputs and model
// ids fail with a message. Needs the tokenizer.json that the fixture text_qwen_tokenizer writes.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/scratch.h"
#include "../support/subprocess.h"
#include "base/json.h"

namespace mineru::pipeline {
namespace {

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

  r = RunCli({"parse", kCorpusDir + "/mineru_unittest_test.pdf", "-o", dir + "/out", "--model",
              "nobody/no-such-model"},
             std::chrono::seconds(60));
  EXPECT_TRUE(r.exited && r.exit_code == 1) << Describe(r);
  EXPECT_NE(r.err.find("--model DIR"), std::string::npos) << Describe(r);

  r = RunCli({"parse", kCorpusDir + "/mineru_unittest_test.pdf", "-o", dir + "/out", "--model",
              TinyModel(), "-s", "3"});
  EXPECT_TRUE(r.exited && r.exit_code == 1) << Describe(r);
  EXPECT_NE(r.err.find("page range"), std::string::npos) << Describe(r);

  r = RunCli(
      {"parse", kCorpusDir, "-o", dir + "/out", "--model", TinyModel(), "--pages-in-flight", "0"});
  EXPECT_TRUE(r.exited && r.exit_code == 2) << Describe(r);
}

}  // namespace
}  // namespace mineru::pipeline
