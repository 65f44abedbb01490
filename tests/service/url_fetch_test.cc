// SPDX-License-Identifier: Apache-2.0
// FetchUrl against a local Python http.server (image_server.h): a 2xx body, statuses, the size
// limit at its boundary (announced by Content-Length or not), redirects (their count, and one
// to file://), schemes other than http(s), and the total timeout.
#include "service/url_fetch.h"

#include <gtest/gtest.h>

#include <string>

#include "image_server.h"

namespace mineru::service {
namespace {

using testing_support::ImageServer;

// Not a real PNG: FetchUrl does not look at the bytes.
const std::string kPng = std::string("\x89PNG\r\n\x1a\n", 8) + std::string(300, 'p');

class UrlFetchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ImageServer();
    ASSERT_TRUE(server_->Start(kPng)) << "could not start /usr/bin/python3 -m http.server";
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_GT(server_->port(), 0); }
  static std::string Url(const std::string& path) { return server_->Url(path); }

  static inline ImageServer* server_ = nullptr;
};

TEST_F(UrlFetchTest, FetchesTheBodyOfA200) {
  auto body = FetchUrl(Url("/image.png"), {});
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_EQ(*body, kPng);
}

TEST_F(UrlFetchTest, NotFoundIsAnErrorNamingTheStatus) {
  auto body = FetchUrl(Url("/missing"), {});
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(body.error().message.find("404"), std::string::npos) << body.error().message;
}

TEST_F(UrlFetchTest, ExactlyMaxBytesIsAcceptedOneMoreIsRefused) {
  FetchLimits limits;
  limits.max_bytes = 100'000;
  // Announced by Content-Length (refused before the body) and not announced (refused while
  // it arrives).
  for (const std::string kind : {"/big/", "/stream/"}) {
    auto exact = FetchUrl(Url(kind + "100000"), limits);
    ASSERT_TRUE(exact) << kind << ": " << exact.error().ToString();
    EXPECT_EQ(exact->size(), 100'000u) << kind;
    auto over = FetchUrl(Url(kind + "100001"), limits);
    ASSERT_FALSE(over) << kind;
    EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted) << kind;
    EXPECT_NE(over.error().message.find("100000"), std::string::npos) << over.error().message;
  }
  // Far larger than the limit: refused without holding it.
  auto huge = FetchUrl(Url("/stream/5000000"), limits);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, ErrorCode::kResourceExhausted);
}

TEST_F(UrlFetchTest, RedirectsAreFollowedUpToTheLimit) {
  FetchLimits limits;
  limits.max_redirects = 3;
  auto three = FetchUrl(Url("/hops/3"), limits);
  ASSERT_TRUE(three) << three.error().ToString();
  EXPECT_EQ(*three, kPng);
  auto four = FetchUrl(Url("/hops/4"), limits);
  ASSERT_FALSE(four);
  EXPECT_EQ(four.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(four.error().message.find("redirect"), std::string::npos) << four.error().message;
  limits.max_redirects = 0;
  EXPECT_FALSE(FetchUrl(Url("/hops/1"), limits));
  EXPECT_TRUE(FetchUrl(Url("/hops/0"), limits));
}

TEST_F(UrlFetchTest, RedirectToFileIsRefused) {
  auto body = FetchUrl(Url("/to-file"), {});
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(body.error().message.find("not http:// or https://"), std::string::npos)
      << body.error().message;
}

TEST_F(UrlFetchTest, OnlyHttpAndHttpsUrls) {
  EXPECT_TRUE(IsHttpUrl("http://a/b.png"));
  EXPECT_TRUE(IsHttpUrl("HTTPS://a/b.png"));
  for (const char* url : {"file:///etc/passwd", "ftp://127.0.0.1/x.png", "gopher://127.0.0.1/",
                          "data:image/png;base64,AAAA", "/etc/passwd", "", "http:/x"}) {
    EXPECT_FALSE(IsHttpUrl(url)) << url;
    auto body = FetchUrl(url, {});
    ASSERT_FALSE(body) << url;
    EXPECT_EQ(body.error().code, ErrorCode::kInvalidArgument) << url;
  }
}

TEST_F(UrlFetchTest, AServerThatNeverAnswersTimesOut) {
  FetchLimits limits;
  limits.timeout = std::chrono::milliseconds(300);
  auto body = FetchUrl(Url("/hang"), limits);
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(body.error().message.find("300 ms"), std::string::npos) << body.error().message;
}

}  // namespace
}  // namespace mineru::service
