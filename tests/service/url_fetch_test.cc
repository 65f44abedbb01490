// SPDX-License-Identifier: Apache-2.0
// FetchUrl against a local Python http.server (image_server.h): a 2xx body, statuses, the size
// limit at its boundary (announced by Content-Length or not), redirects (their count, and one
// to file://), schemes other than http(s), and the total timeout; and which targets it refuses:
// loopback in every spelling, non-public addresses, every redirect hop, with one error text for
// refused, closed, silent and open targets alike. The server listens on 127.0.0.1, so the tests
// that fetch from it allow private addresses (as --allow-private-remote-images does).
#include "service/url_fetch.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

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
  // Limits that reach the local server.
  static FetchLimits Local() {
    FetchLimits limits;
    limits.allow_private_addresses = true;
    return limits;
  }

  static inline ImageServer* server_ = nullptr;
};

TEST_F(UrlFetchTest, FetchesTheBodyOfA200) {
  auto body = FetchUrl(Url("/image.png"), Local());
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_EQ(*body, kPng);
}

TEST_F(UrlFetchTest, NotFoundIsAnErrorNamingTheStatus) {
  auto body = FetchUrl(Url("/missing"), Local());
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(body.error().message.find("404"), std::string::npos) << body.error().message;
}

TEST_F(UrlFetchTest, ExactlyMaxBytesIsAcceptedOneMoreIsRefused) {
  FetchLimits limits = Local();
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
  FetchLimits limits = Local();
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
  auto body = FetchUrl(Url("/to-file"), Local());
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
  FetchLimits limits = Local();
  limits.timeout = std::chrono::milliseconds(300);
  auto body = FetchUrl(Url("/hang"), limits);
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(body.error().message.find("300 ms"), std::string::npos) << body.error().message;
}

// What FetchUrl answers for every refused or unreachable target, after "<url>: ".
std::string Unreachable(const std::string& url, const FetchLimits& limits = {}) {
  return url + ": " + UnreachableText(limits.timeout);
}

// A port on 127.0.0.1 that nothing listens on (bound, then closed, by this process).
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// TV: the list of SSRF spellings. Before the address check every one of them that
// libcurl can parse fetched the local server's image.
TEST_F(UrlFetchTest, LoopbackIsRefusedInEverySpelling) {
  const std::string port = std::to_string(server_->port());
  const int received = server_->Received();
  ASSERT_GE(received, 0);
  for (const std::string host : {"127.0.0.1",
                                 "localhost",
                                 "LOCALHOST.",
                                 "0.0.0.0",
                                 "0",
                                 "2130706433",
                                 "0x7f000001",
                                 "0x7f.0.0.1",
                                 "0177.0.0.1",
                                 "017700000001",
                                 "127.1",
                                 "127.0.1",
                                 "127.8.9.10",
                                 "evil@127.0.0.1",
                                 "evil.com@127.0.0.1",
                                 "user:pass@localhost",
                                 "[::1]",
                                 "[::]",
                                 "[::ffff:127.0.0.1]",
                                 "[::ffff:7f00:1]",
                                 "[0:0:0:0:0:ffff:127.0.0.1]",
                                 "[::127.0.0.1]"}) {
    const std::string url = "http://" + host + ":" + port + "/image.png";
    auto body = FetchUrl(url, {});
    EXPECT_FALSE(body) << url << " was fetched";
    if (body) continue;
    EXPECT_EQ(body.error().code, ErrorCode::kUnavailable) << url;
    EXPECT_EQ(body.error().message, Unreachable(url)) << url;
  }
  EXPECT_EQ(server_->Received(), received) << "a refused target was connected to";
}

// Private, link-local (cloud metadata), carrier-grade NAT, unique-local, multicast and reserved
// targets: refused before any connection (before the check these waited for their connect
// timeout and then named curl's reason).
TEST_F(UrlFetchTest, NonPublicAddressesAreRefused) {
  for (const std::string host :
       {"10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "224.0.0.1",
        "255.255.255.255", "240.0.0.1", "[fe80::1]", "[fc00::1]", "[fd00:ec2::254]", "[ff02::1]",
        "[::ffff:10.0.0.1]", "[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]"}) {
    const std::string url = "http://" + host + "/latest/meta-data/";
    auto body = FetchUrl(url, {});
    EXPECT_FALSE(body) << url << " was fetched";
    if (body) continue;
    EXPECT_EQ(body.error().message, Unreachable(url)) << url;
  }
}

// One text for every target that is refused or cannot be reached: a refused open port, a
// refused closed port, an allowed closed port and an allowed silent one read alike (before,
// "Connection refused" named a closed port and a 404 or a timeout an open one).
TEST_F(UrlFetchTest, RefusedClosedAndSilentTargetsReadTheSame) {
  const int closed = ClosedPort();
  ASSERT_GT(closed, 0);
  const std::string open_url = Url("/missing");
  const std::string closed_url = "http://127.0.0.1:" + std::to_string(closed) + "/missing";
  FetchLimits refused;
  refused.timeout = std::chrono::milliseconds(2'000);
  FetchLimits allowed = refused;
  allowed.allow_private_addresses = true;
  allowed.timeout = refused.timeout;

  auto refused_open = FetchUrl(open_url, refused);
  auto refused_closed = FetchUrl(closed_url, refused);
  auto allowed_closed = FetchUrl(closed_url, allowed);
  FetchLimits silent = allowed;
  silent.timeout = std::chrono::milliseconds(300);
  auto allowed_silent = FetchUrl(Url("/hang"), silent);
  for (const auto* r : {&refused_open, &refused_closed, &allowed_closed, &allowed_silent}) {
    ASSERT_FALSE(*r);
    EXPECT_EQ(r->error().code, ErrorCode::kUnavailable) << r->error().message;
  }
  EXPECT_EQ(refused_open.error().message, Unreachable(open_url, refused));
  EXPECT_EQ(refused_closed.error().message, Unreachable(closed_url, refused));
  EXPECT_EQ(allowed_closed.error().message, Unreachable(closed_url, allowed));
  EXPECT_EQ(allowed_silent.error().message, Unreachable(Url("/hang"), silent));
  // An allowed server that answers is described: that is where the texts may differ.
  auto allowed_open = FetchUrl(open_url, allowed);
  ASSERT_FALSE(allowed_open);
  EXPECT_NE(allowed_open.error().message.find("HTTP 404"), std::string::npos);
}

// Redirects are followed here, each hop checked again: an allowed server's redirect to a
// refused one is not followed (libcurl's own following would have fetched it).
TEST_F(UrlFetchTest, EveryRedirectHopIsChecked) {
  ImageServer inner;
  ASSERT_TRUE(inner.Start(kPng));
  const int outer_port = server_->port();
  std::mutex mu;
  std::vector<FetchEndpoint> seen;
  FetchLimits only_outer;
  only_outer.allow_endpoint = [&](const FetchEndpoint& e) {
    std::lock_guard lock(mu);
    seen.push_back(e);
    return e.port == outer_port;
  };
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    const std::string target = "http://" + host + ":" + std::to_string(inner.port()) + "/image.png";
    const std::string url = Url("/redirect?to=" + target);
    auto body = FetchUrl(url, only_outer);
    ASSERT_FALSE(body) << url << " reached the inner server";
    EXPECT_EQ(body.error().message, Unreachable(url)) << url;
  }
  EXPECT_EQ(inner.Received(), 0);
  {
    // Checked were the resolved addresses ("localhost" is 127.0.0.1 or ::1), each hop's own.
    std::lock_guard lock(mu);
    bool inner_checked = false;
    for (const FetchEndpoint& e : seen) {
      EXPECT_TRUE(e.ip == "127.0.0.1" || e.ip == "::1") << e.ip;
      inner_checked = inner_checked || e.port == inner.port();
    }
    EXPECT_TRUE(inner_checked);
  }
  // The same redirect with both servers allowed is followed: the refusal above was the check's.
  FetchLimits both = Local();
  auto followed = FetchUrl(
      Url("/redirect?to=http://127.0.0.1:" + std::to_string(inner.port()) + "/image.png"), both);
  ASSERT_TRUE(followed) << followed.error().ToString();
  EXPECT_EQ(*followed, kPng);
  EXPECT_EQ(inner.Received(), 1);
}

TEST_F(UrlFetchTest, ErrorTextsQuoteALongUrlOnlyInPart) {
  const std::string url = "http://127.0.0.1/" + std::string(5000, 'a');
  auto body = FetchUrl(url, {});
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().message,
            url.substr(0, kMaxUrlInError) + "...: " + UnreachableText(FetchLimits{}.timeout));
}

}  // namespace
}  // namespace mineru::service
