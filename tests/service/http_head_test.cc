// SPDX-License-Identifier: Apache-2.0
// ParseRequestHead (http_head.h): a request head read from memory as a connection reads it, the
// entry point of the request parser's fuzz target. Its answers must be the server's own (the
// socket tests in http_edges_test.cc and http_server_test.cc check those on the wire).
#include "service/http_head.h"

#include <gtest/gtest.h>

#include <string>

namespace mineru::service::internal {
namespace {

ServerLimits SmallLimits() {
  ServerLimits limits;
  limits.max_header_bytes = 256;
  limits.max_body_bytes = 100;
  return limits;
}

TEST(HttpHeadTest, ReadsTheHeadAsTheServerDoes) {
  const std::string head =
      "POST /v1/jobs/7?x=1&y HTTP/1.1\r\nHost: test\r\nAccept: a\r\naccept: b\r\n"
      "Content-Length: 5\r\n\r\n";
  const ParsedHead parsed = ParseRequestHead(head + "hello", SmallLimits());
  ASSERT_TRUE(parsed.complete);
  EXPECT_EQ(parsed.status, 0);
  EXPECT_EQ(parsed.head_bytes, head.size());
  EXPECT_EQ(parsed.request.method, "POST");
  EXPECT_EQ(parsed.request.target, "/v1/jobs/7");
  EXPECT_EQ(parsed.request.query, "x=1&y");
  EXPECT_EQ(parsed.request.Header("ACCEPT"), "a, b");
  EXPECT_EQ(parsed.content_length, 5u);
  EXPECT_FALSE(parsed.chunked);
  EXPECT_TRUE(parsed.request.body.empty());
}

TEST(HttpHeadTest, IncompleteHeadsWaitForMore) {
  for (const std::string bytes : {"", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: a\r\n"}) {
    const ParsedHead parsed = ParseRequestHead(bytes, SmallLimits());
    EXPECT_FALSE(parsed.complete) << bytes;
    EXPECT_EQ(parsed.status, 0) << bytes;
  }
}

// The refusals a head gets before any route, with the statuses of the wire tests
// (HeaderLimitIs431, BodyLimitExactlyAcceptedOneMoreIs413,
// TransferEncodingOtherThanChunkedIsRefusedAndClosed).
TEST(HttpHeadTest, RefusalsAreTheServersStatuses) {
  const auto status = [](const std::string& bytes) {
    const ParsedHead parsed = ParseRequestHead(bytes, SmallLimits());
    EXPECT_TRUE(parsed.complete) << bytes;
    return parsed.status;
  };
  EXPECT_EQ(status("GET / HTTP/1.1\r\nX: " + std::string(300, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n"), 0);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n"), 413);
  EXPECT_EQ(status("GET /\x01 HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 0);
  for (const char* coding : {"gzip", "xchunked", "identity", "chunked, gzip"}) {
    EXPECT_EQ(status(std::string("POST / HTTP/1.1\r\nTransfer-Encoding: ") + coding + "\r\n\r\n"),
              400)
        << coding;
  }
  EXPECT_EQ(status("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501);
}

}  // namespace
}  // namespace mineru::service::internal
