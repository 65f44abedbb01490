// SPDX-License-Identifier: Apache-2.0
// The renderer's pure rules: MinerU's page-size formula, page lists, option validation and the
// wire protocol's encoders and (distrustful) decoders.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "image/pdf/page_image.h"
#include "image/pdf/page_selection.h"
#include "image/pdf/protocol.h"
#include "image/pdf/render_options.h"

namespace mineru::pdf {
namespace {

namespace proto = protocol;

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The payload of a whole frame.
std::span<const uint8_t> Payload(const std::string& frame) {
  return Bytes(frame).subspan(proto::kHeaderBytes);
}

PageGeometry Geometry(double w, double h, double dpi = kMineruDpi,
                      int max_long_side = kDefaultMaxLongSide) {
  auto g = ComputePageGeometry({w, h, 0}, dpi, max_long_side, kDefaultMaxPagePixels);
  EXPECT_TRUE(g) << g.error().ToString();
  return g.value_or(PageGeometry{});
}

// Expected values computed with MinerU's Python expressions (pdf_reader.page_to_image, then
// pypdfium2's math.ceil(width * scale)).
TEST(PageGeometryTest, FollowsMinerusRule) {
  PageGeometry letter = Geometry(612, 792);
  EXPECT_EQ(letter.scale, 200.0 / 72);
  EXPECT_EQ(letter.width, 1700);
  EXPECT_EQ(letter.height, 2200);
  PageGeometry a4_landscape = Geometry(842, 595);
  EXPECT_EQ(a4_landscape.width, 2339);
  EXPECT_EQ(a4_landscape.height, 1653);
  // The long side is capped: 1800 pt x 200/72 = 5000 px > 3500.
  PageGeometry scan = Geometry(1225.5, 1800);
  EXPECT_EQ(scan.scale, 3500 / 1800.0);
  EXPECT_EQ(scan.width, 2383);
  EXPECT_EQ(scan.height, 3500);
  // A lower DPI, no cap.
  PageGeometry dpi150 = Geometry(612, 792, 150);
  EXPECT_EQ(dpi150.width, 1275);
  EXPECT_EQ(dpi150.height, 1651);
}

TEST(PageGeometryTest, HugePagesAreCappedAndRoundUpAsMinerusDo) {
  // 200000 x (3500 / 200000) is 3500.0000000000005 in double precision: MinerU's image is 3501
  // pixels wide, and so is ours.
  PageGeometry square = Geometry(200000, 200000);
  EXPECT_EQ(square.scale, 3500 / 200000.0);
  EXPECT_EQ(square.width, 3501);
  EXPECT_EQ(square.height, 3501);
  PageGeometry strip = Geometry(200000, 50);
  EXPECT_EQ(strip.width, 3501);
  EXPECT_EQ(strip.height, 1);
}

TEST(PageGeometryTest, PixelLimitAtItsBoundary) {
  const PageInfo page{612, 792, 0};  // 1700 x 2200 = 3,740,000 pixels
  EXPECT_TRUE(ComputePageGeometry(page, kMineruDpi, kDefaultMaxLongSide, 3740000));
  auto over = ComputePageGeometry(page, kMineruDpi, kDefaultMaxLongSide, 3739999);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(over.error().message.find("--max-page-pixels 3739999"), std::string::npos);
}

TEST(PageGeometryTest, RejectsEmptyAndInfiniteBoxes) {
  const double inf = std::numeric_limits<double>::infinity();
  for (PageInfo page : {PageInfo{0, 792, 0}, PageInfo{612, -1, 0}, PageInfo{inf, 100, 0},
                        PageInfo{std::nan(""), 100, 0}, PageInfo{1e300, 1e-300, 0}}) {
    auto g = ComputePageGeometry(page, kMineruDpi, kDefaultMaxLongSide, kDefaultMaxPagePixels);
    ASSERT_FALSE(g) << page.width_pt << " x " << page.height_pt;
    EXPECT_EQ(g.error().code, ErrorCode::kCorrupt);
  }
}

TEST(PageSelectionTest, ParsesListsAndRanges) {
  auto spans = ParsePageList("1-3,7,10-");
  ASSERT_TRUE(spans) << spans.error().ToString();
  ASSERT_EQ(spans->size(), 3u);
  auto pages = SelectPages(*spans, 12);
  ASSERT_TRUE(pages);
  EXPECT_EQ(*pages, (std::vector<int>{0, 1, 2, 6, 9, 10, 11}));
  // Overlaps and disorder: each page once, in document order.
  auto messy = SelectPages(ParsePageList("3,1-2,2").value(), 3);
  ASSERT_TRUE(messy);
  EXPECT_EQ(*messy, (std::vector<int>{0, 1, 2}));
  // No list: every page.
  EXPECT_EQ(SelectPages(ParsePageList("").value(), 2).value(), (std::vector<int>{0, 1}));
}

TEST(PageSelectionTest, RejectsBadListsAndPagesPastTheEnd) {
  for (const char* bad : {"0", "a", "-3", "3-1", "1,,2", "1-2-3", "+1", "1 ", "99999999999"}) {
    auto spans = ParsePageList(bad);
    EXPECT_FALSE(spans) << bad;
    if (!spans) {
      EXPECT_EQ(spans.error().code, ErrorCode::kInvalidArgument);
    }
  }
  auto past = SelectPages(ParsePageList("2-5").value(), 3);
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().message.find("page 4 is past the end of the document (3 pages)"),
            std::string::npos)
      << past.error().message;
  EXPECT_FALSE(SelectPages(ParsePageList("7").value(), 3));
  EXPECT_TRUE(SelectPages(ParsePageList("3").value(), 3));
}

TEST(PageSelectionTest, MinerusStartAndEndPageIds) {
  EXPECT_EQ(SelectPageRange(0, -1, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(SelectPageRange(1, 1, 3), (std::vector<int>{1}));
  EXPECT_EQ(SelectPageRange(1, 99, 3), (std::vector<int>{1, 2}));  // clamped, as MinerU does
  EXPECT_TRUE(SelectPageRange(5, -1, 3).empty());
}

TEST(RenderOptionsTest, ValidatesEachOption) {
  EXPECT_TRUE(ValidateRenderOptions(RenderOptions{}));
  auto expect_invalid = [](RenderOptions o, const std::string& flag) {
    auto status = ValidateRenderOptions(o);
    ASSERT_FALSE(status) << flag;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(flag), std::string::npos) << status.error().message;
  };
  RenderOptions o;
  o.dpi = 0;
  expect_invalid(o, "--dpi");
  o = {};
  o.dpi = std::nan("");
  expect_invalid(o, "--dpi");
  o = {};
  o.max_long_side = 0;
  expect_invalid(o, "--max-long-side");
  o = {};
  o.password = std::string(kMaxPasswordBytes + 1, 'x');
  expect_invalid(o, "--password");
  o = {};
  o.limits.max_pages = 0;
  expect_invalid(o, "--max-pages");
  o = {};
  o.limits.max_pages = kMaxPagesCeiling + 1;
  expect_invalid(o, "--max-pages");
  o = {};
  o.limits.max_page_pixels = kMaxPagePixelsCeiling + 1;
  expect_invalid(o, "--max-page-pixels");
  o = {};
  o.limits.max_page_pixels = kMaxPagePixelsCeiling;
  EXPECT_TRUE(ValidateRenderOptions(o));
  o = {};
  o.limits.max_document_bytes = kMaxDocumentBytesCeiling + 1;
  expect_invalid(o, "--max-document-bytes");
  o = {};
  o.limits.page_timeout_seconds = 0;
  expect_invalid(o, "--page-timeout");
  o = {};
  o.limits.page_cpu_seconds = 0;
  expect_invalid(o, "--page-cpu-seconds");
  o = {};
  o.limits.helper_memory_bytes = -1;
  expect_invalid(o, "--helper-memory");
}

TEST(ProtocolTest, MessagesRoundTrip) {
  auto password = proto::DecodeOpen(Payload(proto::EncodeOpen("s3cret")));
  ASSERT_TRUE(password);
  EXPECT_EQ(*password, "s3cret");

  const proto::RenderRequest request{7, 0.0175, 3501, 1};
  auto decoded = proto::DecodeRender(Payload(proto::EncodeRender(request)));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->index, 7u);
  EXPECT_EQ(decoded->scale, 0.0175);
  EXPECT_EQ(decoded->width, 3501u);

  DocumentInfo info;
  info.pages = {{612, 792, 0}, {842, 595, 90}};
  auto info_back = proto::DecodeInfo(Payload(proto::EncodeInfo(info)), 2);
  ASSERT_TRUE(info_back);
  ASSERT_EQ(info_back->page_count(), 2);
  EXPECT_EQ(info_back->pages[1].width_pt, 842);
  EXPECT_EQ(info_back->pages[1].rotation, 90);

  auto error = proto::DecodeError(
      Payload(proto::EncodeError({ErrorCode::kUnsupported, 3, "encrypted\nPDF"})));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, ErrorCode::kUnsupported);
  EXPECT_EQ(error->page, 3u);
  EXPECT_EQ(error->message, "encrypted PDF");  // control characters do not reach the terminal

  const std::string page = proto::EncodePageHeader({2, 10, 20, 1.5});
  ASSERT_EQ(page.size(), proto::kHeaderBytes + proto::kPageHeaderBytes);
  auto header = proto::ParseHeader(std::span<const uint8_t, proto::kHeaderBytes>(
      reinterpret_cast<const uint8_t*>(page.data()), proto::kHeaderBytes));
  ASSERT_TRUE(header);
  EXPECT_EQ(header->type, proto::MessageType::kPage);
  EXPECT_EQ(header->payload_bytes, proto::kPageHeaderBytes + 10u * 20u * 3u);
}

TEST(ProtocolTest, RejectsMalformedFrames) {
  auto parse = [](std::string frame) {
    frame.resize(proto::kHeaderBytes);
    return proto::ParseHeader(std::span<const uint8_t, proto::kHeaderBytes>(
        reinterpret_cast<const uint8_t*>(frame.data()), proto::kHeaderBytes));
  };
  const std::string good = proto::EncodeClose();
  EXPECT_TRUE(parse(good));
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_FALSE(parse(bad_magic));
  std::string bad_version = good;
  bad_version[4] = 2;
  EXPECT_FALSE(parse(bad_version));
  std::string bad_type = good;
  bad_type[6] = 0x7f;
  EXPECT_FALSE(parse(bad_type));

  // Payloads whose lengths disagree with their fields.
  std::string open = proto::EncodeOpen("abc");
  EXPECT_FALSE(proto::DecodeOpen(Payload(open).first(Payload(open).size() - 1)));
  EXPECT_FALSE(proto::DecodeOpen(Bytes(std::string("\xff\xff\xff\xff", 4))));
  const std::string render = proto::EncodeRender({1, 2.0, 3, 4});
  EXPECT_FALSE(proto::DecodeRender(Payload(render + "x")));
  EXPECT_FALSE(proto::DecodeRender(Payload(proto::EncodeRender({1, -1.0, 3, 4}))));
  EXPECT_FALSE(proto::DecodeRender(Payload(proto::EncodeRender({1, NAN, 3, 4}))));

  DocumentInfo info;
  info.pages = {{612, 792, 0}, {612, 792, 0}};
  const std::string info_frame = proto::EncodeInfo(info);
  EXPECT_FALSE(proto::DecodeInfo(Payload(info_frame), 1));  // more pages than allowed
  EXPECT_FALSE(proto::DecodeInfo(Payload(info_frame).first(Payload(info_frame).size() - 4), 2));
  info.pages[0].rotation = 45;
  EXPECT_FALSE(proto::DecodeInfo(Payload(proto::EncodeInfo(info)), 2));
  // A page count claiming billions of pages is refused before anything is allocated.
  EXPECT_FALSE(proto::DecodeInfo(Bytes(std::string("\xff\xff\xff\x7f", 4)), 10000));

  std::string error = proto::EncodeError({ErrorCode::kCorrupt, 0, "x"});
  error[proto::kHeaderBytes] = 99;  // unknown error code
  EXPECT_FALSE(proto::DecodeError(Payload(error)));
  EXPECT_FALSE(proto::DecodeError(Bytes("abc")));
}

}  // namespace
}  // namespace mineru::pdf
