// SPDX-License-Identifier: Apache-2.0
// The whole Pro pipeline on a real PDF with a scripted model (scripted_pro_fixture.h): every
// block type of mineru-vl-utils 1.2.1, image analysis, an image inside a table, a table continued
// on the next page merged through the text-only request, a paragraph continued across a column
// break; MinerU 3.4.4's files compared as whole objects and validated against the schemas.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "../support/scratch.h"
#include "../support/subprocess.h"
#include "base/json.h"
#include "pipeline/document.h"
#include "scripted_pro_fixture.h"

namespace mineru::pipeline::scripted_pro {
namespace {

namespace fs = std::filesystem;
using testing_support::ReadFile;

struct ProRun {
  std::optional<Result<DocumentResult>> result;
  std::vector<testing::ScriptedCall> calls;
  std::vector<std::string> merge_prompts;
  std::vector<std::string> unscripted;
  int answered = 0;
  std::string out;
};

Json ReadJson(const std::string& path) {
  Json json = Json::parse(ReadFile(path), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << path;
  return json;
}

class ScriptedProDocumentTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new ProRun;
    const std::string input = std::string(MINERU_TEST_DATA_DIR) + "/corpus/mineru_demo2.pdf";
    const std::string root = testing_support::ScratchRoot() + "/scripted_pro_document";
    fs::remove_all(root);
    DocumentOptions options;
    options.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
    options.start_page = 0;
    options.end_page = 1;
    options.pages_in_flight = 1;  // the script tells pages apart by counting layout requests
    options.extract.profile = Profile::kPro;
    options.extract.post_process.table_formula_eq_wrap = true;
    ProDocumentScript script;
    testing::ScriptedGenerator generator([&](const testing::ScriptedCall& c) { return script(c); });
    run_->result = ParseDocument(generator, input, root, options);
    run_->calls = generator.calls();
    run_->merge_prompts = script.merge_prompts();
    run_->unscripted = script.unscripted();
    run_->answered = script.answered();
    run_->out = root + "/mineru_demo2/vlm";
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(*run_->result) << run_->result->error().ToString(); }
  static Json Output(std::string_view suffix) {
    return ReadJson(run_->out + "/mineru_demo2" + std::string(suffix));
  }

  static ProRun* run_;
};

ProRun* ScriptedProDocumentTest::run_ = nullptr;

TEST(ScriptedProScriptTest, RequestSizesTellEveryAnsweredRegionApart) {
  for (const auto* page : {&kPage0, &kPage1}) {
    std::set<std::tuple<std::string_view, int64_t, int64_t>> seen;
    for (const Region& r : *page) {
      if (r.answer.empty()) continue;
      const auto [w, h] = RequestSize(r.box);
      const auto prompt = RecognitionPromptPro(*ParseBlockType(r.label));
      EXPECT_TRUE(seen.insert({prompt, w, h}).second)
          << r.label << " " << w << "x" << h << " is not unique on its page";
    }
  }
}

// Image names are SHA-256 hex of what depends on the rendered pixels (MinerU's rule, tested in
// scripted_document_test.cc): numbered IMG1.jpg, IMG2.jpg, ... in order of first appearance, and
// data URIs' payloads written B64, so that the whole files can be compared.
std::string Normalized(std::string text) {
  static const std::regex kName("[0-9a-f]{64}\\.jpg");
  static const std::regex kPayload("data:image/jpeg;base64,[A-Za-z0-9+/=]+");
  std::map<std::string, std::string> names;
  std::string out;
  auto it = std::sregex_iterator(text.begin(), text.end(), kName);
  size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    const std::string name = it->str();
    auto [entry, added] = names.emplace(name, "IMG" + std::to_string(names.size() + 1) + ".jpg");
    out += text.substr(last, static_cast<size_t>(it->position()) - last) + entry->second;
    last = static_cast<size_t>(it->position() + it->length());
  }
  out += text.substr(last);
  return std::regex_replace(out, kPayload, "data:image/jpeg;base64,B64");
}

Json NormalizedJson(const std::string& path) {
  Json json = Json::parse(Normalized(ReadFile(path)), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << path;
  return json;
}

std::string Expected(std::string_view name) {
  return ReadFile(std::string(MINERU_TEST_DATA_DIR) + "/scripted_pro/" + std::string(name));
}

TEST_F(ScriptedProDocumentTest, EveryRequestWasScriptedAndAnswered) {
  EXPECT_TRUE(run_->unscripted.empty()) << ::testing::PrintToString(run_->unscripted);
  // Page 0: every region with an answer but the two inside-the-image-block panels (never
  // recognised) and the logo table's image; page 1: all four.
  int expected = 0;
  for (const auto* page : {&kPage0, &kPage1}) {
    for (const Region& r : *page) expected += r.answer.empty() ? 0 : 1;
  }
  EXPECT_EQ(run_->answered, expected);
  const DocumentResult& result = **run_->result;
  EXPECT_EQ(result.pages, 2);
  EXPECT_TRUE(result.failed_pages.empty());
  EXPECT_EQ(result.failed_blocks, 0);
  EXPECT_EQ(result.table_merge_requests, 1);
  EXPECT_EQ(result.table_merges, 1);
  EXPECT_TRUE(result.warnings.empty()) << ::testing::PrintToString(result.warnings);
}

TEST_F(ScriptedProDocumentTest, TheMergeRequestIsTextOnlyWithTheClientsPrompt) {
  ASSERT_EQ(run_->merge_prompts.size(), 1u);
  EXPECT_EQ(run_->merge_prompts[0],
            "Please merge the next two tables.\n\n## Table 1 (Previous Page - Last Table)\n\n"
            "**Caption:** (No caption)\n**Last Row(s) Data:**\n[['banana long', '5']]\n\n---\n\n"
            "## Table 2 (Current Page - First Table)\n\n**Caption:** (No caption)\n**First Data "
            "Row(s):**\n[['name continued', '']]");
  int image_analysis = 0, text_only = 0;
  for (const testing::ScriptedCall& call : run_->calls) {
    if (call.prompt == kImageAnalysisPrompt) ++image_analysis;
    if (call.image_width == 0) {
      ++text_only;
      // The [cross_page_table_merge] sampling: the default preset.
      EXPECT_FLOAT_EQ(call.sampling.presence_penalty, 1.0f);
      EXPECT_FLOAT_EQ(call.sampling.frequency_penalty, 0.05f);
    }
  }
  EXPECT_EQ(image_analysis, 2);  // the photo and the chart; panels and tiny images are not asked
  EXPECT_EQ(text_only, 1);
}

TEST_F(ScriptedProDocumentTest, MarkdownAsAWhole) {
  EXPECT_EQ(Normalized(ReadFile(run_->out + "/mineru_demo2.md")), Expected("expected.md"));
}

TEST_F(ScriptedProDocumentTest, ContentListAsAWhole) {
  EXPECT_EQ(NormalizedJson(run_->out + "/mineru_demo2_content_list.json"),
            Json::parse(Expected("expected_content_list.json")));
}

TEST_F(ScriptedProDocumentTest, ContentListV2AsAWhole) {
  EXPECT_EQ(NormalizedJson(run_->out + "/mineru_demo2_content_list_v2.json"),
            Json::parse(Expected("expected_content_list_v2.json")));
}

TEST_F(ScriptedProDocumentTest, ModelJsonAsAWhole) {
  EXPECT_EQ(NormalizedJson(run_->out + "/mineru_demo2_model.json"),
            Json::parse(Expected("expected_model.json")));
}

TEST_F(ScriptedProDocumentTest, MiddleJsonKeepsTheBlocksBeforeAndAfterTheMerges) {
  const Json middle = Output("_middle.json");
  EXPECT_EQ(middle["_version_name"], "3.4.4");
  EXPECT_EQ(middle["_backend"], "vlm");
  const Json& page0 = middle["pdf_info"][0];
  const Json& page1 = middle["pdf_info"][1];
  // The paragraph continued after the column break: whole in preproc_blocks, merged in
  // para_blocks (its lines moved to the previous paragraph).
  // Blocks by their `index`, the position in the client's post-processed list.
  auto find = [](const Json& blocks, int index) -> const Json& {
    for (const Json& b : blocks) {
      if (b.value("index", -1) == index) return b;
    }
    static const Json kNone;
    return kNone;
  };
  EXPECT_FALSE(find(page0["preproc_blocks"], 4).contains("lines_deleted"));
  EXPECT_EQ(find(page0["preproc_blocks"], 4)["merge_prev"], true);
  EXPECT_EQ(find(page0["para_blocks"], 4)["lines_deleted"], true);
  EXPECT_TRUE(find(page0["para_blocks"], 4)["lines"].empty());
  EXPECT_EQ(find(page0["para_blocks"], 3)["lines"].size(), 2u);
  // The image block with its two panels, relative to it.
  const Json& block = find(page0["para_blocks"], 9);
  EXPECT_EQ(block["type"], "image");
  ASSERT_EQ(block["sub_images"].size(), 2u);
  EXPECT_EQ(block["sub_images"][0]["type"], "image");
  EXPECT_EQ(block["sub_images"][1]["type"], "chart");
  // The chart group and the analysed photo.
  EXPECT_EQ(find(page0["para_blocks"], 8)["type"], "chart");
  EXPECT_EQ(find(page0["para_blocks"], 8)["sub_type"], "bar_chart");
  EXPECT_EQ(find(page0["para_blocks"], 6)["sub_type"], "natural_image");
  // The logo table (index 21 of the post-processed blocks: the equation block's two equations
  // became one, the absorbed image left) has its image as a file in images/, the <img> at it.
  const std::string html =
      find(page0["para_blocks"], 21)["blocks"][1]["lines"][0]["spans"][0].value("html",
                                                                                std::string());
  const std::smatch found = [&] {
    std::smatch m;
    std::regex_search(html, m, std::regex("<img src=\"([0-9a-f]{64}\\.jpg)\"/>"));
    return m;
  }();
  ASSERT_FALSE(found.empty()) << html;
  EXPECT_TRUE(fs::is_regular_file(run_->out + "/images/" + found[1].str()));
  // The continued table: cell_merge from the model's answer on page 1's group, merged away in
  // para_blocks, kept in preproc_blocks.
  const Json& lower = find(page1["preproc_blocks"], 1);
  EXPECT_EQ(lower["cell_merge"], Json::array({1, 0}));
  EXPECT_FALSE(lower["blocks"][0].contains("lines_deleted"));
  EXPECT_EQ(find(page1["para_blocks"], 1)["blocks"][0]["lines_deleted"], true);
  // The paragraph the model marks as continuing at the top of page 1 stays on its own: MinerU
  // 3.4.4 joins paragraphs within a page only.
  EXPECT_FALSE(find(page1["para_blocks"], 2).contains("lines_deleted"));
}

TEST_F(ScriptedProDocumentTest, EveryReferencedImageExistsAndEveryFileValidates) {
  const std::string md = ReadFile(run_->out + "/mineru_demo2.md");
  const std::regex name("images/([0-9a-f]{64}\\.jpg)");
  int images = 0;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), name); it != std::sregex_iterator();
       ++it) {
    ++images;
    EXPECT_TRUE(fs::is_regular_file(run_->out + "/images/" + (*it)[1].str())) << (*it)[1];
  }
  EXPECT_EQ(images, 5);  // photo, chart, image block, the table's own image, the unknown region
  EXPECT_TRUE(fs::is_regular_file(run_->out + "/mineru_demo2_layout.pdf"));
  const testing_support::ProcessResult validated = testing_support::RunProcess(
      {"/usr/bin/python3", std::string(MINERU_SOURCE_DIR) + "/tools/validate-outputs.py",
       run_->out});
  EXPECT_EQ(validated.exit_code, 0) << testing_support::Describe(validated);
}

// The script's answers, except the text-only merge request, which never answers on its own: it
// ends (kCancelled) once cancelled, as the engine would end it.
class HangingMergeGenerator final : public Generator {
 public:
  ~HangingMergeGenerator() {
    stop_ = true;
    if (watcher_.joinable()) watcher_.join();
  }
  Result<engine::RequestHandle> Submit(engine::Request request) override {
    const bool merge = request.images.empty();
    if (!merge) return scripted_.Submit(std::move(request));
    auto state = std::make_shared<engine::RequestState>(nullptr);
    merge_submitted_ = true;
    watcher_ = std::thread([this, state] {
      while (!state->cancel_requested() && !stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      merge_cancelled_ = state->cancel_requested();
      engine::GenerationResult result;
      result.finish_reason = engine::FinishReason::kCancelled;
      state->Finish(std::move(result));
    });
    return engine::RequestHandle(state);
  }
  std::atomic<bool> merge_submitted_{false}, merge_cancelled_{false};

 private:
  ProDocumentScript script_;
  testing::ScriptedGenerator scripted_{
      [this](const testing::ScriptedCall& c) { return script_(c); }};
  std::thread watcher_;
  std::atomic<bool> stop_{false};
};

TEST(ScriptedProCancelTest, CancellingDuringTheCrossPageRequestEndsTheParse) {
  const std::string input = std::string(MINERU_TEST_DATA_DIR) + "/corpus/mineru_demo2.pdf";
  const std::string root = testing_support::TestDir();
  DocumentOptions options;
  options.render.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
  options.start_page = 0;
  options.end_page = 1;
  options.pages_in_flight = 1;
  options.extract.profile = Profile::kPro;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  options.cancel = cancel;
  HangingMergeGenerator generator;
  std::thread canceller([&] {
    while (!generator.merge_submitted_) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    cancel->store(true);
  });
  auto result = ParseDocument(generator, input, root, options);  // returns: the request ended
  canceller.join();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_TRUE(generator.merge_cancelled_);
  EXPECT_FALSE(fs::exists(root + "/mineru_demo2/vlm/mineru_demo2.md"));  // nothing written
}

}  // namespace
}  // namespace mineru::pipeline::scripted_pro
