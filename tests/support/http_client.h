// SPDX-License-Identifier: Apache-2.0
// A hand-written HTTP/1.1 client over POSIX sockets for the service tests (no Beast, no curl:
// the tests must be able to send malformed, partial and slow requests byte by byte).
//
//   Client c(port);
//   c.Send(PostRequest("/v1/chat/completions", body, "Content-Type: application/json\r\n"));
//   std::optional<HttpReply> r = c.ReadResponse();
//
//   auto r = Exchange(port, "GET", "/v1/models");  // one request on its own connection
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mineru::testing_support {

struct HttpReply {
  int status = 0;
  std::string head;                            // status line and header lines
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& lower_case_name) const;
};

// One TCP connection to 127.0.0.1:port. Reads time out after `receive_timeout` so that a hung
// server fails a test instead of hanging it.
class Client {
 public:
  explicit Client(int port, std::chrono::seconds receive_timeout = std::chrono::seconds(60));
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void Close();
  bool connected() const { return connected_; }
  int connect_errno() const { return connect_errno_; }

  // Writes all of `data`; false when the connection is gone.
  bool Send(std::string_view data);
  // Reads more bytes into buffer(); false on EOF, error or timeout.
  bool Fill();
  // True when the server closed the connection (EOF or reset) within the receive timeout.
  bool ReadsEof();
  // One response framed by Content-Length (no length: read to EOF, as for event streams).
  std::optional<HttpReply> ReadResponse();
  // Reads until `needle` has arrived (SSE); false on EOF or timeout.
  bool ReadUntil(std::string_view needle);
  std::string& buffer() { return buf_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  int connect_errno_ = 0;
  std::string buf_;
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
