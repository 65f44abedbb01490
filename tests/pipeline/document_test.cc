// SPDX-License-Identifier: Apache-2.0
// The whole pipeline on real files with a scripted generator: a page whose layout holds a
// title, text with an inline formula, a captioned table, a captioned image, an equation and a
// footer, through to every output file; failures that stay local; PDFs with page ranges.
#include "pipeline/document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "../support/scratch.h"
#include "base/json.h"
#include "hanging_generator.h"
#include "image/encode.h"
#include "image/image.h"
#include "pipeline/block_requests.h"
#include "scripted_generator.h"

namespace mineru::pipeline {
namespace {

namespace fs = std::filesystem;
using testing::HangingGenerator;
using testing::ScriptedCall;
using testing::ScriptedGenerator;
using testing_support::ReadFile;
using testing_support::TestDir;

constexpr std::string_view kLayout =
    "<|box_start|>100 050 900 100<|box_end|><|ref_start|>title<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 120 900 200<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 220 900 240<|box_end|><|ref_start|>table_caption<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 250 900 450<|box_end|><|ref_start|>table<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 470 500 600<|box_end|><|ref_start|>image<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 610 500 640<|box_end|><|ref_start|>image_caption<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 660 900 720<|box_end|><|ref_start|>equation<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 950 900 990<|box_end|><|ref_start|>footer<|ref_end|><|rotate_up|>";

// Text answers in reading order of the text-prompt blocks: title, text, table caption, image
// caption, footer.
const std::vector<std::string> kTexts = {"Hello Title", "Some text with \\(x^2\\) inline.",
                                         "Table 1: Results", "Figure 1: A cat", "Page footer"};

struct Script {
  bool fail_table = false;
  bool fail_layout = false;
  std::mutex mutex;
  size_t next_text = 0;

  std::optional<std::string> operator()(const ScriptedCall& call) {
    if (call.prompt == kLayoutPrompt) {
      if (fail_layout) return std::nullopt;
      return std::string(kLayout);
    }
    if (call.prompt == kTablePrompt) {
      if (fail_table) return std::nullopt;
      return "<fcel>A<fcel>B<nl><fcel>1<fcel>2<nl>";
    }
    if (call.prompt == kEquationPrompt) return "E = mc^2";
    std::lock_guard lock(mutex);
    return kTexts[next_text++ % kTexts.size()];
  }
};

std::string WritePage(const std::string& dir) {
  auto page = image::MakeImage(400, 300, 255, 255, 255);
  EXPECT_TRUE(page);
  auto png = image::EncodePng(*page);
  EXPECT_TRUE(png);
  const std::string path = dir + "/page.png";
  testing_support::WriteFile(path, std::string(png->begin(), png->end()));
  return path;
}

Json ReadJson(const std::string& path) {
  Json json = Json::parse(ReadFile(path), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << path;
  return json;
}

TEST(DocumentTest, OnePageThroughEveryOutputFile) {
  const std::string dir = TestDir();
  const std::string input = WritePage(dir);
  Script script;
  ScriptedGenerator generator([&](const ScriptedCall& c) { return script(c); });
  auto result = ParseDocument(generator, input, dir + "/out", DocumentOptions{});
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->pages, 1);
  EXPECT_TRUE(result->failed_pages.empty());
  EXPECT_EQ(result->failed_blocks, 0);
  const std::string out = dir + "/out/page/vlm";
  EXPECT_EQ(result->output_dir, out);

  // The requests: one layout on the 1036 x 1036 thumbnail, then every block but the image.
  const std::vector<ScriptedCall> calls = generator.calls();
  ASSERT_EQ(calls.size(), 8u);
  EXPECT_EQ(calls[0].prompt, kLayoutPrompt);
  EXPECT_EQ(calls[0].image_width, 1036);
  EXPECT_EQ(calls[0].image_height, 1036);
  EXPECT_EQ(calls[0].sampling.no_repeat_ngram_size, 100);
  int tables = 0, equations = 0;
  for (size_t i = 1; i < calls.size(); ++i) {
    tables += calls[i].prompt == kTablePrompt;
    equations += calls[i].prompt == kEquationPrompt;
    EXPECT_GE(std::min(calls[i].image_width, calls[i].image_height), 28);  // resize_by_need
  }
  EXPECT_EQ(tables, 1);
  EXPECT_EQ(equations, 1);

  // Markdown: para blocks only, in reading order.
  const std::string md = ReadFile(out + "/page.md");
  EXPECT_EQ(md.find("# Hello Title"), 0u) << md;
  EXPECT_NE(md.find("Some text with $x^2$ inline."), std::string::npos) << md;
  EXPECT_NE(md.find("Table 1: Results"), std::string::npos) << md;
  EXPECT_NE(md.find("<table><tr><td>A</td><td>B</td></tr><tr><td>1</td><td>2</td></tr></table>"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Figure 1: A cat"), std::string::npos) << md;
  EXPECT_NE(md.find("$$\nE = mc^2\n$$"), std::string::npos) << md;
  EXPECT_EQ(md.find("Page footer"), std::string::npos) << md;
  std::smatch image_ref;
  ASSERT_TRUE(
      std::regex_search(md, image_ref, std::regex(R"(!\[\]\(images/([0-9a-f]{64}\.jpg)\))")))
      << md;
  EXPECT_TRUE(fs::exists(out + "/images/" + image_ref[1].str()));

  // middle.json: page size in points (the image's pixels), groups, discarded footer.
  const Json middle = ReadJson(out + "/page_middle.json");
  ASSERT_EQ(middle["pdf_info"].size(), 1u);
  const Json& page = middle["pdf_info"][0];
  EXPECT_EQ(page["page_size"], Json::array({400, 300}));
  EXPECT_EQ(page["page_idx"], 0);
  std::vector<std::string> types;
  for (const Json& block : page["para_blocks"]) types.push_back(block["type"]);
  EXPECT_EQ(types,
            (std::vector<std::string>{"title", "text", "table", "image", "interline_equation"}));
  ASSERT_EQ(page["discarded_blocks"].size(), 1u);
  EXPECT_EQ(page["discarded_blocks"][0]["type"], "footer");
  EXPECT_EQ(page["para_blocks"][0]["bbox"], Json::array({40, 15, 360, 30}));  // int(x * W)

  // content_list.json: para blocks then discarded ones, bboxes on the 0-1000 grid.
  const Json content = ReadJson(out + "/page_content_list.json");
  ASSERT_EQ(content.size(), 6u);
  EXPECT_EQ(content[0]["type"], "text");
  EXPECT_EQ(content[0]["text_level"], 1);
  EXPECT_EQ(content[2]["type"], "table");
  EXPECT_EQ(content[2]["table_caption"], Json::array({"Table 1: Results"}));
  EXPECT_EQ(content[3]["type"], "image");
  EXPECT_EQ(content[3]["image_caption"], Json::array({"Figure 1: A cat"}));
  EXPECT_EQ(content[4]["type"], "equation");
  EXPECT_EQ(content[5]["type"], "footer");
  EXPECT_EQ(content[0]["bbox"], Json::array({100, 50, 900, 100}));

  // model.json: the client's blocks after post-processing.
  const Json model = ReadJson(out + "/page_model.json");
  ASSERT_EQ(model.size(), 1u);
  ASSERT_EQ(model[0].size(), 8u);
  EXPECT_EQ(model[0][6]["type"], "equation");
  EXPECT_EQ(model[0][6]["content"], "\\[\nE = mc^2\n\\]");
  EXPECT_EQ(model[0][4]["content"], nullptr);  // images are not recognised

  // images/: the image, the table and the equation crops, named by SHA-256.
  int jpgs = 0;
  for (const auto& entry : fs::directory_iterator(out + "/images")) {
    EXPECT_TRUE(
        std::regex_match(entry.path().filename().string(), std::regex("[0-9a-f]{64}\\.jpg")));
    ++jpgs;
  }
  EXPECT_EQ(jpgs, 3);
}

TEST(DocumentTest, AFailingBlockIsRetriedOnceThenLeftEmpty) {
  const std::string dir = TestDir();
  const std::string input = WritePage(dir);
  Script script;
  script.fail_table = true;
  ScriptedGenerator generator([&](const ScriptedCall& c) { return script(c); });
  auto result = ParseDocument(generator, input, dir + "/out", DocumentOptions{});
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->failed_blocks, 1);
  EXPECT_TRUE(result->failed_pages.empty());
  int table_calls = 0;
  for (const ScriptedCall& call : generator.calls()) table_calls += call.prompt == kTablePrompt;
  EXPECT_EQ(table_calls, 2);
  bool warned = false;
  for (const std::string& w : result->warnings)
    warned = warned || w.find("table") != std::string::npos;
  EXPECT_TRUE(warned);
  // The rest of the page is complete.
  EXPECT_NE(ReadFile(result->output_dir + "/page.md").find("Figure 1: A cat"), std::string::npos);
}

TEST(DocumentTest, AFailedPageIsAnErrorEntryAndTheDocumentIsWritten) {
  const std::string dir = TestDir();
  const std::string input = WritePage(dir);
  Script script;
  script.fail_layout = true;
  ScriptedGenerator generator([&](const ScriptedCall& c) { return script(c); });
  auto result = ParseDocument(generator, input, dir + "/out", DocumentOptions{});
  ASSERT_TRUE(result) << result.error().ToString();
  ASSERT_EQ(result->failed_pages.size(), 1u);
  EXPECT_EQ(result->failed_pages[0].page_idx, 0);
  EXPECT_NE(result->failed_pages[0].error.find("layout"), std::string::npos);
  EXPECT_EQ(generator.calls().size(), 2u);  // the layout request and its retry
  const Json middle = ReadJson(result->output_dir + "/page_middle.json");
  ASSERT_EQ(middle["pdf_info"].size(), 1u);
  EXPECT_TRUE(middle["pdf_info"][0]["para_blocks"].empty());
}

TEST(DocumentTest, PdfPagesInRangeStreamThroughAllInFlight) {
  const std::string dir = TestDir();
  const std::string input = std::string(MINERU_TEST_DATA_DIR) + "/pdf/shapes.pdf";  // 3 pages
  std::atomic<int> layouts{0};
  ScriptedGenerator generator([&](const ScriptedCall& call) -> std::optional<std::string> {
    if (call.prompt == kLayoutPrompt) {
      ++layouts;
      return "<|box_start|>100 100 900 200<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>";
    }
    return "Body text.";
  });
  DocumentOptions options;
  options.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;  // not beside the test binary
  options.start_page = 1;
  options.end_page = 2;
  options.pages_in_flight = 2;
  std::vector<int> progress;
  auto result = ParseDocument(generator, input, dir + "/out", options,
                              [&](const DocumentProgress& p) { progress.push_back(p.pages_done); });
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->pages, 2);
  EXPECT_EQ(layouts.load(), 2);
  EXPECT_EQ(progress, (std::vector<int>{1, 2}));
  const Json middle = ReadJson(result->output_dir + "/shapes_middle.json");
  ASSERT_EQ(middle["pdf_info"].size(), 2u);
  EXPECT_EQ(middle["pdf_info"][0]["page_idx"], 1);
  EXPECT_EQ(middle["pdf_info"][1]["page_idx"], 2);
  EXPECT_TRUE(fs::exists(result->output_dir + "/shapes_origin.pdf"));
  EXPECT_EQ(ReadFile(result->output_dir + "/shapes.md"), "Body text.\n\nBody text.");
}

TEST(DocumentTest, CancelStopsPagesInFlightAndRendersNoMore) {
  const std::string dir = TestDir();
  const std::string input = std::string(MINERU_TEST_DATA_DIR) + "/pdf/shapes.pdf";  // 3 pages
  HangingGenerator generator;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  DocumentOptions options;
  options.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
  options.pages_in_flight = 1;
  options.cancel = cancel;
  std::thread canceller([&] {
    // Cancel once the first page's layout request is in flight.
    while (generator.submitted() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    *cancel = true;
  });
  auto result = ParseDocument(generator, input, dir + "/out", options);
  canceller.join();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled) << result.error().ToString();
  EXPECT_EQ(generator.submitted(), 1);  // no retry, no later page
  EXPECT_EQ(generator.cancelled(), 1);  // the request in flight was cancelled
  EXPECT_FALSE(fs::exists(dir + "/out/shapes/vlm/shapes.md"));
}

TEST(DocumentTest, BadInputsAreErrors) {
  const std::string dir = TestDir();
  ScriptedGenerator generator([](const ScriptedCall&) { return std::string(); });
  EXPECT_FALSE(ParseDocument(generator, dir + "/missing.pdf", dir + "/out", {}));
  testing_support::WriteFile(dir + "/junk.bin", "not a document at all");
  auto junk = ParseDocument(generator, dir + "/junk.bin", dir + "/out", {});
  ASSERT_FALSE(junk);
  DocumentOptions range;
  range.start_page = 5;
  auto empty = ParseDocument(generator, WritePage(dir), dir + "/out", range);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("page range"), std::string::npos);
}

// `parse` names what a file is not in the words of the type its name promises. Before, every
// file without a PDF header went to the image decoder, so an empty or broken ".pdf" was "not a
// PNG, JPEG, WebP, TIFF, BMP or GIF file".
TEST(DocumentTest, AFileIsNamedByTheTypeItsNamePromises) {
  const std::string dir = TestDir();
  ScriptedGenerator generator([](const ScriptedCall&) { return std::string(); });
  struct Case {
    std::string name;
    std::string bytes;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"empty.pdf", "", "empty file, not a PDF"},
      {"broken.pdf", "hello, not a document", "not a PDF"},
      {"SHOUT.PDF", "hello", "not a PDF"},
      {"fake.png", "hello", "not a PNG file"},
      {"empty.png", "", "empty file, not a PNG"},
      {"fake.jpg", "hello", "not a JPEG file"},
      {"fake.jpeg", "hello", "not a JPEG file"},
      {"fake.webp", "hello", "not a WebP file"},
      {"fake.tif", "hello", "not a TIFF file"},
      {"fake.bmp", "hello", "not a BMP file"},
      {"fake.gif", "hello", "not a GIF file"},
      {"junk.bin", "hello", "not a PDF, PNG, JPEG, WebP, TIFF, BMP or GIF file"},
      {"no_extension", "", "not a PDF, PNG, JPEG, WebP, TIFF, BMP or GIF file"},
  };
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.name;
    testing_support::WriteFile(path, c.bytes);
    auto parsed = ParseDocument(generator, path, dir + "/out", {});
    ASSERT_FALSE(parsed) << c.name;
    const std::string& message = parsed.error().message;
    EXPECT_NE(message.find(c.name), std::string::npos) << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.name << ": " << message;
    // A .pdf is not called an image, an image name is not called a PDF.
    if (c.says.find(',') == std::string::npos) {
      const bool pdf = c.says.find("PDF") != std::string::npos;
      EXPECT_EQ(message.find(pdf ? "PNG" : "PDF"), std::string::npos) << c.name << ": " << message;
    }
  }
  // The bytes decide what a file is when they are a format: a PNG named .pdf is read as a PNG.
  const std::string page = WritePage(dir);
  const std::string misnamed = dir + "/scan.pdf";
  fs::copy_file(page, misnamed);
  EXPECT_TRUE(ParseDocument(generator, misnamed, dir + "/out", {}));
}

}  // namespace
}  // namespace mineru::pipeline
