// SPDX-License-Identifier: Apache-2.0
// The writers' files against the schemas in schemas/ (tools/validate-outputs.py, Debian's
// python3-jsonschema): the TV-33 and TV-34 documents written as MinerU 3.4.4 outputs, a page from
// the 2.7.6 MagicModel written as 2.7.6 outputs plus content_list_v2.json, and files the schemas
// must refuse.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "../support/scratch.h"
#include "../support/subprocess.h"
#include "pipeline/content_list.h"
#include "pipeline/content_list_pro.h"
#include "pipeline/content_list_v2.h"
#include "pipeline/magic_model.h"
#include "pipeline/markdown.h"
#include "pipeline/markdown_pro.h"
#include "pro_documents.h"

namespace mineru::pipeline {
namespace {

namespace fs = std::filesystem;
using testing_support::Describe;
using testing_support::ProcessResult;
using testing_support::RunProcess;
using testing_support::TestDir;
using testing_support::WriteFile;

const std::string kValidator = std::string(MINERU_SOURCE_DIR) + "/tools/validate-outputs.py";

// Replaces every non-empty image_path in `node` by a SHA-256-shaped name (as real runs write) and
// records the names.
void RenameImages(Json* node, std::map<std::string, std::string>* names) {
  if (node->is_object()) {
    for (auto& [key, value] : node->items()) {
      if (key == "image_path" && value.is_string() && !value.get<std::string>().empty()) {
        const std::string old = value.get<std::string>();
        if (!names->count(old)) {
          const char digit = "0123456789abcdef"[names->size() % 16];
          (*names)[old] = std::string(63, digit) + std::to_string(names->size() % 10) + ".jpg";
        }
        value = (*names)[old];
      } else {
        RenameImages(&value, names);
      }
    }
  } else if (node->is_array()) {
    for (Json& item : *node) RenameImages(&item, names);
  }
}

// <dir>/<stem>/vlm/ with the four outputs of `pdf_info` in the given generation and its images.
void WriteOutputs(const std::string& dir, const std::string& stem, Json pdf_info, bool pro,
                  const Json& model) {
  std::map<std::string, std::string> names;
  RenameImages(&pdf_info, &names);
  const fs::path out = fs::path(dir) / stem / "vlm";
  fs::create_directories(out / "images");
  for (const auto& [old, name] : names) WriteFile((out / "images" / name).string(), "jpeg");
  const Json middle{
      {"pdf_info", pdf_info}, {"_backend", "vlm"}, {"_version_name", pro ? "3.4.4" : "2.7.6"}};
  WriteFile((out / (stem + "_middle.json")).string(), middle.dump(4));
  WriteFile((out / (stem + "_content_list.json")).string(),
            (pro ? MakeContentListPro(pdf_info) : MakeContentList(pdf_info)).dump(4));
  WriteFile((out / (stem + "_content_list_v2.json")).string(), MakeContentListV2(pdf_info).dump(4));
  WriteFile((out / (stem + "_model.json")).string(), model.dump(4));
  WriteFile((out / (stem + ".md")).string(),
            pro ? MakeMarkdownPro(pdf_info) : MakeMarkdown(pdf_info));
}

ProcessResult Validate(const std::string& dir) {
  return RunProcess({"/usr/bin/python3", kValidator, dir});
}

// A 2.7.6 page straight from the 2509 MagicModel.
Json Page2509() {
  auto block = [](BlockType type, std::array<double, 4> bbox, std::optional<std::string> content) {
    ContentBlock b;
    b.type = type;
    b.bbox = bbox;
    b.angle = 0;
    b.content = std::move(content);
    return b;
  };
  const std::vector<ContentBlock> blocks = {
      block(BlockType::kHeader, {0.1, 0.01, 0.9, 0.03}, "Header"),
      block(BlockType::kTitle, {0.1, 0.05, 0.9, 0.08}, "A title"),
      block(BlockType::kText, {0.1, 0.1, 0.9, 0.2}, "Text with \\(x\\) formula"),
      block(BlockType::kImage, {0.1, 0.22, 0.5, 0.4}, std::nullopt),
      block(BlockType::kImageCaption, {0.1, 0.41, 0.5, 0.43}, "Figure 1"),
      block(BlockType::kTable, {0.1, 0.45, 0.9, 0.6}, "<table><tr><td>1</td></tr></table>"),
      block(BlockType::kCode, {0.1, 0.62, 0.9, 0.7}, "```python\nprint(1)\n```"),
      block(BlockType::kEquation, {0.1, 0.72, 0.9, 0.76}, "\\[E=mc^2\\]"),
      block(BlockType::kList, {0.1, 0.78, 0.9, 0.9}, std::nullopt),
      block(BlockType::kRefText, {0.1, 0.79, 0.9, 0.82}, "[1] A"),
      block(BlockType::kRefText, {0.1, 0.83, 0.9, 0.86}, "[2] B"),
      block(BlockType::kPageNumber, {0.45, 0.96, 0.55, 0.98}, "1"),
  };
  int crops = 0;
  const ImagePathFn image_path = [&crops](std::string_view, const std::array<int, 4>&) {
    return "crop" + std::to_string(crops++) + ".jpg";
  };
  return MiddlePage(blocks, 0, 612, 792, image_path, nullptr);
}

Json ProModel() {
  return Json::parse(R"([[
    {"type": "text", "bbox": [0.1, 0.1, 0.48, 0.6], "angle": 0, "content": "a", "merge_prev": false},
    {"type": "chart", "bbox": [0.1, 0.62, 0.9, 0.8], "angle": 0, "content": "x", "sub_type": "bar_chart"},
    {"type": "table", "bbox": [0.1, 0.05, 0.9, 0.2], "angle": 0, "content": "<table></table>",
     "cell_merge": [1, 0]},
    {"type": "image_block", "bbox": [0.1, 0.1, 0.9, 0.9], "angle": null, "content": null}
  ]])");
}

TEST(OutputsProSchemaTest, BothGenerationsValidate) {
  const std::string dir = TestDir();
  WriteOutputs(dir, "tv34", pro_documents::Tv34Document(), true, ProModel());
  WriteOutputs(dir, "tv33", pro_documents::Tv33Document(), true, ProModel());
  WriteOutputs(dir, "p2509", Json::array({Page2509()}), false,
               Json::parse(R"([[{"type": "text", "bbox": [0, 0, 1, 1], "angle": 0,
                                 "content": "x"}]])"));
  const ProcessResult r = Validate(dir);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << Describe(r);
  EXPECT_NE(r.out.find("tv34_content_list_v2.json (content_list_v2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("12 file(s) checked, 0 failed"), std::string::npos) << r.out;
}

TEST(OutputsProSchemaTest, BrokenFilesAreRefused) {
  const std::string dir = TestDir();
  const fs::path out = fs::path(dir) / "bad" / "vlm";
  fs::create_directories(out / "images");
  // v2: a bbox beyond 1000, a paragraph without its content key, a crop that does not exist.
  WriteFile((out / "bad_content_list_v2.json").string(), R"([[
    {"type": "paragraph", "content": {"paragraph_content": []}, "bbox": [0, 0, 1001, 10]},
    {"type": "paragraph", "content": {}, "bbox": [0, 0, 1, 1]},
    {"type": "image", "content": {"image_source": {"path": "images/)" +
                                                             std::string(64, 'a') + R"(.jpg"},
     "content": "", "image_caption": [], "image_footnote": []}, "bbox": [0, 0, 1, 1]}
  ]])");
  // A 2.7.6 middle.json may not hold a chart group.
  Json page = pro_documents::Tv34Document()[0];
  page.erase("preproc_blocks");
  for (Json& block : page["para_blocks"]) {
    if (block["type"] == "chart") {
      for (Json& sub : block["blocks"]) sub["lines"][0]["spans"][0]["image_path"] = "";
    }
  }
  page["para_blocks"] = Json::array({page["para_blocks"][4]});  // the chart group
  WriteFile((out / "bad_middle.json").string(),
            Json{{"pdf_info", Json::array({page})}, {"_backend", "vlm"}, {"_version_name", "2.7.6"}}
                .dump());
  // A 3.4.4 content list with guess_lang on a code item is neither generation.
  WriteFile((out / "bad_content_list.json").string(), R"([
    {"type": "chart", "img_path": "", "content": "", "chart_caption": [], "chart_footnote": [],
     "bbox": [0, 0, 1, 1], "page_idx": 0},
    {"type": "code", "sub_type": "code", "code_caption": [], "code_body": "x",
     "guess_lang": "python", "bbox": [0, 0, 1, 1], "page_idx": 0}
  ])");
  const ProcessResult r = Validate(dir);
  EXPECT_TRUE(r.exited && r.exit_code == 1) << Describe(r);
  EXPECT_NE(r.out.find("FAIL " + (out / "bad_content_list_v2.json").string()), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'paragraph_content' is a required property"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no such file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL " + (out / "bad_middle.json").string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL " + (out / "bad_content_list.json").string()), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("3 file(s) checked, 3 failed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mineru::pipeline
