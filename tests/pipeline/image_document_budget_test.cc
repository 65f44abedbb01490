// SPDX-License-Identifier: Apache-2.0
// An image document under the image budgets (DocumentOptions::image_budget): its decoded bytes
// at the request limit (exactly the limit parsed, one byte less refused before any decoding or
// model request), a file whose header declares more than the limit refused from the header
// alone (issue 14: before, such a file was decoded first, allocating what it declared), and the
// process budget of images in flight, which a document waits for (cancellable) and gives back.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "../support/scratch.h"
#include "base/byte_budget.h"
#include "image/decode.h"
#include "image/encode.h"
#include "image/image.h"
#include "pipeline/document.h"
#include "scripted_generator.h"

namespace mineru::pipeline {
namespace {

using testing::ScriptedCall;
using testing::ScriptedGenerator;
using testing_support::TestDir;

std::string WriteFile(const std::string& dir, const std::string& name,
                      const std::vector<uint8_t>& bytes) {
  const std::string path = dir + "/" + name;
  testing_support::WriteFile(path, std::string(bytes.begin(), bytes.end()));
  return path;
}

// A 400 x 300 white page: 360,000 bytes decoded.
std::string WritePage(const std::string& dir) {
  auto png = image::EncodePng(*image::MakeImage(400, 300, 255, 255, 255));
  EXPECT_TRUE(png);
  return WriteFile(dir, "page.png", *png);
}

ScriptedGenerator EmptyAnswers() {
  return ScriptedGenerator([](const ScriptedCall&) { return std::string(); });
}

TEST(ImageDocumentBudgetTest, DecodedBytesAtTheRequestLimit) {
  const std::string dir = TestDir();
  const std::string input = WritePage(dir);
  DocumentOptions options;
  options.image_budget.max_request_decoded_bytes = 360000;
  ScriptedGenerator accepted = EmptyAnswers();
  auto ok = ParseDocument(accepted, input, dir + "/out", options);
  ASSERT_TRUE(ok) << ok.error().ToString();
  options.image_budget.max_request_decoded_bytes = 359999;
  ScriptedGenerator refused = EmptyAnswers();
  auto over = ParseDocument(refused, input, dir + "/out2", options);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(over.error().message.find("--max-request-decoded-bytes"), std::string::npos)
      << over.error().message;
  EXPECT_TRUE(refused.calls().empty());  // no model request for a refused document
}

TEST(ImageDocumentBudgetTest, HeaderOverTheLimitIsRefusedBeforeDecoding) {
  // A JPEG of a few hundred bytes declaring 2000 x 2000 (12,000,000 bytes decoded): its data
  // ends long before that, so decoding it (what happened before the budget) allocated the
  // declared image and then failed as corrupt. Now the header alone refuses it with the limit.
  auto small = image::EncodeJpeg(*image::MakeImage(8, 8, 128, 128, 128));
  ASSERT_TRUE(small);
  std::vector<uint8_t> jpeg = *small;
  for (size_t i = 2; i + 8 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xff && jpeg[i + 1] == 0xc0) {
      jpeg[i + 5] = jpeg[i + 7] = 2000 >> 8;
      jpeg[i + 6] = jpeg[i + 8] = 2000 & 0xff;
      break;
    }
  }
  const std::string dir = TestDir();
  const std::string input = WriteFile(dir, "liar.jpg", jpeg);
  ByteBudget in_flight(image::kDefaultMaxImageBytesInFlight);
  DocumentOptions options;
  options.image_budget.max_request_decoded_bytes = 1 << 20;
  options.image_budget.in_flight = &in_flight;
  ScriptedGenerator generator = EmptyAnswers();
  auto refused = ParseDocument(generator, input, dir + "/out", options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted) << refused.error().ToString();
  EXPECT_NE(refused.error().message.find("12000000 bytes"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(in_flight.peak(), 0u);  // nothing was ever reserved, let alone decoded
}

TEST(ImageDocumentBudgetTest, BytesOfNoImageFormatKeepTheDecodersError) {
  // Read under the budget, a file that is no image still fails with the words of
  // image::DecodeImageFile, not the header probe's: the decoder is where a file is named by the
  // type its extension promises ("not a PNG file"), so the two must not drift apart.
  const std::string dir = TestDir();
  ByteBudget in_flight(image::kDefaultMaxImageBytesInFlight);
  DocumentOptions options;
  options.image_budget.in_flight = &in_flight;
  for (const char* name : {"fake.png", "empty.jpg"}) {
    SCOPED_TRACE(name);
    const std::string bytes = name[0] == 'f' ? "hello" : "";
    const std::string input = dir + "/" + name;
    testing_support::WriteFile(input, bytes);
    ScriptedGenerator generator = EmptyAnswers();
    auto refused = ParseDocument(generator, input, dir + "/out", options);
    ASSERT_FALSE(refused);
    auto decoder = image::DecodeImageFile(input, options.image_decode);
    ASSERT_FALSE(decoder);
    EXPECT_EQ(refused.error().code, decoder.error().code);
    EXPECT_EQ(refused.error().message, decoder.error().message);
    EXPECT_TRUE(generator.calls().empty());
  }
  EXPECT_EQ(in_flight.peak(), 0u);
}

TEST(ImageDocumentBudgetTest, WaitsForRoomInFlightAndCanBeCancelledWhileWaiting) {
  const std::string dir = TestDir();
  const std::string input = WritePage(dir);
  ByteBudget in_flight(image::kDefaultMaxImageBytesInFlight);
  DocumentOptions options;
  options.image_budget.in_flight = &in_flight;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  options.cancel = cancel;
  {
    // Chat requests hold the whole budget: the document waits, then is cancelled.
    auto others = in_flight.TryReserve(in_flight.capacity());
    ASSERT_TRUE(others);
    ScriptedGenerator generator = EmptyAnswers();
    Result<DocumentResult> result = Fail(ErrorCode::kInternal, "not run");
    std::thread parse([&] { result = ParseDocument(generator, input, dir + "/out", options); });
    while (in_flight.waiters() == 0) std::this_thread::yield();
    *cancel = true;
    parse.join();
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::kCancelled) << result.error().ToString();
    EXPECT_TRUE(generator.calls().empty());
  }
  // Room appears while it waits: it goes on, and gives everything back at the end.
  *cancel = false;
  auto others = in_flight.TryReserve(in_flight.capacity());
  ASSERT_TRUE(others);
  ScriptedGenerator generator = EmptyAnswers();
  Result<DocumentResult> result = Fail(ErrorCode::kInternal, "not run");
  std::thread parse([&] { result = ParseDocument(generator, input, dir + "/out2", options); });
  while (in_flight.waiters() == 0) std::this_thread::yield();
  const uint64_t peak_before = in_flight.peak();
  others.reset();
  parse.join();
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(in_flight.in_use(), 0u);
  EXPECT_EQ(peak_before, in_flight.capacity());
  EXPECT_FALSE(generator.calls().empty());
}

}  // namespace
}  // namespace mineru::pipeline
