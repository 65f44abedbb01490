// SPDX-License-Identifier: Apache-2.0
#include "http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace mineru::testing_support {

std::string HttpReply::Header(const std::string& lower_case_name) const {
  auto it = headers.find(lower_case_name);
  return it == headers.end() ? "" : it->second;
}

Client::Client(int port, std::chrono::seconds receive_timeout) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{static_cast<time_t>(receive_timeout.count()), 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  connect_errno_ = connected_ ? 0 : errno;
}

Client::~Client() { Close(); }

void Client::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool Client::Send(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool Client::Fill() {
  char tmp[65536];
  const ssize_t n = recv(fd_, tmp, sizeof(tmp), 0);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<size_t>(n));
  return true;
}

bool Client::ReadsEof() {
  char c;
  const ssize_t n = recv(fd_, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

std::optional<HttpReply> Client::ReadResponse() {
  size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill()) return std::nullopt;
  }
  HttpReply r;
  r.head = buf_.substr(0, end);
  buf_.erase(0, end + 4);
  const size_t line_end = r.head.find("\r\n");
  if (r.head.size() < 12) return std::nullopt;
  r.status = std::atoi(r.head.substr(9, 3).c_str());
  size_t pos = line_end == std::string::npos ? r.head.size() : line_end + 2;
  while (pos < r.head.size()) {
    size_t e = r.head.find("\r\n", pos);
    if (e == std::string::npos) e = r.head.size();
    const std::string line = r.head.substr(pos, e - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const size_t v = line.find_first_not_of(' ', colon + 1);
      r.headers[name] = v == std::string::npos ? "" : line.substr(v);
    }
    pos = e + 2;
  }
  if (auto it = r.headers.find("content-length"); it != r.headers.end()) {
    const size_t length = std::strtoull(it->second.c_str(), nullptr, 10);
    while (buf_.size() < length) {
      if (!Fill()) return std::nullopt;
    }
    r.body = buf_.substr(0, length);
    buf_.erase(0, length);
  } else {
    while (Fill()) {
    }
    r.body = std::move(buf_);
    buf_.clear();
  }
  return r;
}

bool Client::ReadUntil(std::string_view needle) {
  while (buf_.find(needle) == std::string::npos) {
    if (!Fill()) return false;
  }
  return true;
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
