// SPDX-License-Identifier: Apache-2.0
// Who may talk to the server, against a raw POSIX-socket client: the API key
// (ServerOptions::api_key: Bearer on every route but the public ones, 401 in OpenAI's shape
// before the body is read) and the cross-site rule (check_cross_site, allowed_origins: Host
// and Origin, as a DNS-rebinding page and a cross-site form would send them), plus the
// Beast-free pieces of both (http_checks.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>

#include "../support/http_client.h"
#include "base/json.h"
#include "service/http_checks.h"
#include "service/http_server.h"

namespace mineru::service {
namespace {

using testing_support::Client;
using testing_support::Exchange;
using testing_support::GetRequest;
using testing_support::PostRequest;

constexpr char kKey[] = "sk-test-0123456789";

class HttpTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.port = 0;
    server_.Route(
        "GET", "/health/live",
        [](const HttpRequest&) { return HttpResponse::Json(200, R"({"status":"ok"})"); },
        RouteTraits{.on_io_thread = true, .public_access = true});
    server_.Route("GET", "/data",
                  [](const HttpRequest&) { return HttpResponse::Text(200, "secret"); });
    server_.Route("POST", "/submit", [this](const HttpRequest& r) {
      ++submitted_;
      return HttpResponse::Json(202, "{\"bytes\":" + std::to_string(r.body.size()) + "}");
    });
  }
  void StartServer() {
    auto status = server_.Start(options_);
    ASSERT_TRUE(status) << status.error().ToString();
  }
  void TearDown() override { server_.Stop(std::chrono::milliseconds(2000)); }

  std::optional<testing_support::HttpReply> Get(const std::string& path,
                                                const std::string& headers = "") {
    return Exchange(server_.port(), "GET", path, "", "", headers);
  }

  ServerOptions options_;
  HttpServer server_;
  std::atomic<int> submitted_{0};
};

// Issue 14: there was no API key option. With --api-key, every route but the public probes
// needs "Authorization: Bearer <key>"; a missing or wrong key is 401 authentication_error (with
// WWW-Authenticate), decided before the body is read, so an unauthenticated client cannot make
// the server buffer a body.
TEST_F(HttpTrustTest, ApiKeyIsRequiredExceptOnPublicRoutes) {
  options_.api_key = kKey;
  StartServer();
  const std::string bearer = std::string("Authorization: Bearer ") + kKey + "\r\n";
  auto missing = Get("/data");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(missing->Header("www-authenticate"), "Bearer");
  auto json = ParseJson(missing->body, "error");
  ASSERT_TRUE(json) << missing->body;
  EXPECT_EQ((*json)["object"], "error");
  EXPECT_EQ((*json)["error"]["type"], "authentication_error");
  EXPECT_EQ(missing->body.find("secret"), std::string::npos);
  for (const std::string& wrong :
       {std::string("Authorization: Bearer sk-test-012345678\r\n"),  // one byte short
        std::string("Authorization: Bearer sk-test-0123456789x\r\n"),
        std::string("Authorization: Basic ") + kKey + "\r\n",  // another scheme
        std::string("Authorization: Bearer\r\n"), std::string("X-Api-Key: ") + kKey + "\r\n"}) {
    auto r = Get("/data", wrong);
    ASSERT_TRUE(r) << wrong;
    EXPECT_EQ(r->status, 401) << wrong;
  }
  auto ok = Get("/data", bearer);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "secret");
  auto lower = Get("/data", std::string("authorization: bearer ") + kKey + "\r\n");
  ASSERT_TRUE(lower);
  EXPECT_EQ(lower->status, 200) << "the scheme is case-insensitive";
  // Public routes need no key; unknown routes are not public.
  auto live = Get("/health/live");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  auto unknown = Get("/nope");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 401);
  // A body behind a missing key is never read: the answer comes without it and the
  // connection closes.
  Client c(server_.port());
  ASSERT_TRUE(
      c.Send("POST /submit HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000\r\n\r\npartial"));
  auto refused = c.ReadResponse();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->Header("connection"), "close");
  EXPECT_EQ(submitted_.load(), 0);
  auto submitted = Exchange(server_.port(), "POST", "/submit", "abc", "text/plain", bearer);
  ASSERT_TRUE(submitted);
  EXPECT_EQ(submitted->status, 202);
}

// Issue 14: any Host was accepted and a cross-site form POST from any web page got 202. On a
// loopback server the Host must name it (an IP literal, localhost, or a listed origin's host:
// a DNS-rebinding page sends its own name), and an Origin must be the request's own or listed.
TEST_F(HttpTrustTest, CrossSiteRequestsAreRefused) {
  options_.check_cross_site = true;
  options_.allowed_origins = {"https://app.example.com"};
  StartServer();
  const std::string port = std::to_string(server_.port());
  const auto request = [&](const std::string& host, const std::string& origin) {
    Client c(server_.port());
    std::string headers = "Host: " + host + "\r\nConnection: close\r\n";
    if (!origin.empty()) headers += "Origin: " + origin + "\r\n";
    std::string body = "title=x";
    c.Send("POST /submit HTTP/1.1\r\n" + headers +
           "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body);
    return c.ReadResponse();
  };
  // DNS rebinding: a page of attacker.example whose name now resolves to 127.0.0.1.
  auto rebound = request("attacker.example:" + port, "http://attacker.example:" + port);
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403) << rebound->body;
  Client reader(server_.port());
  ASSERT_TRUE(reader.Send("GET /data HTTP/1.1\r\nHost: attacker.example:" + port + "\r\n\r\n"));
  auto rebound_get = reader.ReadResponse();
  ASSERT_TRUE(rebound_get);
  EXPECT_EQ(rebound_get->status, 403);
  EXPECT_EQ(rebound_get->body.find("secret"), std::string::npos);
  // A form on another site posting to this server.
  auto form = request("127.0.0.1:" + port, "https://evil.example");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 403);
  auto null_origin = request("127.0.0.1:" + port, "null");
  ASSERT_TRUE(null_origin);
  EXPECT_EQ(null_origin->status, 403);
  EXPECT_EQ(submitted_.load(), 0);

  // Same origin (the web UI), names of this machine, and a listed origin are served.
  for (const auto& [host, origin] : std::vector<std::pair<std::string, std::string>>{
           {"127.0.0.1:" + port, "http://127.0.0.1:" + port},
           {"localhost:" + port, "http://localhost:" + port},
           {"[::1]:" + port, ""},
           {"127.0.0.1:" + port, ""},
           {"app.example.com", "https://app.example.com"},
           {"127.0.0.1:" + port, "https://app.example.com"}}) {
    auto r = request(host, origin);
    ASSERT_TRUE(r) << host << " " << origin;
    EXPECT_EQ(r->status, 202) << host << " " << origin << ": " << r->body;
    if (origin == "https://app.example.com") {
      EXPECT_EQ(r->Header("access-control-allow-origin"), origin);
    } else {
      EXPECT_EQ(r->Header("access-control-allow-origin"), "");
    }
  }
  EXPECT_EQ(submitted_.load(), 6);

  // The listed origin's CORS preflight is answered (without a key, as browsers send it).
  Client preflight(server_.port());
  ASSERT_TRUE(preflight.Send(
      "OPTIONS /submit HTTP/1.1\r\nHost: 127.0.0.1:" + port +
      "\r\nOrigin: https://app.example.com\r\nAccess-Control-Request-Method: POST\r\n"
      "Access-Control-Request-Headers: authorization, content-type\r\n\r\n"));
  auto answer = preflight.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 204);
  EXPECT_EQ(answer->Header("access-control-allow-origin"), "https://app.example.com");
  EXPECT_NE(answer->Header("access-control-allow-headers").find("Authorization"),
            std::string::npos);
}

TEST(HttpChecksTest, TransferEncodingClassification) {
  using internal::ClassifyTransferEncoding;
  using internal::TransferCoding;
  EXPECT_EQ(ClassifyTransferEncoding(std::nullopt), TransferCoding::kNone);
  EXPECT_EQ(ClassifyTransferEncoding("chunked"), TransferCoding::kChunked);
  EXPECT_EQ(ClassifyTransferEncoding(" CHUNKED "), TransferCoding::kChunked);
  EXPECT_EQ(ClassifyTransferEncoding("gzip, chunked"), TransferCoding::kUnsupported);
  EXPECT_EQ(ClassifyTransferEncoding("chunked, gzip"), TransferCoding::kUnframed);
  EXPECT_EQ(ClassifyTransferEncoding("gzip"), TransferCoding::kUnframed);
  EXPECT_EQ(ClassifyTransferEncoding(""), TransferCoding::kUnframed);
  EXPECT_EQ(ClassifyTransferEncoding("chunked,"), TransferCoding::kUnframed);
}

TEST(HttpChecksTest, KeysAndHosts) {
  EXPECT_TRUE(internal::ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(internal::ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(internal::ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(internal::ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(internal::ConstantTimeEquals("", "abc"));
  EXPECT_TRUE(internal::ConstantTimeEquals("", ""));
  EXPECT_EQ(internal::BearerToken("Bearer  k1 "), "k1");
  EXPECT_EQ(internal::BearerToken("bearer k1"), "k1");
  EXPECT_FALSE(internal::BearerToken("Bearerk1"));
  EXPECT_FALSE(internal::BearerToken("Bearer "));
  EXPECT_FALSE(internal::BearerToken("Basic k1"));
  EXPECT_EQ(internal::HostName("[::1]:8000"), "::1");
  EXPECT_EQ(internal::HostName("LocalHost:8000"), "localhost");
  EXPECT_EQ(internal::HostName("::"), "::");
  EXPECT_EQ(internal::HostName("[::1"), "");
  EXPECT_TRUE(internal::IsIpLiteral("10.0.0.1"));
  EXPECT_FALSE(internal::IsIpLiteral("2130706433"));  // a decimal address is a name here
  // A server bound to a public address answers any Host (it is reached by name); the Origin
  // rule holds for every bind.
  internal::OriginPolicy open("0.0.0.0", {});
  EXPECT_EQ(open.Check("mineru.internal:8000", std::nullopt), "");
  EXPECT_EQ(open.Check("mineru.internal:8000", "http://mineru.internal:8000"), "");
  EXPECT_NE(open.Check("mineru.internal:8000", "http://other.internal"), "");
  internal::OriginPolicy any("127.0.0.1", {"*"});
  EXPECT_EQ(any.Check("anything", "http://elsewhere"), "");
  internal::OriginPolicy loopback("localhost", {"http://ui.example:3000/"});
  EXPECT_EQ(loopback.Check("ui.example", std::nullopt), "");
  EXPECT_EQ(loopback.Check("x.localhost:8000", std::nullopt), "");
  EXPECT_NE(loopback.Check("example", std::nullopt), "");
  EXPECT_TRUE(loopback.Listed("HTTP://UI.EXAMPLE:3000"));
  EXPECT_FALSE(loopback.Listed("http://ui.example"));
  EXPECT_EQ(loopback.Check("127.0.0.1:80", "http://127.0.0.1"), "") << "default port";
}

}  // namespace
}  // namespace mineru::service
