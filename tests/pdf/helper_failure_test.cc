// SPDX-License-Identifier: Apache-2.0
// The render helper misbehaving (through its test hook, MINERU_PDF_RENDER_TEST_FAULT): a crash,
// a hang, a CPU spin, a silent exit or garbage fails that document with an error naming the
// page, the helper is reaped, no descriptor leaks, and the next document renders. Also the
// helper's own input checks, driven with raw protocol frames, and SIGPIPE.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <string>
#include <vector>

#include "image/pdf/helper_process.h"
#include "image/pdf/pdf_document.h"
#include "image/pdf/protocol.h"
#include "pdf_test_util.h"

namespace mineru::pdf {
namespace {

using testing::kShapes;
using testing::ScopedEnv;
using testing::TestOptions;

namespace proto = protocol;

// The error RenderPage(page_index) gives with the helper told to misbehave as `fault`; checks
// that the document stays failed, that nothing is left behind and that the next document works.
Error FaultError(const std::string& fault, int page_index,
                 const RenderOptions& options = TestOptions()) {
  const int fds_before = testing::OpenDescriptorCount();
  Error error;
  {
    ScopedEnv env(testing::kFaultVar, fault);
    auto doc = PdfDocument::Open(kShapes, options);
    if (!doc) {
      error = doc.error();
    } else {
      for (int i = 0; i < page_index; ++i) {
        auto page = (*doc)->RenderPage(i);
        EXPECT_TRUE(page) << page.error().ToString();
      }
      auto failed = (*doc)->RenderPage(page_index);
      EXPECT_FALSE(failed) << fault;
      if (failed) return Error{};
      error = failed.error();
      // The document is over: every later call repeats the error without a helper.
      auto again = (*doc)->RenderPage(0);
      EXPECT_FALSE(again);
      if (!again) {
        EXPECT_EQ(again.error().message, error.message);
      }
    }
  }
  EXPECT_TRUE(testing::NoChildren()) << "a helper was left running or unreaped";
  EXPECT_EQ(testing::OpenDescriptorCount(), fds_before) << "descriptors leaked";
  // The caller carries on: the next document renders.
  auto next = PdfDocument::Open(kShapes, TestOptions());
  EXPECT_TRUE(next && (*next)->RenderPage(0)) << fault;
  return error;
}

void ExpectMentions(const Error& error, ErrorCode code, const std::vector<std::string>& needles) {
  EXPECT_EQ(error.code, code) << error.ToString();
  for (const std::string& needle : needles) {
    EXPECT_NE(error.message.find(needle), std::string::npos)
        << "'" << needle << "' not in: " << error.ToString();
  }
}

TEST(HelperFailureTest, CrashOnAPageFailsThatDocumentOnly) {
  ExpectMentions(FaultError("crash:2", 1), ErrorCode::kUnavailable,
                 {"shapes.pdf", "page 2", "render helper", "signal 11"});
}

TEST(HelperFailureTest, CrashWhileOpening) {
  ExpectMentions(FaultError("crash:0", 0), ErrorCode::kUnavailable,
                 {"shapes.pdf", "opening the document", "signal 11"});
}

TEST(HelperFailureTest, HangIsKilledAtTheWallClockTimeout) {
  RenderOptions options = TestOptions();
  options.limits.page_timeout_seconds = 0.3;
  ExpectMentions(FaultError("hang:3", 2, options), ErrorCode::kResourceExhausted,
                 {"page 3", "no reply", "--page-timeout", "killed"});
}

TEST(HelperFailureTest, CpuSpinIsStoppedByTheCpuLimit) {
  RenderOptions options = TestOptions();
  options.limits.page_cpu_seconds = 1;
  ExpectMentions(FaultError("spin:1", 0, options), ErrorCode::kResourceExhausted,
                 {"page 1", "--page-cpu-seconds"});
}

TEST(HelperFailureTest, SilentExit) {
  ExpectMentions(FaultError("exit:2", 1), ErrorCode::kUnavailable,
                 {"page 2", "exited with status 0"});
}

TEST(HelperFailureTest, GarbageInsteadOfAFrame) {
  ExpectMentions(FaultError("garbage:1", 0), ErrorCode::kUnavailable,
                 {"page 1", "malformed reply", "magic"});
}

TEST(HelperFailureTest, PageOfTheWrongSize) {
  ExpectMentions(FaultError("badsize:2", 1), ErrorCode::kUnavailable,
                 {"page 2", "malformed reply", "2339 x 1653"});
}

TEST(HelperFailureTest, MemoryLimitTooSmallForTheDocument) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a sanitizer build of the helper runs without an address-space limit";
#endif
  RenderOptions options = TestOptions();
  options.limits.helper_memory_bytes = 1 << 20;  // 1 MiB: less than the helper's own code
  auto doc = PdfDocument::Open(kShapes, options);
  ASSERT_FALSE(doc);
  ExpectMentions(doc.error(), ErrorCode::kResourceExhausted, {"shapes.pdf", "--helper-memory"});
  EXPECT_TRUE(testing::NoChildren());
}

TEST(HelperFailureTest, MissingHelperIsNamed) {
  RenderOptions options = TestOptions();
  options.helper_path = testing::TestDir() + "/no-such-helper";
  auto doc = PdfDocument::Open(kShapes, options);
  ASSERT_FALSE(doc);
  ExpectMentions(doc.error(), ErrorCode::kNotFound, {"no-such-helper", kHelperEnvVar});
  // Without a path the environment variable is used.
  options.helper_path.clear();
  ScopedEnv env(kHelperEnvVar, testing::kHelper);
  auto found = PdfDocument::Open(kShapes, options);
  EXPECT_TRUE(found) << found.error().ToString();
}

// A helper that is gone when the caller writes to it: an error, not a SIGPIPE that kills the
// caller (the default action, restored here in case the test runner ignores it).
TEST(HelperFailureTest, WritingToADeadHelperDoesNotRaiseSigpipe) {
  struct sigaction old_action {
  }, default_action{};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &default_action, &old_action);
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto helper = HelperProcess::Spawn("/bin/true", {}, fd);
  ::close(fd);
  ASSERT_TRUE(helper) << helper.error().ToString();
  const Deadline deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::array<uint8_t, 1> byte;
  EXPECT_EQ(helper->Receive(byte, deadline), TransferFailure::kClosed);
  const std::vector<uint8_t> big(1 << 20, 'x');
  EXPECT_EQ(helper->Send(big, deadline), TransferFailure::kClosed);
  EXPECT_EQ(helper->Stop().what, "exited with status 0");
  ::sigaction(SIGPIPE, &old_action, nullptr);
}

// The helper checks what the client asks, too: it is the one parsing hostile bytes and must
// not be steered into huge allocations or out-of-range pages by a confused client.
class RawHelper {
 public:
  explicit RawHelper(const std::vector<std::string>& args) {
    const int fd = ::open(kShapes.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    auto helper = HelperProcess::Spawn(testing::kHelper, args, fd);
    ::close(fd);
    EXPECT_TRUE(helper) << helper.error().ToString();
    if (helper) helper_ = std::move(*helper);
  }
  Deadline Soon() { return std::chrono::steady_clock::now() + std::chrono::seconds(60); }
  void Send(const std::string& frame) {
    EXPECT_EQ(helper_.Send({reinterpret_cast<const uint8_t*>(frame.data()), frame.size()}, Soon()),
              TransferFailure::kNone);
  }
  // The next frame: its header and payload.
  std::pair<proto::FrameHeader, std::vector<uint8_t>> Next() {
    std::array<uint8_t, proto::kHeaderBytes> bytes{};
    EXPECT_EQ(helper_.Receive(bytes, Soon()), TransferFailure::kNone);
    auto header = proto::ParseHeader(bytes);
    EXPECT_TRUE(header);
    std::vector<uint8_t> payload(header ? header->payload_bytes : 0);
    EXPECT_EQ(helper_.Receive(payload, Soon()), TransferFailure::kNone);
    return {header.value_or(proto::FrameHeader{}), payload};
  }
  // How the helper ends once its input is bad or closed.
  std::string End() {
    std::array<uint8_t, 1> byte;
    EXPECT_EQ(helper_.Receive(byte, Soon()), TransferFailure::kClosed);
    return helper_.Stop().what;
  }

 private:
  HelperProcess helper_;
};

TEST(HelperInputTest, RefusesPagesOverItsPixelLimit) {
  RawHelper helper({"--max-page-pixels", "100"});
  helper.Send(proto::EncodeOpen(""));
  auto [info_header, info_payload] = helper.Next();
  EXPECT_EQ(info_header.type, proto::MessageType::kInfo);
  helper.Send(proto::EncodeRender({0, 2.0, 11, 10}));
  auto [header, payload] = helper.Next();
  ASSERT_EQ(header.type, proto::MessageType::kError);
  auto error = proto::DecodeError(payload);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(error->page, 0u);
  // At the limit it renders.
  helper.Send(proto::EncodeRender({0, 0.1, 10, 10}));
  auto [page_header, page_payload] = helper.Next();
  EXPECT_EQ(page_header.type, proto::MessageType::kPage);
  EXPECT_EQ(page_payload.size(), proto::kPageHeaderBytes + 10u * 10u * 3u);
  helper.Send(proto::EncodeClose());
  EXPECT_EQ(helper.End(), "exited with status 0");
}

TEST(HelperInputTest, EndsOnProtocolViolations) {
  {
    RawHelper helper({});
    helper.Send("definitely not a frame header");
    EXPECT_EQ(helper.End(), "exited with status 3");
  }
  {
    RawHelper helper({});
    helper.Send(proto::EncodeOpen(""));
    helper.Next();
    helper.Send(proto::EncodeRender({3, 1.0, 10, 10}));  // shapes.pdf has pages 0-2
    EXPECT_EQ(helper.End(), "exited with status 3");
  }
  {
    RawHelper helper({});
    helper.Send(proto::EncodeRender({0, 1.0, 10, 10}));  // before kOpen
    EXPECT_EQ(helper.End(), "exited with status 3");
  }
  {
    RawHelper helper({"--max-pages", "zero"});
    EXPECT_EQ(helper.End(), "exited with status 2");
  }
}

}  // namespace
}  // namespace mineru::pdf
