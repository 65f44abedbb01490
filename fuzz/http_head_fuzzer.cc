// SPDX-License-Identifier: Apache-2.0
// One request head read as a connection reads it (service/http_head.h ParseRequestHead: Beast's
// parser under the server's limits, header joining, the query split, the Transfer-Encoding
// rule), in memory and without sockets, so it runs thousands of times faster than the
// http_request target, which drives the whole server over loopback.
// Invariants: the head never claims more bytes than it was given; a refusal is one of the
// server's statuses (400, 413, 431, 501); an accepted head has a method, a Content-Length
// within the body limit, no CR or LF in any field (no header can be smuggled into another), a
// Transfer-Encoding only when its coding is chunked alone, and reading exactly its own bytes
// again gives the same head.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "service/http_head.h"

namespace {

using namespace mineru;
using service::internal::ParsedHead;
using service::internal::ParseRequestHead;

// Small limits, so that inputs of the fuzzer's usual size reach them.
service::ServerLimits Limits() {
  service::ServerLimits limits;
  limits.max_header_bytes = 2048;
  limits.max_body_bytes = 4096;
  return limits;
}

bool HasCrLf(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const service::ServerLimits limits = Limits();
  const std::string_view bytes = fuzz::AsText(data, size);
  const ParsedHead head = ParseRequestHead(bytes, limits);
  MINERU_CHECK(head.head_bytes <= bytes.size(), "{} of {}", head.head_bytes, bytes.size());
  if (!head.complete) return 0;
  MINERU_CHECK(head.status == 0 || head.status == 400 || head.status == 413 || head.status == 431 ||
                   head.status == 501,
               "status {}", head.status);
  if (head.status != 0) return 0;
  const service::HttpRequest& request = head.request;
  MINERU_CHECK(!request.method.empty());
  MINERU_CHECK(!HasCrLf(request.method) && !HasCrLf(request.target) && !HasCrLf(request.query));
  for (const auto& [name, value] : request.headers) {
    MINERU_CHECK(!name.empty() && !HasCrLf(name) && !HasCrLf(value), "{}", name);
  }
  if (head.content_length) MINERU_CHECK(*head.content_length <= limits.max_body_bytes);
  if (request.headers.count("Transfer-Encoding") != 0) MINERU_CHECK(head.chunked);

  const ParsedHead again = ParseRequestHead(bytes.substr(0, head.head_bytes), limits);
  MINERU_CHECK(again.complete && again.status == 0 && again.head_bytes == head.head_bytes);
  MINERU_CHECK(again.request.method == request.method && again.request.target == request.target &&
               again.request.query == request.query && again.request.headers == request.headers);
  MINERU_CHECK(again.content_length == head.content_length && again.chunked == head.chunked);
  return 0;
}
