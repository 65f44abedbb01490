// SPDX-License-Identifier: Apache-2.0
// PdfDocument with the real helper and Poppler: page sizes, rotation and scale as MinerU
// computes them, streaming, and a clear error for every kind of bad document and every limit
// at its boundary.
#include "image/pdf/pdf_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "image/pdf/page_selection.h"
#include "pdf_test_util.h"

namespace mineru::pdf {
namespace {

using testing::kPdfData;
using testing::kRealPage;
using testing::kShapes;
using testing::TestOptions;

std::unique_ptr<PdfDocument> OpenOk(const std::string& path,
                                    const RenderOptions& options = TestOptions()) {
  auto doc = PdfDocument::Open(path, options);
  EXPECT_TRUE(doc) << doc.error().ToString();
  return doc ? std::move(*doc) : nullptr;
}

Error OpenError(const std::string& path, const RenderOptions& options = TestOptions()) {
  auto doc = PdfDocument::Open(path, options);
  EXPECT_FALSE(doc) << path << " opened";
  return doc ? Error{} : doc.error();
}

::testing::AssertionResult Mentions(const Error& error, ErrorCode code,
                                    const std::vector<std::string>& needles) {
  if (error.code != code) {
    return ::testing::AssertionFailure() << "code " << ErrorCodeName(error.code) << ", expected "
                                         << ErrorCodeName(code) << ": " << error.ToString();
  }
  for (const std::string& needle : needles) {
    if (error.message.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << needle << "' not in: " << error.ToString();
    }
  }
  return ::testing::AssertionSuccess();
}

std::array<uint8_t, 3> Pixel(const PageImage& page, int x, int y) {
  const size_t at = (static_cast<size_t>(y) * page.width() + x) * 3;
  const std::vector<uint8_t>& rgb = page.image.pixels;
  return {rgb[at], rgb[at + 1], rgb[at + 2]};
}

TEST(PdfDocumentTest, PagesComeWithMinerusSizesRotationAndScale) {
  auto doc = OpenOk(kShapes);
  ASSERT_TRUE(doc);
  ASSERT_EQ(doc->info().page_count(), 3);
  struct Expected {
    double width_pt, height_pt;
    int rotation, width, height;
  };
  // Page 2 is A4 turned by /Rotate 90; page 3 is a 200 x 100 crop box turned by /Rotate 270.
  const Expected expected[] = {
      {612, 792, 0, 1700, 2200}, {842, 595, 90, 2339, 1653}, {100, 200, 270, 278, 556}};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const PageInfo& info = doc->info().pages[i];
    EXPECT_EQ(info.width_pt, expected[i].width_pt);
    EXPECT_EQ(info.height_pt, expected[i].height_pt);
    EXPECT_EQ(info.rotation, expected[i].rotation);
    auto page = doc->RenderPage(i);
    ASSERT_TRUE(page) << page.error().ToString();
    EXPECT_EQ(page->index, i);
    EXPECT_EQ(page->scale(), 200.0 / 72);
    EXPECT_EQ(page->width(), expected[i].width);
    EXPECT_EQ(page->height(), expected[i].height);
    EXPECT_EQ(page->image.pixels.size(), size_t(expected[i].width) * expected[i].height * 3);
    if (i == 0) {
      // The red rectangle (72..272 x 600..720 pt, origin bottom left) lands where MinerU's page
      // image has it: points x scale, y measured from the top.
      EXPECT_EQ(Pixel(*page, 478, 367), (std::array<uint8_t, 3>{255, 0, 0}));
      EXPECT_EQ(Pixel(*page, 10, 10), (std::array<uint8_t, 3>{255, 255, 255}));
    }
    if (i == 1) {
      // Turned clockwise: the green rectangle (50..250 x 50..150 pt) is now near the top left,
      // tall rather than wide.
      EXPECT_EQ(Pixel(*page, 278, 417), (std::array<uint8_t, 3>{0, 153, 0}));
      EXPECT_EQ(Pixel(*page, 278, 800), (std::array<uint8_t, 3>{255, 255, 255}));
    }
  }
}

TEST(PdfDocumentTest, RealDocumentPage) {
  auto doc = OpenOk(kRealPage);
  ASSERT_TRUE(doc);
  ASSERT_EQ(doc->info().page_count(), 1);
  auto page = doc->RenderPage(0);
  ASSERT_TRUE(page) << page.error().ToString();
  EXPECT_EQ(page->width(), 1700);
  EXPECT_EQ(page->height(), 2200);
  // Text, a figure and a table: a good part of the page is ink.
  EXPECT_GT(testing::NonWhiteBytes(page->image.pixels), int64_t{100000});
}

TEST(PdfDocumentTest, BytesInMemoryRenderAsTheFileDoes) {
  const std::string bytes = testing::ReadFile(kShapes);
  auto from_bytes = PdfDocument::OpenBytes(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "upload.pdf", TestOptions());
  ASSERT_TRUE(from_bytes) << from_bytes.error().ToString();
  auto from_file = OpenOk(kShapes);
  ASSERT_TRUE(from_file);
  for (int i = 0; i < 3; ++i) {
    auto a = (*from_bytes)->RenderPage(i);
    auto b = from_file->RenderPage(i);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->image.pixels, b->image.pixels) << "page " << i + 1;
  }
}

TEST(PdfDocumentTest, PagesStreamOneAtATimeThroughOneBuffer) {
  const std::string path = testing::TestDir() + "/five.pdf";
  testing::WriteFile(path, testing::MakePdf(5));
  auto doc = OpenOk(path);
  ASSERT_TRUE(doc);
  std::vector<int> seen;
  std::vector<const uint8_t*> buffers;
  Status status = RenderPages(*doc, SelectPageRange(1, -1, 5), [&](const PageImage& page) {
    seen.push_back(page.index);
    buffers.push_back(page.image.pixels.data());
    return OkStatus();
  });
  ASSERT_TRUE(status) << status.error().ToString();
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  // Same-sized pages reuse the one buffer: memory does not grow with the page count.
  for (const uint8_t* buffer : buffers) EXPECT_EQ(buffer, buffers.front());

  // The consumer can stop the stream; no further page is rendered.
  int calls = 0;
  status = RenderPages(*doc, {0, 1, 2}, [&](const PageImage&) -> Status {
    if (++calls == 2) return Fail(ErrorCode::kCancelled, "enough");
    return OkStatus();
  });
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(calls, 2);
}

TEST(PdfDocumentTest, EncryptedDocuments) {
  const std::string user = kPdfData + "/encrypted_user.pdf";
  EXPECT_TRUE(Mentions(OpenError(user), ErrorCode::kUnsupported,
                       {"encrypted_user.pdf", "encrypted PDF", "needs a password"}));
  RenderOptions wrong = TestOptions();
  wrong.password = "guess";
  EXPECT_TRUE(Mentions(OpenError(user, wrong), ErrorCode::kUnsupported, {"password is wrong"}));
  RenderOptions right = TestOptions();
  right.password = "secret";
  auto doc = OpenOk(user, right);
  auto plain = OpenOk(kShapes);
  ASSERT_TRUE(doc && plain);
  auto a = doc->RenderPage(0);
  auto b = plain->RenderPage(0);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->image.pixels, b->image.pixels);
  // An owner password alone restricts editing, not reading: it opens without one.
  auto owner = OpenOk(kPdfData + "/encrypted_owner.pdf");
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->info().page_count(), 3);
}

TEST(PdfDocumentTest, FilesThatAreNotPdfs) {
  const std::string dir = testing::TestDir();
  testing::WriteFile(dir + "/notes.txt", "just some text, no header\n");
  EXPECT_TRUE(
      Mentions(OpenError(dir + "/notes.txt"), ErrorCode::kCorrupt, {"notes.txt", "not a PDF"}));
  testing::WriteFile(dir + "/empty.pdf", "");
  EXPECT_TRUE(Mentions(OpenError(dir + "/empty.pdf"), ErrorCode::kCorrupt, {"empty file"}));
  testing::WriteFile(dir + "/junk.pdf", "%PDF-1.7\n" + std::string(3000, '\x9c') + "\n%%EOF\n");
  EXPECT_TRUE(
      Mentions(OpenError(dir + "/junk.pdf"), ErrorCode::kCorrupt, {"junk.pdf", "damaged PDF"}));
  EXPECT_TRUE(Mentions(OpenError(dir + "/missing.pdf"), ErrorCode::kNotFound, {"missing.pdf"}));
  EXPECT_TRUE(Mentions(OpenError(dir), ErrorCode::kInvalidArgument, {"not a regular file"}));
}

TEST(PdfDocumentTest, TruncatedDocuments) {
  const std::string dir = testing::TestDir();
  const std::string bytes = testing::ReadFile(kShapes);
  // Cut before the trailer: nothing says where the catalog is.
  const size_t trailer = bytes.find("trailer");
  ASSERT_NE(trailer, std::string::npos);
  testing::WriteFile(dir + "/cut.pdf", bytes.substr(0, trailer - 100));
  EXPECT_TRUE(Mentions(OpenError(dir + "/cut.pdf"), ErrorCode::kCorrupt,
                       {"cut.pdf", "damaged PDF", "Poppler"}));
  // Cut after the trailer (the cross-reference offset and %%EOF lost): Poppler rebuilds the
  // table, as pdftoppm would, and every page renders.
  const size_t startxref = bytes.find("startxref");
  testing::WriteFile(dir + "/tail.pdf", bytes.substr(0, startxref + 4));
  auto doc = OpenOk(dir + "/tail.pdf");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->info().page_count(), 3);
  EXPECT_TRUE(doc->RenderPage(2));
}

TEST(PdfDocumentTest, ZeroPages) {
  EXPECT_TRUE(Mentions(OpenError(kPdfData + "/zero_pages.pdf"), ErrorCode::kCorrupt,
                       {"zero_pages.pdf", "no pages"}));
}

TEST(PdfDocumentTest, EnormousPagesAreCappedAndThePixelLimitHoldsAtItsBoundary) {
  const std::string huge = kPdfData + "/huge_mediabox.pdf";
  auto doc = OpenOk(huge);
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->info().pages[0].width_pt, 200000);
  auto square = doc->RenderPage(0);
  ASSERT_TRUE(square) << square.error().ToString();
  EXPECT_EQ(square->scale(), 3500 / 200000.0);
  EXPECT_EQ(square->width(), 3501);
  EXPECT_EQ(square->height(), 3501);
  auto strip = doc->RenderPage(1);
  ASSERT_TRUE(strip);
  EXPECT_EQ(strip->width(), 3501);
  EXPECT_EQ(strip->height(), 1);

  RenderOptions tight = TestOptions();
  tight.limits.max_page_pixels = 3501 * 3501;
  doc = OpenOk(huge, tight);
  ASSERT_TRUE(doc && doc->RenderPage(0));
  tight.limits.max_page_pixels = 3501 * 3501 - 1;
  doc = OpenOk(huge, tight);
  ASSERT_TRUE(doc);
  auto over = doc->RenderPage(0);
  ASSERT_FALSE(over);
  EXPECT_TRUE(Mentions(over.error(), ErrorCode::kResourceExhausted,
                       {"huge_mediabox.pdf", "page 1", "--max-page-pixels 12257000"}));
  // A page over the limit fails alone; the document goes on.
  EXPECT_TRUE(doc->RenderPage(1));
}

TEST(PdfDocumentTest, OddPageBoxes) {
  auto doc = OpenOk(kPdfData + "/odd_boxes.pdf");
  ASSERT_TRUE(doc);
  // An empty media box means Letter (Poppler and PDFium agree).
  auto letter = doc->RenderPage(0);
  ASSERT_TRUE(letter);
  EXPECT_EQ(letter->width(), 1700);
  // A box too wide for a double.
  auto infinite = doc->RenderPage(1);
  ASSERT_FALSE(infinite);
  EXPECT_TRUE(Mentions(infinite.error(), ErrorCode::kCorrupt, {"page 2", "not finite"}));
  // Upside-down box, /Rotate -90: 100 x 200 pt turned to 200 x 100.
  auto turned = doc->RenderPage(2);
  ASSERT_TRUE(turned) << turned.error().ToString();
  EXPECT_EQ(turned->info.rotation, 270);
  EXPECT_EQ(turned->width(), 556);
  EXPECT_EQ(turned->height(), 278);
  // Asking for a page that does not exist is the caller's mistake, not the document's.
  auto missing = doc->RenderPage(3);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(doc->RenderPage(0));
}

TEST(PdfDocumentTest, PageCountLimitAtItsBoundary) {
  RenderOptions options = TestOptions();
  options.limits.max_pages = 3;
  EXPECT_TRUE(OpenOk(kShapes, options));
  options.limits.max_pages = 2;
  EXPECT_TRUE(Mentions(OpenError(kShapes, options), ErrorCode::kResourceExhausted,
                       {"shapes.pdf", "3 pages exceed --max-pages 2"}));
  // The default limit, against a generated document one page over it.
  const std::string path = testing::TestDir() + "/many.pdf";
  testing::WriteFile(path, testing::MakePdf(kDefaultMaxPages + 1, 100, 100));
  EXPECT_TRUE(Mentions(OpenError(path), ErrorCode::kResourceExhausted,
                       {"10001 pages exceed --max-pages 10000"}));
}

TEST(PdfDocumentTest, DocumentSizeLimitAtItsBoundary) {
  const auto size = static_cast<int64_t>(std::filesystem::file_size(kShapes));
  RenderOptions options = TestOptions();
  options.limits.max_document_bytes = size;
  EXPECT_TRUE(OpenOk(kShapes, options));
  options.limits.max_document_bytes = size - 1;
  EXPECT_TRUE(Mentions(OpenError(kShapes, options), ErrorCode::kResourceExhausted,
                       {"--max-document-bytes"}));
  const std::string bytes = testing::ReadFile(kShapes);
  auto in_memory = PdfDocument::OpenBytes(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "upload.pdf", options);
  ASSERT_FALSE(in_memory);
  EXPECT_TRUE(Mentions(in_memory.error(), ErrorCode::kResourceExhausted, {"upload.pdf"}));
}

}  // namespace
}  // namespace mineru::pdf
