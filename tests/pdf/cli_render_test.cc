// SPDX-License-Identifier: Apache-2.0
// mineru-cpp render, end to end: files written, pages.json, page lists, exit codes and error
// lines, and pixels identical to pdftoppm's (the same Poppler) at MinerU's resolution.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/json.h"
#include "pdf_test_util.h"

namespace mineru::pdf {
namespace {

using testing::FailedWith;
using testing::kMineruCpp;
using testing::kPdfData;
using testing::kRealPage;
using testing::kShapes;
using testing::Run;
using testing::RunResult;

namespace fs = std::filesystem;

RunResult Render(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{kMineruCpp, "render"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, env);
}

// Width and height from a PNG's IHDR chunk.
std::pair<int, int> PngSize(const std::string& path) {
  const std::string bytes = testing::ReadFile(path);
  EXPECT_GE(bytes.size(), 24u) << path;
  EXPECT_EQ(bytes.substr(0, 8), "\x89PNG\r\n\x1a\n") << path;
  if (bytes.size() < 24) return {0, 0};
  auto be32 = [&](size_t at) {
    return (uint8_t(bytes[at]) << 24) | (uint8_t(bytes[at + 1]) << 16) |
           (uint8_t(bytes[at + 2]) << 8) | uint8_t(bytes[at + 3]);
  };
  return {static_cast<int>(be32(16)), static_cast<int>(be32(20))};
}

TEST(CliRenderTest, WritesOnePngPerPageAndPagesJson) {
  const std::string out = testing::TestDir() + "/out";
  const RunResult r = Render({kShapes, "-o", out});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << testing::Describe(r);
  EXPECT_NE(r.out.find("3 of 3 pages"), std::string::npos) << r.out;
  EXPECT_EQ(PngSize(out + "/page_0001.png"), std::make_pair(1700, 2200));
  EXPECT_EQ(PngSize(out + "/page_0002.png"), std::make_pair(2339, 1653));
  EXPECT_EQ(PngSize(out + "/page_0003.png"), std::make_pair(278, 556));
  auto json = ReadJsonFile(out + "/pages.json", 1 << 20);
  ASSERT_TRUE(json) << json.error().ToString();
  EXPECT_EQ((*json)["page_count"], 3);
  EXPECT_EQ((*json)["dpi"], 200.0);
  EXPECT_EQ((*json)["max_long_side"], 3500);
  const Json& page2 = (*json)["pages"][1];
  EXPECT_EQ(page2["page"], 2);
  EXPECT_EQ(page2["width_pt"], 842.0);
  EXPECT_EQ(page2["height_pt"], 595.0);
  EXPECT_EQ(page2["rotation"], 90);
  EXPECT_EQ(page2["scale"], 200.0 / 72);
  EXPECT_EQ(page2["width"], 2339);
  EXPECT_EQ(page2["file"], "page_0002.png");
}

TEST(CliRenderTest, PageListAndResolution) {
  const std::string out = testing::TestDir();
  const RunResult r = Render({kShapes, "-o", out, "--pages", "1,3-", "--dpi", "72"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << testing::Describe(r);
  EXPECT_TRUE(fs::exists(out + "/page_0001.png"));
  EXPECT_FALSE(fs::exists(out + "/page_0002.png"));
  EXPECT_EQ(PngSize(out + "/page_0003.png"), std::make_pair(100, 200));
  // The long-side cap applies whatever the DPI.
  const RunResult capped = Render({kShapes, "-o", out, "--pages", "1", "--max-long-side", "500"});
  ASSERT_TRUE(capped.exited && capped.exit_code == 0) << testing::Describe(capped);
  EXPECT_EQ(PngSize(out + "/page_0001.png"), std::make_pair(387, 500));
}

TEST(CliRenderTest, SamePixelsAsPdftoppm) {
  if (testing::Run({"pdftoppm", "-v"}).exit_code != 0) GTEST_SKIP() << "pdftoppm not installed";
  const std::string dir = testing::TestDir();
  // A scanned page's size (1225.5 x 1800 pt): the 3500-pixel cap makes it 140 DPI.
  const std::string tall = dir + "/tall.pdf";
  testing::WriteFile(tall, testing::MakePdf(1, 1225.5, 1800));
  struct Case {
    std::string pdf;
    std::string page;
    std::string resolution;  // scale x 72
  };
  // MinerU's 200 DPI on a real page and on a rotated one, and a capped page.
  const Case cases[] = {{kRealPage, "1", "200"}, {kShapes, "2", "200"}, {tall, "1", "140"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pdf + " page " + c.page);
    const std::string out = dir + "/ours";
    const RunResult ours = Render({c.pdf, "-o", out, "--pages", c.page, "--format", "ppm"});
    ASSERT_TRUE(ours.exited && ours.exit_code == 0) << testing::Describe(ours);
    const RunResult theirs = testing::Run({"pdftoppm", "-cropbox", "-r", c.resolution, "-f", c.page,
                                           "-l", c.page, "-singlefile", c.pdf, dir + "/theirs"});
    ASSERT_TRUE(theirs.exited && theirs.exit_code == 0) << testing::Describe(theirs);
    const testing::Ppm a =
        testing::ReadPpm(out + "/page_" + std::string(4 - c.page.size(), '0') + c.page + ".ppm");
    const testing::Ppm b = testing::ReadPpm(dir + "/theirs.ppm");
    ASSERT_EQ(a.width, b.width);
    ASSERT_EQ(a.height, b.height);
    size_t differing = 0;
    for (size_t i = 0; i < a.rgb.size(); ++i) differing += a.rgb[i] != b.rgb[i];
    EXPECT_EQ(differing, 0u) << "bytes differing from pdftoppm";
  }
}

TEST(CliRenderTest, BadDocumentsFailWithOneLineNamingTheFile) {
  const std::string dir = testing::TestDir();
  testing::WriteFile(dir + "/notes.pdf", "hello");
  EXPECT_TRUE(
      FailedWith(Render({dir + "/notes.pdf", "-o", dir + "/a"}), {"notes.pdf", "not a PDF"}));
  EXPECT_TRUE(FailedWith(Render({kPdfData + "/encrypted_user.pdf", "-o", dir + "/b"}),
                         {"encrypted_user.pdf", "--password"}));
  const RunResult unlocked =
      Render({kPdfData + "/encrypted_user.pdf", "-o", dir + "/c", "--password", "secret"});
  EXPECT_TRUE(unlocked.exited && unlocked.exit_code == 0) << testing::Describe(unlocked);
  EXPECT_TRUE(FailedWith(Render({kPdfData + "/zero_pages.pdf", "-o", dir + "/d"}),
                         {"zero_pages.pdf", "no pages"}));
  EXPECT_TRUE(FailedWith(Render({kShapes, "-o", dir + "/e", "--pages", "4"}),
                         {"shapes.pdf", "page 4 is past the end"}));
  EXPECT_TRUE(
      FailedWith(Render({kShapes, "-o", dir + "/f", "--max-pages", "2"}), {"--max-pages 2"}));
  EXPECT_TRUE(FailedWith(Render({kShapes, "-o", dir + "/g", "--helper", dir + "/nothing"}),
                         {"nothing", "not executable"}));
}

TEST(CliRenderTest, HelperCrashIsAnErrorNamingThePage) {
  const std::string dir = testing::TestDir();
  const RunResult r = Render({kShapes, "-o", dir}, {std::string(testing::kFaultVar) + "=crash:2"});
  EXPECT_TRUE(FailedWith(r, {"shapes.pdf", "page 2", "signal 11"}));
  EXPECT_TRUE(fs::exists(dir + "/page_0001.png"));  // written before the crash
  EXPECT_FALSE(fs::exists(dir + "/pages.json"));
}

TEST(CliRenderTest, UsageErrors) {
  const std::string dir = testing::TestDir();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{kShapes, "-o", dir, "--pages", "0"},
        std::vector<std::string>{kShapes, "-o", dir, "--pages", "3-1"},
        std::vector<std::string>{kShapes, "-o", dir, "--dpi", "0"},
        std::vector<std::string>{kShapes, "-o", dir, "--format", "gif"},
        std::vector<std::string>{kShapes}}) {
    const RunResult r = Render(args);
    EXPECT_TRUE(r.exited && r.exit_code == 2) << testing::Describe(r);
  }
}

}  // namespace
}  // namespace mineru::pdf
