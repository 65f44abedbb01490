// SPDX-License-Identifier: Apache-2.0
// A small HTTP/1.1 client over POSIX sockets: one TCP connection, requests written as given,
// responses framed by Content-Length, by the chunked transfer coding, or by the end of the
// stream. `mineru-cpp bench-http` drives keep-alive load with it (requests need JSON and
// multipart bodies, so wrk and ab do not fit, and a load generator should add as little of its
// own cost as it can); the tests speak to the server through it, which is why the raw calls
// (Send, Fill, buffer) are public: they must be able to send malformed, partial and slow
// requests byte by byte. Not a general client: no TLS, no redirects, no proxies, no trailers.
//
//   HttpClientConnection c("127.0.0.1", "8000", {.receive_timeout = std::chrono::seconds(60)});
//   MINERU_ASSIGN_OR_RETURN(HttpClientReply r, c.Request("GET", "/health", "", ""));
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mineru::service {

struct HttpClientReply {
  int status = 0;
  std::string head;                            // status line and header lines
  std::map<std::string, std::string> headers;  // lower-case names; the last of repeated ones
  std::string body;                            // the chunked coding removed
  // The server ends the connection after this reply (Connection: close, or a body that ran to
  // the end of the stream).
  bool closes = false;
  std::string Header(const std::string& lower_case_name) const;
};

struct HttpClientOptions {
  // Every receive (SO_RCVTIMEO), so that a hung server fails the caller instead of hanging it.
  std::chrono::seconds receive_timeout{60};
  // Every send (SO_SNDTIMEO); zero: a send blocks until the server reads.
  std::chrono::seconds send_timeout{0};
  // Largest body accepted; a larger one fails the read rather than being buffered (the buffer
  // holds at most this plus one 64 KiB read).
  size_t max_response_bytes = std::numeric_limits<size_t>::max();
};

// One connection to host:port (a name or a numeric address, IPv4 or IPv6). Not thread-safe:
// one thread per connection.
class HttpClientConnection {
 public:
  HttpClientConnection(std::string host, std::string port, HttpClientOptions options = {});
  ~HttpClientConnection();
  HttpClientConnection(const HttpClientConnection&) = delete;
  HttpClientConnection& operator=(const HttpClientConnection&) = delete;

  // Resolves the host and connects to the first address that accepts (TCP_NODELAY: a request
  // written in one send is not held back by Nagle). kIo when none does; connect_errno() then
  // holds the last connect's errno.
  Status Connect();
  bool connected() const { return fd_ >= 0; }
  int connect_errno() const { return connect_errno_; }
  void Close();

  // Writes all of `data`; false when the connection is gone (or the send timed out).
  bool Send(std::string_view data);
  // Reads more bytes into buffer(); false on EOF, error, timeout, or a buffer past the limit.
  bool Fill();
  // True when the server closed the connection (EOF or reset) within the receive timeout.
  bool ReadsEof();
  // Reads until `needle` has arrived (an event stream); false on EOF or timeout.
  bool ReadUntil(std::string_view needle);
  // Bytes received and not yet consumed by ReadReply.
  std::string& buffer() { return buffer_; }

  // One response from the bytes received so far and more as needed; bytes after it stay in
  // buffer() (pipelined replies). The connection stays open even when the reply `closes`.
  // Errors: kIo for a response that is not HTTP, truncated or over max_response_bytes.
  Result<HttpClientReply> ReadReply();

  // One keep-alive exchange: connects when not connected, sends the request (Host, and
  // Content-Type when given, Content-Length for every method but GET) in one send, reads the
  // reply, and closes when the reply `closes`. A reused connection the server has closed
  // meanwhile fails at once: the request is tried once more on a fresh one.
  Result<HttpClientReply> Request(std::string_view method, std::string_view path,
                                  std::string_view content_type, std::string_view body);

 private:
  bool Need(size_t from, size_t n);

  std::string host_;
  std::string port_;
  HttpClientOptions options_;
  int fd_ = -1;
  int connect_errno_ = 0;
  std::string buffer_;
};

}  // namespace mineru::service
