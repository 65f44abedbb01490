// SPDX-License-Identifier: Apache-2.0
// The service tests' HTTP/1.1 client: the product's raw-socket connection (service/http_client.h;
// no Beast, no curl: the tests must be able to send malformed, partial and slow requests byte by
// byte) on 127.0.0.1, and the request and body builders the tests share.
//
//   Client c(port);
//   c.Send(PostRequest("/v1/chat/completions", body, "Content-Type: application/json\r\n"));
//   std::optional<HttpReply> r = c.ReadResponse();
//
//   auto r = Exchange(port, "GET", "/v1/models");  // one request on its own connection
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/http_client.h"

namespace mineru::testing_support {

using HttpReply = ::mineru::service::HttpClientReply;

// One TCP connection to 127.0.0.1:port, connected at construction (service/http_client.h; only
// the receive side times out, after `receive_timeout`, so that a hung server fails a test
// instead of hanging it). Responses without a length are read to EOF, as for event streams.
class Client : public ::mineru::service::HttpClientConnection {
 public:
  explicit Client(int port, std::chrono::seconds receive_timeout = std::chrono::seconds(60));

  // One response; nullopt when it did not arrive whole.
  std::optional<HttpReply> ReadResponse();
};

// "GET path HTTP/1.1" with Host and `extra_headers` (each ending in "\r\n").
std::string GetRequest(std::string_view path, std::string_view extra_headers = "");
// As GetRequest for any method, with a Content-Length body.
std::string BodyRequest(std::string_view method, std::string_view path, std::string_view body,
                        std::string_view extra_headers = "");
std::string PostRequest(std::string_view path, std::string_view body,
                        std::string_view extra_headers = "");

// One request with "Connection: close" on a fresh connection, read to EOF. A non-empty
// content_type is sent for requests with a body; nullopt when the exchange failed.
std::optional<HttpReply> Exchange(int port, const std::string& method, const std::string& path,
                                  const std::string& body = "",
                                  const std::string& content_type = "application/json",
                                  const std::string& extra_headers = "");

// The "data: " payloads of an event-stream body, in order.
std::vector<std::string> SseData(const std::string& body);

// A multipart/form-data body; returns the Content-Type header value in *content_type.
struct FormPart {
  // Default initialisers let {name, value} and {name, value, filename} stand for a part.
  std::string name = {};
  std::string value = {};
  std::string filename = {};      // non-empty: a file part
  std::string content_type = {};  // for file parts ("application/octet-stream" when empty)
};
std::string MultipartBody(const std::vector<FormPart>& parts, std::string* content_type);

}  // namespace mineru::testing_support
