// SPDX-License-Identifier: Apache-2.0
#include "service/http_head.h"

#include <boost/asio/buffer.hpp>
#include <string>

#include "service/http_checks.h"

namespace mineru::service::internal {

namespace http = boost::beast::http;

void ConfigureRequestParser(RequestParser& parser, const ServerLimits& limits) {
  parser.header_limit(static_cast<uint32_t>(limits.max_header_bytes));
  parser.body_limit(static_cast<uint64_t>(limits.max_body_bytes));
}

void CopyRequestHead(const RequestParser& parser, HttpRequest& request) {
  const auto& msg = parser.get();
  request.method = std::string(msg.method_string());
  const std::string_view target(msg.target().data(), msg.target().size());
  const size_t q = target.find('?');
  request.target = std::string(target.substr(0, q));
  if (q != std::string_view::npos) request.query = std::string(target.substr(q + 1));
  for (const auto& field : msg) {
    std::string name(field.name_string());
    std::string value(field.value());
    auto [it, inserted] = request.headers.emplace(name, value);
    if (!inserted) it->second += ", " + value;
  }
}

ParsedHead ParseRequestHead(std::string_view bytes, const ServerLimits& limits) {
  ParsedHead head;
  try {
    RequestParser parser;
    ConfigureRequestParser(parser, limits);
    boost::beast::error_code ec;
    // Not eager: put stops once the head is parsed, as async_read_header does.
    head.head_bytes = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec == http::error::need_more) return head;  // incomplete: the server would wait
    head.complete = true;
    if (ec == http::error::header_limit) {
      head.status = 431;
    } else if (ec == http::error::body_limit) {
      head.status = 413;
    } else if (ec || !parser.is_header_done()) {
      head.status = 400;
    }
    if (head.status != 0) return head;
    CopyRequestHead(parser, head.request);
    if (const auto length = parser.content_length()) head.content_length = *length;
    head.chunked = parser.chunked();
    const auto te = head.request.headers.find("Transfer-Encoding");
    switch (ClassifyTransferEncoding(te == head.request.headers.end()
                                         ? std::nullopt
                                         : std::optional<std::string_view>(te->second))) {
      case TransferCoding::kNone:
      case TransferCoding::kChunked:
        break;
      case TransferCoding::kUnsupported:
        head.status = 501;
        break;
      case TransferCoding::kUnframed:
        head.status = 400;
        break;
    }
  } catch (...) {  // allocation failure: refused as the server refuses what it cannot read
    head.complete = true;
    head.status = 400;
  }
  return head;
}

}  // namespace mineru::service::internal
