// SPDX-License-Identifier: Apache-2.0
// Reading one request head with Boost.Beast under the server's limits: the parser's setup and
// what a connection takes from a parsed head (http_session.cc), and ParseRequestHead, the same
// steps on bytes in memory, for tests and the fuzz target of the request parser. Not an API.
#pragma once

#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "service/http_server.h"

namespace mineru::service::internal {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::buffer_body>;

// Sets a fresh parser's limits: the head at most limits.max_header_bytes (more: header_limit,
// 431), a body at most limits.max_body_bytes (a Content-Length over it: body_limit, 413, as soon
// as the head is read).
void ConfigureRequestParser(RequestParser& parser, const ServerLimits& limits);

// The method, the target split at the first '?' into target and query, and the fields of a
// parsed head (a field sent more than once joined with ", ", in the order sent).
void CopyRequestHead(const RequestParser& parser, HttpRequest& request);

struct ParsedHead {
  // The head was complete in the bytes given (else the server would wait for more).
  bool complete = false;
  // 0 when the head is complete and its framing acceptable; else the status the server
  // answers it with before any route: 400 (malformed, or a Transfer-Encoding whose last coding
  // is not chunked), 413 (Content-Length over max_body_bytes), 431 (head over
  // max_header_bytes), 501 (codings before chunked).
  int status = 0;
  // When complete and status is 0: method, target, query and headers (no body, no params).
  HttpRequest request;
  size_t head_bytes = 0;  // of the bytes given, those the head took (its body starts there)
  std::optional<uint64_t> content_length;
  bool chunked = false;
};

// One request head at the start of `bytes`, read as a connection of a server with `limits`
// reads it (ConfigureRequestParser, CopyRequestHead, then the Transfer-Encoding rule of
// ClassifyTransferEncoding). Never throws; linear in the bytes.
ParsedHead ParseRequestHead(std::string_view bytes, const ServerLimits& limits);

}  // namespace mineru::service::internal
