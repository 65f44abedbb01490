// SPDX-License-Identifier: Apache-2.0
#include "service/http_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>

namespace mineru::service {
namespace {

// One recv reads at most this much.
constexpr size_t kReadChunkBytes = 64 * 1024;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void SetTimeout(int fd, int option, std::chrono::seconds timeout) {
  if (timeout.count() <= 0) return;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count());
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

}  // namespace

std::string HttpClientReply::Header(const std::string& lower_case_name) const {
  auto it = headers.find(lower_case_name);
  return it == headers.end() ? "" : it->second;
}

HttpClientConnection::HttpClientConnection(std::string host, std::string port,
                                           HttpClientOptions options)
    : host_(std::move(host)), port_(std::move(port)), options_(options) {}

HttpClientConnection::~HttpClientConnection() { Close(); }

Status HttpClientConnection::Connect() {
  Close();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found)) {
    return Fail(ErrorCode::kIo, "{}:{}: {}", host_, port_, gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, freeaddrinfo);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      connect_errno_ = errno;
      continue;
    }
    SetTimeout(fd, SO_RCVTIMEO, options_.receive_timeout);
    SetTimeout(fd, SO_SNDTIMEO, options_.send_timeout);
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      fd_ = fd;
      connect_errno_ = 0;
      return OkStatus();
    }
    connect_errno_ = errno;
    close(fd);
  }
  return Fail(ErrorCode::kIo, "cannot connect to {}:{}", host_, port_);
}

void HttpClientConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  buffer_.clear();
}

bool HttpClientConnection::Send(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool HttpClientConnection::Fill() {
  char chunk[kReadChunkBytes];
  const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
  if (n <= 0) return false;
  buffer_.append(chunk, static_cast<size_t>(n));
  // Written so that the default limit (the largest size_t) cannot overflow.
  return buffer_.size() <= options_.max_response_bytes ||
         buffer_.size() - options_.max_response_bytes <= kReadChunkBytes;
}

bool HttpClientConnection::ReadsEof() {
  char c;
  const ssize_t n = recv(fd_, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

bool HttpClientConnection::ReadUntil(std::string_view needle) {
  while (buffer_.find(needle) == std::string::npos) {
    if (!Fill()) return false;
  }
  return true;
}

bool HttpClientConnection::Need(size_t from, size_t n) {
  while (buffer_.size() < from + n) {
    if (!Fill()) return false;
  }
  return true;
}

Result<HttpClientReply> HttpClientConnection::ReadReply() {
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill()) return Fail(ErrorCode::kIo, "no response head");
  }
  HttpClientReply reply;
  reply.head = buffer_.substr(0, end);
  size_t at = end + 4;
  if (reply.head.size() < 12 || reply.head.compare(0, 5, "HTTP/") != 0) {
    return Fail(ErrorCode::kIo, "not an HTTP response");
  }
  reply.status = std::atoi(reply.head.c_str() + reply.head.find(' ') + 1);
  const size_t line_end = reply.head.find("\r\n");
  size_t pos = line_end == std::string::npos ? reply.head.size() : line_end + 2;
  while (pos < reply.head.size()) {
    size_t e = reply.head.find("\r\n", pos);
    if (e == std::string::npos) e = reply.head.size();
    const std::string line = reply.head.substr(pos, e - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      const size_t v = line.find_first_not_of(' ', colon + 1);
      reply.headers[Lower(line.substr(0, colon))] = v == std::string::npos ? "" : line.substr(v);
    }
    pos = e + 2;
  }
  std::optional<size_t> length;
  if (auto it = reply.headers.find("content-length"); it != reply.headers.end()) {
    length = std::strtoull(it->second.c_str(), nullptr, 10);
  }
  const bool chunked =
      Lower(reply.Header("transfer-encoding")).find("chunked") != std::string::npos;
  reply.closes = Lower(reply.Header("connection")).find("close") != std::string::npos;
  const size_t max = options_.max_response_bytes;
  if (chunked) {
    while (true) {
      size_t eol;
      while ((eol = buffer_.find("\r\n", at)) == std::string::npos) {
        if (!Fill()) return Fail(ErrorCode::kIo, "truncated chunked body");
      }
      const size_t size = std::strtoull(buffer_.c_str() + at, nullptr, 16);
      at = eol + 2;
      if (size > max - reply.body.size() || !Need(at, size + 2)) {
        return Fail(ErrorCode::kIo, "truncated or oversized chunked body");
      }
      reply.body.append(buffer_, at, size);
      at += size + 2;
      if (size == 0) break;  // (trailers are not expected from our server)
    }
  } else if (length) {
    if (*length > max || !Need(at, *length)) {
      return Fail(ErrorCode::kIo, "truncated or oversized body");
    }
    reply.body = buffer_.substr(at, *length);
    at += *length;
  } else {
    // No length: the body is everything until the server closes (event streams).
    while (Fill()) {
    }
    reply.body = buffer_.substr(at);
    at = buffer_.size();
    reply.closes = true;
  }
  buffer_.erase(0, at);
  return reply;
}

Result<HttpClientReply> HttpClientConnection::Request(std::string_view method,
                                                      std::string_view path,
                                                      std::string_view content_type,
                                                      std::string_view body) {
  std::string request = std::string(method) + " " + std::string(path) +
                        " HTTP/1.1\r\nHost: " + host_ + ":" + port_ + "\r\n";
  if (!content_type.empty()) request += "Content-Type: " + std::string(content_type) + "\r\n";
  if (method != "GET") request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n";
  // One send: a body sent after the head would wait for the server's delayed ACK of it
  // (Nagle), adding up to 40 ms to every request that a real client would not see.
  request += body;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = connected();
    if (!reused) MINERU_RETURN_IF_ERROR(Connect());
    if (Send(request)) {
      auto reply = ReadReply();
      if (reply) {
        if (reply->closes) Close();
        return reply;
      }
      if (!reused) return reply;
    } else if (!reused) {
      return Fail(ErrorCode::kIo, "sending to {}:{} failed", host_, port_);
    }
    Close();
  }
  return Fail(ErrorCode::kIo, "the connection to {}:{} failed", host_, port_);
}

}  // namespace mineru::service
