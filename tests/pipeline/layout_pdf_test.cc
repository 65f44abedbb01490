// SPDX-License-Identifier: Apache-2.0
// BuildLayoutPlan on hand-built middle.json pages: every block kind's colour and paint, MinerU's
// drawing order (mineru/utils/draw_bbox.py draw_layout_bbox, MinerU 2.7.6 and 3.4.4), the
// reading-order numbers of blocks and group sub-blocks, cross_page sub-blocks left out, and
// malformed pages that draw nothing instead of throwing. Last, a plan drawn for real over a
// corpus PDF by the render helper.
#include "pipeline/layout_pdf.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/scratch.h"
#include "../support/subprocess.h"
#include "image/pdf/pdf_document.h"

namespace mineru::pipeline {
namespace {

using pdf::LayoutBox;
using pdf::LayoutNumber;
using pdf::LayoutPaint;
using pdf::LayoutRgb;
using Rect = std::array<double, 4>;

// A block of `type` at x = 10 * n (so that boxes are told apart by their x0).
Json Block(const std::string& type, int n) {
  return {{"type", type}, {"bbox", {10 * n, 100, 10 * n + 5, 120}}, {"index", n}};
}
Json Group(const std::string& type, int n, std::vector<Json> children) {
  Json g = Block(type, n);
  g["blocks"] = Json(std::move(children));
  return g;
}
Json Page(std::vector<Json> para, std::vector<Json> discarded = {}) {
  return {{"para_blocks", Json(std::move(para))},
          {"discarded_blocks", Json(std::move(discarded))},
          {"page_size", {600, 800}},
          {"page_idx", 0}};
}
Rect At(int n) { return {10.0 * n, 100, 10.0 * n + 5, 120}; }
LayoutBox Fill(int n, LayoutRgb rgb) { return {At(n), rgb, LayoutPaint::kFill}; }
LayoutBox Stroke(int n, LayoutRgb rgb) { return {At(n), rgb, LayoutPaint::kStroke}; }
LayoutNumber Num(int n, uint32_t number) { return {At(n), number}; }

// Every kind once, given in reverse of the drawing order, so that the order of the boxes can
// only come from the kind order. Block n sits at x = 10 n.
Json EveryKindPage() {
  return Page(
      {
          Block("index", 1),
          Group("list", 2, {Block("text", 3), Block("ref_text", 4)}),
          Block("interline_equation", 5),
          Block("abstract", 6),
          Block("ref_text", 7),
          Block("text", 8),
          Block("title", 9),
          Block("seal", 10),
          Group("chart", 11,
                {Block("chart_body", 12), Block("chart_caption", 13), Block("chart_footnote", 14)}),
          Group("image", 15,
                {Block("image_footnote", 16), Block("image_caption", 17), Block("image_body", 18)}),
          Group("table", 19,
                {Block("table_footnote", 20), Block("table_caption", 21), Block("table_body", 22)}),
          Group("code", 23,
                {Block("code_footnote", 24), Block("code_caption", 25), Block("code_body", 26)}),
      },
      {Block("header", 27), Block("page_number", 28)});
}

TEST(LayoutPlanTest, ProDrawsEveryKindInMinerusOrderAndColours) {
  const pdf::LayoutPagePlan plan = BuildLayoutPagePlan(EveryKindPage(), Profile::kPro, 4);
  EXPECT_EQ(plan.page_index, 4);
  const std::vector<LayoutBox> expected = {
      Fill(26, {102, 0, 204}),                             // code body
      Fill(25, {204, 153, 255}),                           // code caption
      Fill(24, {229, 204, 255}),                           // code footnote
      Fill(27, {158, 158, 158}),                           // discarded
      Fill(28, {158, 158, 158}), Fill(22, {204, 204, 0}),  // table body
      Fill(21, {255, 255, 102}),                           // table caption
      Fill(20, {229, 255, 204}),                           // table footnote
      Fill(10, {153, 255, 51}),                            // seal, drawn as an image body
      Fill(12, {153, 255, 51}),                            // chart body, drawn as an image body
      Fill(18, {153, 255, 51}),                            // image body
      Fill(13, {102, 178, 255}),                           // chart caption
      Fill(17, {102, 178, 255}),                           // image caption
      Fill(14, {255, 178, 102}),                           // chart footnote
      Fill(16, {255, 178, 102}),                           // image footnote
      Fill(9, {102, 102, 255}),                            // title
      Fill(6, {153, 0, 76}),                               // abstract, ref_text, text
      Fill(7, {153, 0, 76}),     Fill(8, {153, 0, 76}),
      Fill(5, {0, 255, 0}),                               // interline equation
      Fill(2, {40, 169, 92}),                             // list
      Stroke(3, {40, 169, 92}),                           // its items, outlined
      Stroke(4, {40, 169, 92}),  Fill(1, {40, 169, 92}),  // index
  };
  EXPECT_EQ(plan.boxes, expected);
  // Numbers in para_blocks order: whole blocks, and each sub-block of a group in stored order.
  const std::vector<LayoutNumber> numbers = {
      Num(1, 1),   Num(2, 2),   Num(5, 3),   Num(6, 4),   Num(7, 5),   Num(8, 6),   Num(9, 7),
      Num(10, 8),  Num(12, 9),  Num(13, 10), Num(14, 11), Num(16, 12), Num(17, 13), Num(18, 14),
      Num(20, 15), Num(21, 16), Num(22, 17), Num(24, 18), Num(25, 19), Num(26, 20),
  };
  EXPECT_EQ(plan.numbers, numbers);
}

TEST(LayoutPlanTest, Mineru276KnowsNoChartsSealsAbstractsOrCodeFootnotes) {
  const pdf::LayoutPagePlan plan = BuildLayoutPagePlan(EveryKindPage(), Profile::k2509, 0);
  const std::vector<LayoutBox> expected = {
      Fill(26, {102, 0, 204}),   Fill(25, {204, 153, 255}), Fill(27, {158, 158, 158}),
      Fill(28, {158, 158, 158}), Fill(22, {204, 204, 0}),   Fill(21, {255, 255, 102}),
      Fill(20, {229, 255, 204}), Fill(18, {153, 255, 51}),  Fill(17, {102, 178, 255}),
      Fill(16, {255, 178, 102}), Fill(9, {102, 102, 255}),  Fill(7, {153, 0, 76}),
      Fill(8, {153, 0, 76}),     Fill(5, {0, 255, 0}),      Fill(2, {40, 169, 92}),
      Stroke(3, {40, 169, 92}),  Stroke(4, {40, 169, 92}),  Fill(1, {40, 169, 92}),
  };
  EXPECT_EQ(plan.boxes, expected);
  // No numbers for abstract, seal and chart; a table's sub-blocks are numbered captions first,
  // then bodies, then footnotes; code and image sub-blocks in stored order (all of them).
  const std::vector<LayoutNumber> numbers = {
      Num(1, 1),   Num(2, 2),   Num(5, 3),   Num(7, 4),   Num(8, 5),
      Num(9, 6),   Num(16, 7),  Num(17, 8),  Num(18, 9),  Num(21, 10),
      Num(22, 11), Num(20, 12), Num(24, 13), Num(25, 14), Num(26, 15),
  };
  EXPECT_EQ(plan.numbers, numbers);
}

TEST(LayoutPlanTest, CrossPageSubBlocksAreNeitherFilledNorNumbered) {
  Json moved = Block("table_footnote", 3);
  moved["cross_page"] = true;
  Json kept = Block("table_footnote", 4);
  kept["cross_page"] = false;
  Json image_moved = Block("image_footnote", 6);
  image_moved["cross_page"] = 1;  // any true value, as Python's get() tests it
  const Json page = Page({Group("table", 1, {Block("table_body", 2), moved, kept}),
                          Group("image", 5, {Block("image_body", 7), image_moved})});
  for (Profile profile : {Profile::k2509, Profile::kPro}) {
    const pdf::LayoutPagePlan plan = BuildLayoutPagePlan(page, profile, 0);
    // Only table footnotes are skipped when filling (MinerU tests the flag there only).
    const std::vector<LayoutBox> boxes = {
        Fill(2, kLayoutTableBodyRgb), Fill(4, kLayoutTableFootnoteRgb),
        Fill(7, kLayoutImageBodyRgb), Fill(6, kLayoutImageFootnoteRgb)};
    EXPECT_EQ(plan.boxes, boxes) << ProfileName(profile);
    ASSERT_GE(plan.numbers.size(), 2u);
    EXPECT_EQ(plan.numbers[0], Num(2, 1));
    EXPECT_EQ(plan.numbers[1], Num(4, 2));
    if (profile == Profile::kPro) {
      // 3.4.4 skips cross_page sub-blocks of every group when numbering.
      EXPECT_EQ(plan.numbers, (std::vector<LayoutNumber>{Num(2, 1), Num(4, 2), Num(7, 3)}));
    } else {
      // 2.7.6 skips them in tables only.
      EXPECT_EQ(plan.numbers,
                (std::vector<LayoutNumber>{Num(2, 1), Num(4, 2), Num(7, 3), Num(6, 4)}));
    }
  }
}

TEST(LayoutPlanTest, NumbersRestartOnEachPageAndFollowTheRange) {
  const Json pdf_info = Json::array(
      {Page({Block("text", 1), Block("title", 2)}), Page({Block("text", 3)}), Page({})});
  const pdf::LayoutPlan plan = BuildLayoutPlan(pdf_info, Profile::k2509, 5);
  ASSERT_EQ(plan.pages.size(), 3u);
  EXPECT_EQ(plan.pages[0].page_index, 5);
  EXPECT_EQ(plan.pages[1].page_index, 6);
  EXPECT_EQ(plan.pages[2].page_index, 7);
  EXPECT_EQ(plan.pages[0].numbers, (std::vector<LayoutNumber>{Num(1, 1), Num(2, 2)}));
  EXPECT_EQ(plan.pages[1].numbers, (std::vector<LayoutNumber>{Num(3, 1)}));
  EXPECT_TRUE(plan.pages[2].boxes.empty());
  EXPECT_TRUE(plan.pages[2].numbers.empty());
}

TEST(LayoutPlanTest, ProPagesDrawParaBlocksNotPreprocBlocks) {
  Json page = Page({Block("text", 1)});
  page["preproc_blocks"] = Json::array({Block("title", 2), Block("text", 3)});
  const pdf::LayoutPagePlan plan = BuildLayoutPagePlan(page, Profile::kPro, 0);
  EXPECT_EQ(plan.boxes, (std::vector<LayoutBox>{Fill(1, kLayoutTextRgb)}));
  EXPECT_EQ(plan.numbers, (std::vector<LayoutNumber>{Num(1, 1)}));
}

TEST(LayoutPlanTest, ReversedCornersAreOrderedAndFloatsKept) {
  const Json page = Page({{{"type", "text"}, {"bbox", {50.5, 80.25, 10, 20}}}});
  const pdf::LayoutPagePlan plan = BuildLayoutPagePlan(page, Profile::kPro, 0);
  ASSERT_EQ(plan.boxes.size(), 1u);
  EXPECT_EQ(plan.boxes[0].rect, (Rect{10, 20, 50.5, 80.25}));
  ASSERT_EQ(plan.numbers.size(), 1u);
  EXPECT_EQ(plan.numbers[0].rect, (Rect{10, 20, 50.5, 80.25}));
}

TEST(LayoutPlanTest, UnknownTypesAreNeitherDrawnNorNumbered) {
  const Json page = Page({Block("phonetic", 1), Block("doc_title", 2), Block("text", 3),
                          Group("table", 4, {Block("mystery", 5), Block("table_body", 6)})});
  const pdf::LayoutPagePlan plan = BuildLayoutPagePlan(page, Profile::k2509, 0);
  EXPECT_EQ(plan.boxes,
            (std::vector<LayoutBox>{Fill(6, kLayoutTableBodyRgb), Fill(3, kLayoutTextRgb)}));
  // A sub-block of an unknown type is still numbered (MinerU numbers every sub-block); 2.7.6
  // would stop on it, here it sorts after the known ones.
  EXPECT_EQ(plan.numbers, (std::vector<LayoutNumber>{Num(3, 1), Num(6, 2), Num(5, 3)}));
}

TEST(LayoutPlanTest, MalformedPagesAndBlocksDrawNothingAndNeverThrow) {
  const Json pdf_info = Json::array({
      "not a page",
      nullptr,
      Json::array({1, 2, 3}),
      {{"para_blocks", "text"}, {"discarded_blocks", 7}},
      Page({
          Json("a string block"),
          {{"type", 5}, {"bbox", {0, 0, 1, 1}}},
          {{"type", "text"}},                              // no bbox
          {{"type", "text"}, {"bbox", {1, 2, 3}}},         // three numbers
          {{"type", "text"}, {"bbox", {1, 2, 3, "4"}}},    // not a number
          {{"type", "text"}, {"bbox", {1, 2, 3, true}}},   // a boolean
          {{"type", "text"}, {"bbox", {1, 2, 3, 1e300}}},  // beyond any page
          {{"type", "text"}, {"bbox", "0 0 1 1"}},
          {{"type", "table"}, {"bbox", {0, 0, 1, 1}}, {"blocks", "none"}},
          {{"type", "image"}, {"blocks", Json::array({nullptr, 3, Json::array()})}},
          {{"type", "list"}, {"bbox", {0, 0, 1, 1}}, {"blocks", Json::array({"item"})}},
          Block("text", 9),
      }),
  });
  pdf::LayoutPlan plan;
  ASSERT_NO_THROW(plan = BuildLayoutPlan(pdf_info, Profile::kPro));
  ASSERT_EQ(plan.pages.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.pages[i].page_index, i);
    EXPECT_TRUE(plan.pages[i].boxes.empty()) << i;
    EXPECT_TRUE(plan.pages[i].numbers.empty()) << i;
  }
  // The list is drawn and numbered (its item is not a block); the good text block is numbered
  // after it.
  const Rect list{0, 0, 1, 1};
  EXPECT_EQ(plan.pages[4].boxes,
            (std::vector<LayoutBox>{Fill(9, kLayoutTextRgb),
                                    {list, kLayoutListRgb, LayoutPaint::kFill}}));
  EXPECT_EQ(plan.pages[4].numbers, (std::vector<LayoutNumber>{{list, 1}, Num(9, 2)}));
  EXPECT_TRUE(pdf::ValidateLayoutPlan(plan, 5));
  // Not an array at all: no pages.
  EXPECT_TRUE(BuildLayoutPlan(Json::object(), Profile::k2509).pages.empty());
  EXPECT_TRUE(BuildLayoutPlan(Json("x"), Profile::kPro).pages.empty());
}

TEST(LayoutPlanTest, HugePageIsCutAtThePlanBounds) {
  std::vector<Json> para;
  const size_t n = pdf::kMaxLayoutBoxesPerPage + 10;
  for (size_t i = 0; i < n; ++i) para.push_back(Block("text", static_cast<int>(i % 50)));
  const pdf::LayoutPagePlan plan = BuildLayoutPagePlan(Page(std::move(para)), Profile::k2509, 0);
  EXPECT_EQ(plan.boxes.size(), pdf::kMaxLayoutBoxesPerPage);
  EXPECT_EQ(plan.numbers.size(), pdf::kMaxLayoutNumbersPerPage);
  EXPECT_EQ(plan.numbers.back().number, pdf::kMaxLayoutNumbersPerPage);
  EXPECT_TRUE(pdf::ValidateLayoutPage(plan, 1, 1));
}

TEST(LayoutPlanTest, PlanOfAMiddleJsonPageDrawsOverItsPdf) {
  // mineru_unittest_test.pdf, one page; the blocks roughly where MinerU finds them.
  const Json pdf_info =
      Json::array({Page({Block("title", 10),
                         Group("table", 12, {Block("table_caption", 13), Block("table_body", 14)}),
                         Group("list", 20, {Block("text", 21)}), Block("interline_equation", 30)},
                        {Block("page_number", 40)})});
  const pdf::LayoutPlan plan = BuildLayoutPlan(pdf_info, Profile::kPro);
  pdf::RenderOptions options;
  options.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
  auto doc = pdf::PdfDocument::Open(
      std::string(MINERU_TEST_DATA_DIR) + "/corpus/mineru_unittest_test.pdf", options);
  ASSERT_TRUE(doc) << doc.error().ToString();
  const std::string out = testing_support::TestDir() + "/test_layout.pdf";
  auto report = (*doc)->WriteLayoutPdf(plan, out);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->pages, 1);
  const auto info = testing_support::RunProcess({"pdfinfo", out});
  ASSERT_TRUE(info.exited && info.exit_code == 0) << testing_support::Describe(info);
  EXPECT_NE(info.out.find("Pages:           1\n"), std::string::npos) << info.out;
}

}  // namespace
}  // namespace mineru::pipeline
