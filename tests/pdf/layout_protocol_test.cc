// SPDX-License-Identifier: Apache-2.0
// The layout messages of the render helper's protocol and the plan's own checks: round trips,
// payloads whose lengths or values are wrong, and a helper driven with raw frames that end it
// when a client breaks the layout rules.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "image/pdf/helper_process.h"
#include "image/pdf/layout_plan.h"
#include "image/pdf/protocol.h"
#include "pdf_test_util.h"

namespace mineru::pdf {
namespace {

namespace proto = protocol;

std::span<const uint8_t> Payload(const std::string& frame) {
  return {reinterpret_cast<const uint8_t*>(frame.data()) + proto::kHeaderBytes,
          frame.size() - proto::kHeaderBytes};
}

proto::FrameHeader Header(const std::string& frame) {
  auto header = proto::ParseHeader(std::span<const uint8_t, proto::kHeaderBytes>(
      reinterpret_cast<const uint8_t*>(frame.data()), proto::kHeaderBytes));
  EXPECT_TRUE(header) << header.error().ToString();
  return header.value_or(proto::FrameHeader{});
}

LayoutPagePlan SamplePage() {
  LayoutPagePlan page;
  page.page_index = 7;
  page.boxes = {{{1.5, 2.25, 30, 40}, {153, 0, 76}, LayoutPaint::kFill},
                {{-5, 0, 1e6, 9}, {40, 169, 92}, LayoutPaint::kStroke}};
  page.numbers = {{{1.5, 2.25, 30, 40}, 1}, {{0, 0, 0, 0}, 4000000000u}};
  return page;
}

TEST(LayoutProtocolTest, LayoutPageRoundTrips) {
  const std::string frame = proto::EncodeLayoutPage({proto::kLayoutFirstPage, SamplePage()});
  const proto::FrameHeader header = Header(frame);
  EXPECT_EQ(header.type, proto::MessageType::kLayoutPage);
  EXPECT_EQ(header.payload_bytes, proto::kLayoutPageHeaderBytes + 2 * proto::kLayoutBoxBytes +
                                      2 * proto::kLayoutNumberBytes);
  EXPECT_EQ(header.payload_bytes, frame.size() - proto::kHeaderBytes);
  auto decoded = proto::DecodeLayoutPage(Payload(frame));
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->flags, proto::kLayoutFirstPage);
  EXPECT_EQ(decoded->page, SamplePage());
  // An empty page is a valid page.
  LayoutPagePlan empty;
  auto none = proto::DecodeLayoutPage(Payload(proto::EncodeLayoutPage({0, empty})));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->page, empty);
}

TEST(LayoutProtocolTest, LayoutDoneAndDataFrames) {
  const std::string done = proto::EncodeLayoutDone({3, proto::kLayoutNumbersSkipped});
  EXPECT_EQ(Header(done).type, proto::MessageType::kLayoutDone);
  auto decoded = proto::DecodeLayoutDone(Payload(done));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->page, 3u);
  EXPECT_EQ(decoded->flags, proto::kLayoutNumbersSkipped);
  EXPECT_FALSE(proto::DecodeLayoutDone(Payload(done + "x")));
  EXPECT_FALSE(proto::DecodeLayoutDone(Payload(done).first(7)));
  const std::string data = proto::EncodeLayoutDataHeader(12345);
  EXPECT_EQ(data.size(), proto::kHeaderBytes);
  EXPECT_EQ(Header(data).type, proto::MessageType::kLayoutData);
  EXPECT_EQ(Header(data).payload_bytes, 12345u);
  const std::string finish = proto::EncodeLayoutFinish();
  EXPECT_EQ(Header(finish).type, proto::MessageType::kLayoutFinish);
  EXPECT_EQ(Header(finish).payload_bytes, 0u);
  EXPECT_EQ(proto::MessageTypeName(proto::MessageType::kLayoutData), "layout data");
}

TEST(LayoutProtocolTest, RejectsMalformedLayoutPages) {
  const std::string frame = proto::EncodeLayoutPage({0, SamplePage()});
  const auto payload = Payload(frame);
  // Too short, too long.
  EXPECT_FALSE(proto::DecodeLayoutPage(payload.first(payload.size() - 1)));
  EXPECT_FALSE(proto::DecodeLayoutPage(Payload(frame + "x")));
  EXPECT_FALSE(proto::DecodeLayoutPage(payload.first(10)));
  // Counts over the bounds are refused before anything is allocated.
  std::string huge = frame;
  huge[proto::kHeaderBytes + 8] = '\xff';
  huge[proto::kHeaderBytes + 9] = '\xff';
  huge[proto::kHeaderBytes + 10] = '\xff';
  huge[proto::kHeaderBytes + 11] = '\xff';
  auto refused = proto::DecodeLayoutPage(Payload(huge));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kCorrupt);
  // Values that the plan's checks refuse: not finite, unordered, an unknown paint.
  for (int bad = 0; bad < 3; ++bad) {
    LayoutPagePlan page = SamplePage();
    if (bad == 0) page.boxes[0].rect[1] = NAN;
    if (bad == 1) page.numbers[0].rect = {5, 0, 1, 1};
    if (bad == 2) page.boxes[1].paint = static_cast<LayoutPaint>(7);
    auto decoded = proto::DecodeLayoutPage(Payload(proto::EncodeLayoutPage({0, page})));
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error().code, ErrorCode::kCorrupt) << bad;
  }
  EXPECT_EQ(proto::MaxLayoutPagePayload(),
            16u + 36u * kMaxLayoutBoxesPerPage + 36u * kMaxLayoutNumbersPerPage);
}

TEST(LayoutPlanCheckTest, ValidatesPagesAndBounds) {
  LayoutPlan plan;
  EXPECT_FALSE(ValidateLayoutPlan(plan, 3));
  plan.pages = {SamplePage()};
  EXPECT_TRUE(ValidateLayoutPlan(plan, 8));
  EXPECT_TRUE(ValidateLayoutPlan(plan, -1));
  auto outside = ValidateLayoutPlan(plan, 7);
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(outside.error().message.find("page index 7"), std::string::npos);
  plan.pages[0].page_index = -1;
  EXPECT_FALSE(ValidateLayoutPlan(plan, 8));
  plan.pages[0] = SamplePage();
  plan.pages[0].boxes[0].rect[2] = kMaxLayoutCoordinate;
  EXPECT_TRUE(ValidateLayoutPlan(plan, 8));
  plan.pages[0].boxes[0].rect[2] = std::nextafter(kMaxLayoutCoordinate, INFINITY);
  EXPECT_FALSE(ValidateLayoutPlan(plan, 8));
  plan.pages[0] = SamplePage();
  plan.pages[0].numbers.resize(kMaxLayoutNumbersPerPage + 1);
  auto too_many = ValidateLayoutPlan(plan, 8);
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().code, ErrorCode::kResourceExhausted);
  plan.pages[0].numbers.resize(kMaxLayoutNumbersPerPage);
  EXPECT_TRUE(ValidateLayoutPlan(plan, 8));
}

// The helper on shapes.pdf, driven with raw frames.
class RawHelper {
 public:
  RawHelper() {
    const int fd = ::open(testing::kShapes.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    auto helper = HelperProcess::Spawn(testing::kHelper, {}, fd);
    ::close(fd);
    EXPECT_TRUE(helper) << helper.error().ToString();
    if (helper) helper_ = std::move(*helper);
    Send(proto::EncodeOpen(""));
    EXPECT_EQ(Next().type, proto::MessageType::kInfo);
  }
  Deadline Soon() { return std::chrono::steady_clock::now() + std::chrono::seconds(60); }
  void Send(const std::string& frame) {
    EXPECT_EQ(helper_.Send({reinterpret_cast<const uint8_t*>(frame.data()), frame.size()}, Soon()),
              TransferFailure::kNone);
  }
  // The next frame's header; its payload is read and dropped.
  proto::FrameHeader Next() {
    std::array<uint8_t, proto::kHeaderBytes> bytes{};
    EXPECT_EQ(helper_.Receive(bytes, Soon()), TransferFailure::kNone);
    auto header = proto::ParseHeader(bytes);
    EXPECT_TRUE(header);
    std::vector<uint8_t> payload(header ? header->payload_bytes : 0);
    EXPECT_EQ(helper_.Receive(payload, Soon()), TransferFailure::kNone);
    return header.value_or(proto::FrameHeader{});
  }
  // The first frame that is not layout data.
  proto::FrameHeader NextAfterData() {
    proto::FrameHeader header = Next();
    while (header.type == proto::MessageType::kLayoutData) header = Next();
    return header;
  }
  std::string End() {
    std::array<uint8_t, 1> byte;
    EXPECT_EQ(helper_.Receive(byte, Soon()), TransferFailure::kClosed);
    return helper_.Stop().what;
  }

 private:
  HelperProcess helper_;
};

TEST(LayoutHelperInputTest, EndsWhenAClientBreaksTheLayoutRules) {
  LayoutPagePlan page;
  {
    RawHelper helper;  // finish with nothing started
    helper.Send(proto::EncodeLayoutFinish());
    EXPECT_EQ(helper.End(), "exited with status 3");
  }
  {
    RawHelper helper;  // a page the document does not have
    page.page_index = 3;
    helper.Send(proto::EncodeLayoutPage({proto::kLayoutFirstPage, page}));
    EXPECT_EQ(helper.End(), "exited with status 3");
  }
  {
    RawHelper helper;  // a payload past the bound
    std::string frame;
    proto::AppendHeader(&frame, proto::MessageType::kLayoutPage, proto::MaxLayoutPagePayload() + 1);
    helper.Send(frame);
    EXPECT_EQ(helper.End(), "exited with status 3");
  }
}

TEST(LayoutHelperInputTest, ContinuingWithoutAStartIsAnErrorNotAnEnd) {
  RawHelper helper;
  LayoutPagePlan page;
  helper.Send(proto::EncodeLayoutPage({0, page}));  // no kLayoutFirstPage yet
  EXPECT_EQ(helper.Next().type, proto::MessageType::kError);
  // Then a proper layout PDF, and a render afterwards.
  helper.Send(proto::EncodeLayoutPage({proto::kLayoutFirstPage, page}));
  EXPECT_EQ(helper.NextAfterData().type, proto::MessageType::kLayoutDone);
  helper.Send(proto::EncodeLayoutFinish());
  EXPECT_EQ(helper.NextAfterData().type, proto::MessageType::kLayoutDone);
  helper.Send(proto::EncodeRender({0, 0.1, 62, 80}));
  EXPECT_EQ(helper.Next().type, proto::MessageType::kPage);
  // A finished layout PDF cannot be finished again.
  helper.Send(proto::EncodeLayoutFinish());
  EXPECT_EQ(helper.End(), "exited with status 3");
}

}  // namespace
}  // namespace mineru::pdf
