// SPDX-License-Identifier: Apache-2.0
#include "http_client.h"

namespace mineru::testing_support {

Client::Client(int port, std::chrono::seconds receive_timeout)
    : HttpClientConnection("127.0.0.1", std::to_string(port),
                           {.receive_timeout = receive_timeout}) {
  (void)Connect();  // connected() and connect_errno() tell the test
}

std::optional<HttpReply> Client::ReadResponse() {
  auto reply = ReadReply();
  if (!reply) return std::nullopt;
  return std::move(*reply);
}

std::string GetRequest(std::string_view path, std::string_view extra_headers) {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
         std::string(extra_headers) + "\r\n";
}

std::string BodyRequest(std::string_view method, std::string_view path, std::string_view body,
                        std::string_view extra_headers) {
  return std::string(method) + " " + std::string(path) +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         std::string(extra_headers) + "\r\n" + std::string(body);
}

std::string PostRequest(std::string_view path, std::string_view body,
                        std::string_view extra_headers) {
  return BodyRequest("POST", path, body, extra_headers);
}

std::optional<HttpReply> Exchange(int port, const std::string& method, const std::string& path,
                                  const std::string& body, const std::string& content_type,
                                  const std::string& extra_headers) {
  Client c(port);
  if (!c.connected()) return std::nullopt;
  std::string headers = "Connection: close\r\n" + extra_headers;
  std::string request;
  if (method == "GET" || (method == "DELETE" && body.empty())) {
    request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
  } else {
    if (!content_type.empty()) headers += "Content-Type: " + content_type + "\r\n";
    request = BodyRequest(method, path, body, headers);
  }
  if (!c.Send(request)) return std::nullopt;
  return c.ReadResponse();
}

std::vector<std::string> SseData(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const size_t end = body.find('\n', pos);
    out.push_back(body.substr(pos + 6, end - pos - 6));
    pos = end;
  }
  return out;
}

std::string MultipartBody(const std::vector<FormPart>& parts, std::string* content_type) {
  const std::string boundary = "----mineru-test-boundary-7d1f0c";
  *content_type = "multipart/form-data; boundary=" + boundary;
  std::string body;
  for (const FormPart& part : parts) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + part.name + "\"";
    if (!part.filename.empty()) {
      body += "; filename=\"" + part.filename + "\"\r\nContent-Type: " +
              (part.content_type.empty() ? "application/octet-stream" : part.content_type);
    }
    body += "\r\n\r\n" + part.value + "\r\n";
  }
  body += "--" + boundary + "--\r\n";
  return body;
}

}  // namespace mineru::testing_support
