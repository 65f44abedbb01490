// SPDX-License-Identifier: Apache-2.0
// <stem>_layout.pdf written for real: PdfDocument::WriteLayoutPdf through the render helper on
// corpus PDFs and rotated pages, WriteImageLayoutPdf on an image. Each output is checked with
// poppler-utils as a reader would see it: pdfinfo (pages and their sizes), pdftotext (the
// original text survived as text), pdftoppm (the boxes are there, blended at 30 % over the
// original pixels, and the original is unchanged outside them). Also the errors: damaged
// pages, bad plans, the helper's limits on layout steps, a missing font.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "image/pdf/image_layout_pdf.h"
#include "image/pdf/layout_draw.h"
#include "image/pdf/pdf_document.h"
#include "pdf_test_util.h"

namespace mineru::pdf {
namespace {

using testing::kShapes;
using testing::Run;
using testing::RunResult;
using testing::ScopedEnv;
using testing::TestOptions;

namespace fs = std::filesystem;

const std::string kCorpus = std::string(MINERU_TEST_DATA_DIR) + "/corpus";
const std::string kDemo1 = kCorpus + "/mineru_demo1.pdf";
const std::string kOddBoxes = testing::kPdfData + "/odd_boxes.pdf";
constexpr LayoutRgb kTextRgb{153, 0, 76};
constexpr LayoutRgb kTitleRgb{102, 102, 255};

// This test's scratch folder (TestDir empties it on every call, so it is asked once per test).
const std::string& Dir() {
  static std::string test, dir;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string now = std::string(info->test_suite_name()) + "." + info->name();
  if (now != test) {
    test = now;
    dir = testing::TestDir();
  }
  return dir;
}

struct PageSize {
  double width = 0;
  double height = 0;
  bool operator==(const PageSize&) const = default;
};

std::ostream& operator<<(std::ostream& os, const PageSize& s) {
  return os << s.width << " x " << s.height;
}

// Page sizes as displayed (pdfinfo's size turned by its rotation), from pdfinfo.
std::vector<PageSize> DisplayedSizes(const std::string& pdf) {
  const RunResult count = Run({"pdfinfo", pdf});
  EXPECT_TRUE(count.exited && count.exit_code == 0) << testing::Describe(count);
  int pages = 0;
  std::istringstream lines(count.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Pages:", 0) == 0) pages = std::stoi(line.substr(6));
  }
  const RunResult r = Run({"pdfinfo", "-f", "1", "-l", std::to_string(pages), pdf});
  std::vector<PageSize> sizes(static_cast<size_t>(pages));
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    int page = 0;
    double w = 0, h = 0;
    int rot = 0;
    if (std::sscanf(line.c_str(), "Page %d size: %lf x %lf", &page, &w, &h) == 3 && page >= 1 &&
        page <= pages) {
      sizes[page - 1].width = w;
      sizes[page - 1].height = h;
    } else if (std::sscanf(line.c_str(), "Page %d rot: %d", &page, &rot) == 2 && page >= 1 &&
               page <= pages && (rot == 90 || rot == 270)) {
      std::swap(sizes[page - 1].width, sizes[page - 1].height);
    }
  }
  return sizes;
}

// The text of a page with all white space removed and ligatures spelt out: where cairo places
// glyphs one by one pdftotext may see a gap inside a word ("P age"), and cairo's copy of a font
// maps a ligature glyph to its ligature character (U+FB02 for "fl"), where the original's
// mapping gave the letters. Neither says anything about the text being there.
std::string PageText(const std::string& pdf, int page) {
  const RunResult r =
      Run({"pdftotext", "-f", std::to_string(page), "-l", std::to_string(page), pdf, "-"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << testing::Describe(r);
  std::string text;
  for (char c : r.out) {
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  }
  const std::pair<const char*, const char*> ligatures[] = {
      {"\uFB00", "ff"}, {"\uFB01", "fi"}, {"\uFB02", "fl"}, {"\uFB03", "ffi"}, {"\uFB04", "ffl"}};
  for (const auto& [ligature, letters] : ligatures) {
    for (size_t at; (at = text.find(ligature)) != std::string::npos;) {
      text.replace(at, std::strlen(ligature), letters);
    }
  }
  return text;
}

// Page `page` (1-based) of `pdf` at 72 DPI (one pixel per point), its crop box.
testing::Ppm Render(const std::string& pdf, int page) {
  const std::string prefix =
      Dir() + "/render_" + fs::path(pdf).stem().string() + std::to_string(page);
  const RunResult r = Run({"pdftoppm", "-r", "72", "-cropbox", "-f", std::to_string(page), "-l",
                           std::to_string(page), "-singlefile", pdf, prefix});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << testing::Describe(r);
  return testing::ReadPpm(prefix + ".ppm");
}

std::array<int, 3> Pixel(const testing::Ppm& ppm, int x, int y) {
  const size_t at = (static_cast<size_t>(y) * ppm.width + x) * 3;
  if (at + 2 >= ppm.rgb.size()) return {-1, -1, -1};
  return {ppm.rgb[at], ppm.rgb[at + 1], ppm.rgb[at + 2]};
}

// `under` seen through a fill of `rgb` at 30 % opacity.
std::array<int, 3> Blend(std::array<int, 3> under, LayoutRgb rgb) {
  const int c[3] = {rgb.r, rgb.g, rgb.b};
  std::array<int, 3> out;
  for (int i = 0; i < 3; ++i) {
    out[i] =
        static_cast<int>(std::lround(under[i] * (1 - kLayoutFillAlpha) + c[i] * kLayoutFillAlpha));
  }
  return out;
}

::testing::AssertionResult Near(std::array<int, 3> got, std::array<int, 3> want,
                                int tolerance = 3) {
  for (int i = 0; i < 3; ++i) {
    if (std::abs(got[i] - want[i]) > tolerance) {
      return ::testing::AssertionFailure()
             << "pixel " << got[0] << "," << got[1] << "," << got[2] << ", expected " << want[0]
             << "," << want[1] << "," << want[2];
    }
  }
  return ::testing::AssertionSuccess();
}

// The share of pixels outside `rect` that differ visibly between two renders of a page.
double ChangedOutside(const testing::Ppm& a, const testing::Ppm& b, std::array<double, 4> rect) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  if (a.width != b.width || a.height != b.height || a.rgb.empty()) return 1;
  int64_t changed = 0, total = 0;
  for (int y = 0; y < a.height; ++y) {
    for (int x = 0; x < a.width; ++x) {
      // One pixel of slack around the box for antialiased edges.
      if (x >= rect[0] - 1 && x <= rect[2] + 1 && y >= rect[1] - 1 && y <= rect[3] + 1) continue;
      ++total;
      const auto p = Pixel(a, x, y), q = Pixel(b, x, y);
      for (int i = 0; i < 3; ++i) {
        if (std::abs(p[i] - q[i]) > 48) {
          ++changed;
          break;
        }
      }
    }
  }
  return total == 0 ? 0 : static_cast<double>(changed) / static_cast<double>(total);
}

LayoutPagePlan OneBox(int page_index, std::array<double, 4> rect, LayoutRgb rgb,
                      uint32_t number = 1) {
  LayoutPagePlan page;
  page.page_index = page_index;
  page.boxes.push_back({rect, rgb, LayoutPaint::kFill});
  page.numbers.push_back({rect, number});
  return page;
}

std::unique_ptr<PdfDocument> OpenOk(const std::string& path,
                                    const RenderOptions& options = TestOptions()) {
  auto doc = PdfDocument::Open(path, options);
  EXPECT_TRUE(doc) << doc.error().ToString();
  return doc ? std::move(*doc) : nullptr;
}

void ExpectMentions(const Error& error, ErrorCode code, const std::vector<std::string>& needles) {
  EXPECT_EQ(error.code, code) << error.ToString();
  for (const std::string& needle : needles) {
    EXPECT_NE(error.message.find(needle), std::string::npos)
        << "'" << needle << "' not in: " << error.ToString();
  }
}

// Words of four letters or more, in order.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text + " ") {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word += c;
    } else {
      if (word.size() >= 4) words.push_back(word);
      word.clear();
    }
  }
  return words;
}

TEST(LayoutPdfWriterTest, CorpusPdfKeepsItsPagesTextAndGetsTheBoxes) {
  auto doc = OpenOk(kDemo1);
  ASSERT_TRUE(doc);
  const int pages = doc->info().page_count();
  ASSERT_EQ(pages, 13);
  // A box in the top-left margin of every page, and one over the first page's body text.
  const std::array<double, 4> margin{4, 4, 30, 20};
  LayoutPlan plan;
  for (int i = 0; i < pages; ++i) plan.pages.push_back(OneBox(i, margin, kTitleRgb, i + 1));
  plan.pages[0].boxes.push_back({{100, 300, 500, 400}, kTextRgb, LayoutPaint::kFill});
  plan.pages[0].boxes.push_back({{40, 420, 200, 440}, kTextRgb, LayoutPaint::kStroke});
  const std::string out = Dir() + "/demo1_layout.pdf";
  auto report = doc->WriteLayoutPdf(plan, out);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->pages, 13);
  EXPECT_TRUE(report->warnings.empty());
  EXPECT_FALSE(fs::exists(out + ".tmp"));

  // Same page count and sizes.
  EXPECT_EQ(DisplayedSizes(out), DisplayedSizes(kDemo1));
  // The original text is still text.
  const std::vector<std::string> words =
      Words(testing::Run({"pdftotext", "-f", "1", "-l", "1", kDemo1, "-"}).out);
  ASSERT_GE(words.size(), 50u);
  const std::string text = PageText(out, 1);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_NE(text.find(words[i]), std::string::npos) << "'" << words[i] << "' lost";
  }
  EXPECT_NE(PageText(out, 7).find("7"), std::string::npos);
  // The margin box is filled over white paper; the rest of the page is unchanged.
  const testing::Ppm before = Render(kDemo1, 1), after = Render(out, 1);
  ASSERT_EQ(Pixel(before, 15, 12), (std::array<int, 3>{255, 255, 255}));
  EXPECT_TRUE(Near(Pixel(after, 15, 12), Blend({255, 255, 255}, kTitleRgb)));
  EXPECT_TRUE(Near(Pixel(after, 300, 350), Blend(Pixel(before, 300, 350), kTextRgb), 6));
  // The stroked box: its outline is drawn, its inside left alone.
  EXPECT_TRUE(Near(Pixel(after, 120, 420), {153, 0, 76}, 40));
  EXPECT_EQ(Pixel(after, 120, 430), Pixel(before, 120, 430));
  EXPECT_LT(ChangedOutside(before, after, {4, 4, 500, 440}), 0.01);
}

TEST(LayoutPdfWriterTest, PageRangeAndOrderComeFromThePlan) {
  auto doc = OpenOk(kShapes);
  ASSERT_TRUE(doc);
  LayoutPlan plan;
  plan.pages = {OneBox(2, {10, 10, 60, 40}, kTextRgb), OneBox(0, {10, 10, 60, 40}, kTextRgb)};
  const std::string out = Dir() + "/range.pdf";
  ASSERT_TRUE(doc->WriteLayoutPdf(plan, out));
  const std::vector<PageSize> sizes = DisplayedSizes(out);
  EXPECT_EQ(sizes, (std::vector<PageSize>{{100, 200}, {612, 792}}));
  // The document is still there for more: render a page, write again.
  EXPECT_TRUE(doc->RenderPage(1));
  ASSERT_TRUE(doc->WriteLayoutPdf(plan, out));
  EXPECT_EQ(DisplayedSizes(out).size(), 2u);
}

TEST(LayoutPdfWriterTest, RotatedAndCroppedPagesAreDrawnAsDisplayed) {
  auto doc = OpenOk(kShapes);
  ASSERT_TRUE(doc);
  // Page 2: A4 with /Rotate 90 (displayed 842 x 595); page 3: a crop box with /Rotate 270
  // (displayed 100 x 200). Boxes are in displayed coordinates, top left origin.
  const std::array<double, 4> box2{20, 30, 120, 80}, box3{10, 120, 60, 160};
  LayoutPlan plan;
  plan.pages = {OneBox(0, {10, 10, 60, 40}, kTextRgb), OneBox(1, box2, kTextRgb),
                OneBox(2, box3, kTitleRgb)};
  const std::string out = Dir() + "/shapes_layout.pdf";
  auto report = doc->WriteLayoutPdf(plan, out);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(DisplayedSizes(out), (std::vector<PageSize>{{612, 792}, {842, 595}, {100, 200}}));
  EXPECT_EQ(DisplayedSizes(out), DisplayedSizes(kShapes));
  EXPECT_NE(PageText(out, 2).find("Page2:A4,/Rotate90"), std::string::npos) << PageText(out, 2);
  for (int page : {2, 3}) {
    const auto& box = page == 2 ? box2 : box3;
    const LayoutRgb rgb = page == 2 ? kTextRgb : kTitleRgb;
    const testing::Ppm before = Render(kShapes, page), after = Render(out, page);
    ASSERT_EQ(after.width, before.width) << page;
    ASSERT_EQ(after.height, before.height) << page;
    const int cx = static_cast<int>((box[0] + box[2]) / 2),
              cy = static_cast<int>((box[1] + box[3]) / 2);
    EXPECT_TRUE(Near(Pixel(after, cx, cy), Blend(Pixel(before, cx, cy), rgb), 6)) << page;
    // Everything else, the rotated drawing included, is where it was (the number, 10 pt high
    // right of the box, is allowed for).
    EXPECT_LT(ChangedOutside(before, after, {box[0], box[1], box[2] + 20, box[3]}), 0.01) << page;
  }
}

TEST(LayoutPdfWriterTest, NumbersAreText) {
  const std::string in = Dir() + "/blank.pdf";
  testing::WriteFile(in, testing::MakePdf(1, 300, 200));
  auto doc = OpenOk(in);
  ASSERT_TRUE(doc);
  LayoutPlan plan;
  plan.pages = {OneBox(0, {150, 20, 200, 60}, kTextRgb, 42)};
  plan.pages[0].numbers.push_back({{10, 150, 20, 160}, 7});
  const std::string out = Dir() + "/numbers.pdf";
  ASSERT_TRUE(doc->WriteLayoutPdf(plan, out));
  const std::string text = PageText(out, 1);
  EXPECT_NE(text.find("42"), std::string::npos) << text;
  EXPECT_NE(text.find("7"), std::string::npos) << text;
  // Red, right of the box's right edge, below its top.
  const testing::Ppm page = Render(out, 1);
  int red = 0;
  for (int y = 20; y <= 32; ++y) {
    for (int x = 202; x <= 216; ++x) {
      const auto p = Pixel(page, x, y);
      red += p[0] > 200 && p[1] < 120 && p[2] < 120;
    }
  }
  EXPECT_GT(red, 5);
}

TEST(LayoutPdfWriterTest, ImageInputIsOnePageOfItsSizeInPoints) {
  auto made = image::MakeImage(300, 200, 20, 120, 220);
  ASSERT_TRUE(made);
  image::RgbImage img = std::move(*made);
  for (int64_t y = 100; y < 200; ++y) {
    for (int64_t x = 0; x < 300; ++x) {
      uint8_t* p = img.row(y) + x * 3;
      p[0] = p[1] = p[2] = 255;
    }
  }
  LayoutPlan plan;
  plan.pages = {OneBox(0, {10, 110, 110, 190}, kTextRgb, 3)};
  plan.pages[0].boxes.push_back({{150, 10, 250, 90}, kTitleRgb, LayoutPaint::kFill});
  const std::string out = Dir() + "/image_layout.pdf";
  auto report = WriteImageLayoutPdf(img, 300, 200, plan, out);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->pages, 1);
  EXPECT_TRUE(report->warnings.empty());
  EXPECT_EQ(DisplayedSizes(out), (std::vector<PageSize>{{300, 200}}));
  EXPECT_NE(PageText(out, 1).find("3"), std::string::npos);
  const testing::Ppm page = Render(out, 1);
  EXPECT_TRUE(Near(Pixel(page, 60, 150), Blend({255, 255, 255}, kTextRgb)));
  EXPECT_TRUE(Near(Pixel(page, 200, 50), Blend({20, 120, 220}, kTitleRgb)));
  EXPECT_TRUE(Near(Pixel(page, 20, 20), {20, 120, 220}));  // the image, uncovered
  EXPECT_TRUE(Near(Pixel(page, 280, 180), {255, 255, 255}));
  // A page size other than the pixel size scales the image onto it.
  ASSERT_TRUE(WriteImageLayoutPdf(img, 150, 100, plan, out));
  EXPECT_EQ(DisplayedSizes(out), (std::vector<PageSize>{{150, 100}}));
  EXPECT_TRUE(Near(Render(out, 1).rgb.empty() ? std::array<int, 3>{} : Pixel(Render(out, 1), 5, 5),
                   {20, 120, 220}));
}

TEST(LayoutPdfWriterTest, ImageInputErrors) {
  auto made = image::MakeImage(30, 20);
  ASSERT_TRUE(made);
  const std::string out = Dir() + "/bad.pdf";
  LayoutPlan one;
  one.pages = {OneBox(0, {1, 1, 5, 5}, kTextRgb)};
  LayoutPlan two = one;
  two.pages.push_back(one.pages[0]);
  LayoutPlan other_page = one;
  other_page.pages[0].page_index = 1;
  EXPECT_EQ(WriteImageLayoutPdf(*made, 30, 20, two, out).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(WriteImageLayoutPdf(*made, 30, 20, other_page, out).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(WriteImageLayoutPdf(*made, 30, 20, LayoutPlan{}, out).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(WriteImageLayoutPdf(*made, NAN, 20, one, out).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(WriteImageLayoutPdf(*made, 30, 0, one, out).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(WriteImageLayoutPdf(image::RgbImage{}, 30, 20, one, out).error().code,
            ErrorCode::kInvalidArgument);
  image::RgbImage short_pixels = *made;
  short_pixels.pixels.resize(10);
  EXPECT_EQ(WriteImageLayoutPdf(short_pixels, 30, 20, one, out).error().code,
            ErrorCode::kInvalidArgument);
  image::RgbImage too_wide;
  too_wide.width = 40000;
  too_wide.height = 1;
  too_wide.pixels.assign(40000 * 3, 0);
  EXPECT_EQ(WriteImageLayoutPdf(too_wide, 30, 20, one, out).error().code,
            ErrorCode::kResourceExhausted);
  auto unwritable = WriteImageLayoutPdf(*made, 30, 20, one, Dir() + "/no/such/dir.pdf");
  ASSERT_FALSE(unwritable);
  EXPECT_EQ(unwritable.error().code, ErrorCode::kIo);
  EXPECT_FALSE(fs::exists(out));
}

TEST(LayoutPdfWriterTest, WithoutAFontTheNumbersAreSkippedWithAWarning) {
  auto made = image::MakeImage(60, 40, 255, 255, 255);
  ASSERT_TRUE(made);
  LayoutPlan plan;
  plan.pages = {OneBox(0, {5, 5, 30, 30}, kTextRgb, 9)};
  const std::string out = Dir() + "/nofont_image.pdf";
  auto report = WriteImageLayoutPdf(*made, 60, 40, plan, out, LayoutNumberFont::None());
  ASSERT_TRUE(report) << report.error().ToString();
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_NE(report->warnings[0].find("numbers not drawn"), std::string::npos);
  EXPECT_EQ(PageText(out, 1).find("9"), std::string::npos);
  EXPECT_TRUE(Near(Pixel(Render(out, 1), 15, 15), Blend({255, 255, 255}, kTextRgb)));
  // The render helper with a fontconfig that knows no fonts at all.
  const std::string conf = Dir() + "/empty-fonts.conf";
  testing::WriteFile(conf, "<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n");
  const std::string in = Dir() + "/blank.pdf";
  testing::WriteFile(in, testing::MakePdf(1, 100, 100));
  ScopedEnv env("FONTCONFIG_FILE", conf);
  auto doc = OpenOk(in);
  ASSERT_TRUE(doc);
  const std::string helper_out = Dir() + "/nofont_helper.pdf";
  auto helper_report = doc->WriteLayoutPdf(plan, helper_out);
  ASSERT_TRUE(helper_report) << helper_report.error().ToString();
  ASSERT_EQ(helper_report->warnings.size(), 1u);
  EXPECT_NE(helper_report->warnings[0].find("no font"), std::string::npos);
  EXPECT_EQ(DisplayedSizes(helper_out), (std::vector<PageSize>{{100, 100}}));
}

TEST(LayoutPdfWriterTest, DamagedPageIsAClearErrorAndTheDocumentCarriesOn) {
  auto doc = OpenOk(kOddBoxes);
  ASSERT_TRUE(doc);
  LayoutPlan plan;
  plan.pages = {OneBox(0, {1, 1, 5, 5}, kTextRgb), OneBox(1, {1, 1, 5, 5}, kTextRgb)};
  const std::string out = Dir() + "/odd.pdf";
  auto failed = doc->WriteLayoutPdf(plan, out);
  ASSERT_FALSE(failed);
  ExpectMentions(failed.error(), ErrorCode::kCorrupt,
                 {"odd_boxes.pdf", "page 2", "layout PDF", "not finite"});
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".tmp"));
  // The other pages still make a layout PDF, and pages still render.
  plan.pages = {OneBox(0, {1, 1, 5, 5}, kTextRgb), OneBox(2, {1, 1, 5, 5}, kTextRgb)};
  auto written = doc->WriteLayoutPdf(plan, out);
  ASSERT_TRUE(written) << written.error().ToString();
  EXPECT_EQ(DisplayedSizes(out), (std::vector<PageSize>{{612, 792}, {200, 100}}));
  EXPECT_TRUE(doc->RenderPage(0));
}

TEST(LayoutPdfWriterTest, GarbledContentStreamStillGivesAPage) {
  std::string pdf = testing::MakePdf(1, 200, 200);
  const std::string content = "0 0 1 rg 10 10 100 100 re f";
  const size_t at = pdf.find(content);
  ASSERT_NE(at, std::string::npos);
  pdf.replace(at, content.size(), "q ( 1 0 0 Tj ] BT /X 9 Tf ET Q");
  const std::string in = Dir() + "/garbled.pdf";
  testing::WriteFile(in, pdf);
  auto doc = OpenOk(in);
  ASSERT_TRUE(doc);
  LayoutPlan plan;
  plan.pages = {OneBox(0, {1, 1, 50, 50}, kTextRgb)};
  const std::string out = Dir() + "/garbled_layout.pdf";
  auto written = doc->WriteLayoutPdf(plan, out);
  ASSERT_TRUE(written) << written.error().ToString();
  EXPECT_EQ(DisplayedSizes(out), (std::vector<PageSize>{{200, 200}}));
}

TEST(LayoutPdfWriterTest, BadPlansAreRefusedBeforeTheHelperIsAsked) {
  auto doc = OpenOk(kShapes);
  ASSERT_TRUE(doc);
  const std::string out = Dir() + "/refused.pdf";
  LayoutPlan plan;
  ExpectMentions(doc->WriteLayoutPdf(plan, out).error(), ErrorCode::kInvalidArgument, {"no pages"});
  plan.pages = {OneBox(3, {1, 1, 5, 5}, kTextRgb)};
  ExpectMentions(doc->WriteLayoutPdf(plan, out).error(), ErrorCode::kInvalidArgument,
                 {"shapes.pdf", "page index 3", "[0, 3)"});
  plan.pages = {OneBox(0, {1, 1, NAN, 5}, kTextRgb)};
  ExpectMentions(doc->WriteLayoutPdf(plan, out).error(), ErrorCode::kInvalidArgument,
                 {"coordinate"});
  plan.pages = {OneBox(0, {9, 1, 5, 5}, kTextRgb)};
  ExpectMentions(doc->WriteLayoutPdf(plan, out).error(), ErrorCode::kInvalidArgument,
                 {"not ordered"});
  plan.pages = {OneBox(0, {1, 1, 5, 5}, kTextRgb)};
  plan.pages[0].boxes.resize(kMaxLayoutBoxesPerPage + 1, plan.pages[0].boxes[0]);
  ExpectMentions(doc->WriteLayoutPdf(plan, out).error(), ErrorCode::kResourceExhausted,
                 {"boxes exceed"});
  EXPECT_FALSE(fs::exists(out));
  // At the bound it is drawn.
  plan.pages[0].boxes.resize(kMaxLayoutBoxesPerPage);
  EXPECT_TRUE(doc->WriteLayoutPdf(plan, out));
  auto unwritable = doc->WriteLayoutPdf(plan, Dir() + "/no/such/dir.pdf");
  ASSERT_FALSE(unwritable);
  EXPECT_EQ(unwritable.error().code, ErrorCode::kIo);
  EXPECT_TRUE(doc->RenderPage(0));
}

// The error WriteLayoutPdf gives with the helper misbehaving as `fault` while laying out page
// 1 of shapes.pdf; checks that nothing is left behind.
Error LayoutFault(const std::string& fault, const RenderOptions& options = TestOptions()) {
  const int fds_before = testing::OpenDescriptorCount();
  const std::string out = Dir() + "/fault.pdf";
  Error error;
  {
    ScopedEnv env(testing::kFaultVar, fault);
    auto doc = OpenOk(kShapes, options);
    if (!doc) return Error{};
    LayoutPlan plan;
    plan.pages = {OneBox(0, {1, 1, 5, 5}, kTextRgb)};
    auto failed = doc->WriteLayoutPdf(plan, out);
    EXPECT_FALSE(failed) << fault;
    if (failed) return Error{};
    error = failed.error();
    auto again = doc->WriteLayoutPdf(plan, out);  // the document is over
    EXPECT_FALSE(again);
    if (!again) {
      EXPECT_EQ(again.error().message, error.message);
    }
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".tmp"));
  EXPECT_TRUE(testing::NoChildren()) << "a helper was left running or unreaped";
  EXPECT_EQ(testing::OpenDescriptorCount(), fds_before) << "descriptors leaked";
  return error;
}

TEST(LayoutPdfLimitsTest, HangIsKilledAtTheWallClockTimeout) {
  RenderOptions options = TestOptions();
  options.limits.page_timeout_seconds = 0.3;
  ExpectMentions(LayoutFault("hang:1", options), ErrorCode::kResourceExhausted,
                 {"layout PDF, page 1", "no reply", "--page-timeout", "killed"});
}

TEST(LayoutPdfLimitsTest, CpuSpinIsStoppedByTheCpuLimit) {
  RenderOptions options = TestOptions();
  options.limits.page_cpu_seconds = 1;
  ExpectMentions(LayoutFault("spin:1", options), ErrorCode::kResourceExhausted,
                 {"layout PDF, page 1", "--page-cpu-seconds"});
}

TEST(LayoutPdfLimitsTest, CrashAndGarbage) {
  ExpectMentions(LayoutFault("crash:1"), ErrorCode::kUnavailable,
                 {"shapes.pdf", "layout PDF, page 1", "signal 11"});
  ExpectMentions(LayoutFault("garbage:1"), ErrorCode::kUnavailable,
                 {"layout PDF, page 1", "malformed reply"});
}

TEST(LayoutPdfLimitsTest, OutputIsBoundedByTheDocumentSizeLimit) {
  const std::string in = Dir() + "/small.pdf";
  const std::string bytes = testing::MakePdf(1, 100, 100);
  testing::WriteFile(in, bytes);
  RenderOptions options = TestOptions();
  options.limits.max_document_bytes = static_cast<int64_t>(bytes.size());
  const int fds_before = testing::OpenDescriptorCount();
  {
    auto doc = OpenOk(in, options);
    ASSERT_TRUE(doc);
    LayoutPlan plan;
    plan.pages = {OneBox(0, {1, 1, 5, 5}, kTextRgb)};
    const std::string out = Dir() + "/too_big.pdf";
    auto failed = doc->WriteLayoutPdf(plan, out);
    ASSERT_FALSE(failed);
    ExpectMentions(failed.error(), ErrorCode::kResourceExhausted,
                   {"small.pdf", "layout PDF", "--max-document-bytes"});
    EXPECT_FALSE(fs::exists(out));
  }
  EXPECT_TRUE(testing::NoChildren());
  EXPECT_EQ(testing::OpenDescriptorCount(), fds_before);
}

TEST(LayoutPdfLimitsTest, MemoryLimitStillApplies) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a sanitizer build of the helper runs without an address-space limit";
#endif
  // The hook asks for 8 GiB while laying out the page: over the 2 GiB address-space limit.
  ExpectMentions(LayoutFault("alloc:1"), ErrorCode::kResourceExhausted,
                 {"layout PDF, page 1", "ran out of memory", "--helper-memory"});
}

}  // namespace
}  // namespace mineru::pdf
