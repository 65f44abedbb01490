// SPDX-License-Identifier: Apache-2.0
// The HTTP server's request reading and routing (service/http_server.h): Boost.Beast's parser
// under our limits, header joining, the query split, routing with {param} segments, 404/405,
// HEAD, keep-alive and pipelining, the refusals (400, 408, 413, 431) and SSE framing. One server
// on loopback serves the whole run; each input is written to a fresh connection as raw bytes
// (any number of pipelined requests), the client half-closes, and everything the server sends
// is read until it closes the connection.
// Invariants: the server answers or closes within kAnswerTimeout of the client's last byte (no
// request can hang a connection once its client is done), every answer starts with a status
// line, no answer is a 500 (the handlers here never fail, so a 500 is the server's own), an
// event stream holds only "data:", "event:" and comment lines whatever text its events carry
// (an SSE reader ends a line at CR, LF or CRLF), and a handler only sees targets that start with
// '/', bodies within the limit and non-empty parameters.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz/fuzz_util.h"
#include "service/http_server.h"

namespace {

using namespace mineru;
using service::HttpRequest;
using service::HttpResponse;

// Small limits, so that inputs of the fuzzer's usual size reach them.
constexpr size_t kMaxHeaderBytes = 2048;
constexpr size_t kMaxBodyBytes = 4096;
// Far above what a loopback answer takes; what is left of a request after the client's
// half-close can never make the server wait this long.
constexpr std::chrono::milliseconds kAnswerTimeout{10'000};

void CheckRequest(const HttpRequest& request) {
  MINERU_CHECK(!request.target.empty() && request.target.front() == '/', "{}", request.target);
  MINERU_CHECK(request.body.size() <= kMaxBodyBytes);
  for (const auto& [name, value] : request.params) MINERU_CHECK(!value.empty(), "{}", name);
}

// Echoes what the server made of the request, so that every part of it is touched.
HttpResponse Echo(const HttpRequest& request) {
  CheckRequest(request);
  std::string text = request.method + " " + request.target + "?" + request.query + "\n";
  for (const auto& [name, value] : request.params) text += name + "=" + value + "\n";
  for (const auto& [name, value] : request.headers) text += name + ": " + value + "\n";
  text += std::to_string(request.body.size());
  HttpResponse response = HttpResponse::Text(200, text);
  response.headers["X-Echo-Host"] = request.Header("host");
  return response;
}

// The body and the query as events (an event stream's framing of arbitrary text).
HttpResponse Events(const HttpRequest& request) {
  CheckRequest(request);
  const std::string query = request.query;
  const std::string body = request.body;
  return HttpResponse::EventStream([query, body](std::shared_ptr<service::SseWriter> writer) {
    writer->Send(query, body);
    writer->SendComment(query);
    writer->Close();
  });
}

class Server {
 public:
  Server() {
    server_.Route("GET", "/health/live", Echo);
    server_.Route("GET", "/v1/models", Echo);
    server_.Route("POST", "/v1/chat/completions", Echo);
    server_.Route("POST", "/tasks", Echo);
    server_.Route("GET", "/tasks/{id}", Echo);
    server_.Route("DELETE", "/tasks/{id}", Echo);
    server_.Route("GET", "/tasks/{id}/result/{name}", Echo);
    server_.Route("GET", "/tasks/{id}/events", Events);
    server_.Route("POST", "/events", Events);
    service::ServerOptions options;
    options.port = 0;
    options.io_threads = 1;
    options.handler_threads = 2;
    options.limits.max_header_bytes = kMaxHeaderBytes;
    options.limits.max_body_bytes = kMaxBodyBytes;
    options.limits.request_deadline = std::chrono::milliseconds(2000);
    options.limits.keep_alive_idle = std::chrono::milliseconds(2000);
    auto started = server_.Start(options);
    MINERU_CHECK(started.has_value(), "{}", started.error().ToString());
  }

  int port() const { return server_.port(); }

 private:
  service::HttpServer server_;
};

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  MINERU_CHECK(fd >= 0, "socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  MINERU_CHECK(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0,
               "connect failed");
  return fd;
}

// Everything the server sends until it closes; aborts when it neither sends nor closes.
std::string ReadAll(int fd) {
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
  char buffer[16384];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    MINERU_CHECK(left.count() > 0, "the server neither answered nor closed; so far: {}", answer);
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return answer;  // closed (or reset, after a refusal)
    answer.append(buffer, static_cast<size_t>(n));
  }
}

// The lines of an event stream's body as an SSE reader splits them (CR, LF or CRLF), each of
// which must be a field our writer meant to write.
void CheckEventStream(std::string_view answer) {
  // A stream ends its connection, so it is the last answer; no header value or echoed text
  // holds a CRLF, so this line can only be the stream's own header.
  const size_t type = answer.find("\r\nContent-Type: text/event-stream\r\n");
  if (type == std::string_view::npos) return;
  const size_t head_end = answer.find("\r\n\r\n", type);
  if (head_end == std::string_view::npos) return;
  std::string_view rest = answer.substr(head_end + 4);
  while (!rest.empty()) {
    const size_t end = rest.find_first_of("\r\n");
    const std::string_view line = rest.substr(0, end);
    MINERU_CHECK(line.empty() || line.starts_with("data: ") || line.starts_with("event: ") ||
                     line.starts_with(": "),
                 "an event stream line that is no field of ours: '{}'", line);
    if (end == std::string_view::npos) break;
    const size_t skip = rest.substr(end, 2) == "\r\n" ? 2 : 1;
    rest.remove_prefix(end + skip);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* server = new Server();  // lives for the whole run
  const int fd = Connect(server->port());
  // The server may refuse and close before everything is written (431, 413): a failed send is
  // part of the game, not an error of the target.
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  const std::string answer = ReadAll(fd);
  close(fd);
  MINERU_CHECK(answer.empty() || answer.starts_with("HTTP/1.1 "), "{}", answer.substr(0, 200));
  MINERU_CHECK(
      !answer.starts_with("HTTP/1.1 500") && answer.find("\nHTTP/1.1 500") == std::string::npos,
      "{}", answer);
  CheckEventStream(answer);
  return 0;
}
