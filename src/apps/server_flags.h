// SPDX-License-Identifier: Apache-2.0
// Command-line flags of `mineru-cpp serve` for every HTTP server setting
// (service::ServerOptions, service::ServerLimits) and every OpenAI API limit
// (service::OpenAiOptions); docs/LIMITS.md lists them with what happens at each limit.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "image/decode.h"
#include "service/http_server.h"
#include "service/openai_api.h"
#include "service/routes.h"

namespace mineru::apps {

// serve's own defaults where they differ from ServerOptions' (a library default suits tests):
// each generating request holds a handler thread for its whole generation, and MinerU's client
// sends up to 100 requests at once.
inline constexpr int kServeHandlerThreads = 128;
inline constexpr int kServeIoThreads = 2;

struct ServerFlags {
  using Limits = service::ServerLimits;
  static constexpr int64_t kMaxMs = int64_t{24} * 3600 * 1000;  // any timeout: a day at most
  static constexpr int64_t kMaxChatTimeoutSeconds = int64_t{24} * 3600;

  std::string host = "127.0.0.1";
  int port = 8000;
  int io_threads = kServeIoThreads;
  int handler_threads = kServeHandlerThreads;
  size_t max_header_bytes = Limits::kDefaultMaxHeaderBytes;
  size_t max_body_bytes = Limits::kDefaultMaxBodyBytes;
  int64_t request_deadline_ms = Limits::kDefaultRequestDeadline.count();
  int64_t keep_alive_ms = Limits::kDefaultKeepAliveIdle.count();
  int64_t write_timeout_ms = Limits::kDefaultWriteTimeout.count();
  int64_t sse_heartbeat_ms = Limits::kDefaultSseHeartbeat.count();
  size_t max_connections = Limits::kDefaultMaxConnections;
  size_t max_sse_queue_bytes = Limits::kDefaultMaxSseQueueBytes;
  bool allow_remote_images = false;
  bool allow_private_remote_images = false;
  bool allow_public_http_client = false;
  uint64_t max_image_bytes = image::kDefaultMaxImageBytes;
  int64_t chat_timeout_s =
      std::chrono::duration_cast<std::chrono::seconds>(service::kDefaultChatRequestTimeout).count();

  void Register(CLI::App& cmd) {
    cmd.add_option("--host", host, "Address to listen on")
        ->check([](const std::string& v) { return v.empty() ? "must not be empty" : ""; })
        ->capture_default_str();
    cmd.add_flag("--allow-public-http-client", allow_public_http_client,
                 "MinerU API: accept *-http-client backends and server_url on a server bound to "
                 "0.0.0.0 or :: (MinerU 3.4 refuses them there)");
    cmd.add_option("--port", port, "Port to listen on (0: any free port)")
        ->check(CLI::Range(0, 65535))
        ->capture_default_str();
    cmd.add_option("--io-threads", io_threads, "Socket I/O threads")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    cmd.add_option("--handler-threads", handler_threads,
                   "Requests handled at once (each generating request holds one)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    // Not --max-header-bytes: that is the safetensors header limit (model_options.h).
    cmd.add_option("--max-http-header-bytes", max_header_bytes,
                   "Request line plus headers at most; more is answered 431")
        ->check(CLI::Range(size_t{1024}, size_t{16} << 20))
        ->capture_default_str();
    cmd.add_option("--max-body-bytes", max_body_bytes,
                   "Largest request body accepted; more is answered 413")
        ->check(CLI::Range(size_t{1}, size_t{1} << 34))
        ->capture_default_str();
    cmd.add_option("--request-timeout-ms", request_deadline_ms,
                   "Time to receive a request's headers and body; past it: 408")
        ->check(CLI::Range(int64_t{1}, kMaxMs))
        ->capture_default_str();
    cmd.add_option("--keep-alive-ms", keep_alive_ms,
                   "Idle time before a kept-alive connection is closed")
        ->check(CLI::Range(int64_t{1}, kMaxMs))
        ->capture_default_str();
    cmd.add_option("--write-timeout-ms", write_timeout_ms,
                   "Time to write one response (or one batch of events); past it the "
                   "connection is closed")
        ->check(CLI::Range(int64_t{1}, kMaxMs))
        ->capture_default_str();
    cmd.add_option("--sse-heartbeat-ms", sse_heartbeat_ms,
                   "Idle time after which an event stream sends a keep-alive comment")
        ->check(CLI::Range(int64_t{100}, kMaxMs))
        ->capture_default_str();
    cmd.add_option("--max-connections", max_connections,
                   "Open connections at most; one more is answered 503")
        ->check(CLI::Range(size_t{1}, size_t{1} << 20))
        ->capture_default_str();
    cmd.add_option("--max-sse-queue-bytes", max_sse_queue_bytes,
                   "Unwritten event-stream bytes per connection; beyond it the slow client is "
                   "disconnected")
        ->check(CLI::Range(size_t{1024}, size_t{1} << 34))
        ->capture_default_str();
    cmd.add_flag("--allow-remote-images", allow_remote_images,
                 "Fetch http(s) image URLs in chat requests (off: only data: URLs)");
    cmd.add_flag("--allow-private-remote-images", allow_private_remote_images,
                 "With --allow-remote-images: fetch from loopback, private, link-local and other "
                 "non-public addresses too (off: public addresses only)");
    cmd.add_option("--max-image-bytes", max_image_bytes,
                   "Largest encoded image inside one request (data: URL or fetched)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 34))
        ->capture_default_str();
    cmd.add_option("--chat-timeout", chat_timeout_s,
                   "Seconds one chat completion may take from arrival; past it: 504 (0: none)")
        ->check(CLI::Range(int64_t{0}, kMaxChatTimeoutSeconds))
        ->capture_default_str();
  }

  void Apply(service::ServerOptions& options) const {
    options.host = host;
    options.port = port;
    options.io_threads = io_threads;
    options.handler_threads = handler_threads;
    Limits& l = options.limits;
    l.max_header_bytes = max_header_bytes;
    l.max_body_bytes = max_body_bytes;
    l.request_deadline = std::chrono::milliseconds(request_deadline_ms);
    l.keep_alive_idle = std::chrono::milliseconds(keep_alive_ms);
    l.write_timeout = std::chrono::milliseconds(write_timeout_ms);
    l.sse_heartbeat = std::chrono::milliseconds(sse_heartbeat_ms);
    l.max_connections = max_connections;
    l.max_sse_queue_bytes = max_sse_queue_bytes;
  }

  // MinerU 3.4's public-bind rule for the http-client backends.
  void Apply(service::RouteOptions& options) const {
    options.public_bind = host == "0.0.0.0" || host == "::" || host == "[::]";
    options.allow_public_http_client = allow_public_http_client;
  }

  void Apply(service::OpenAiOptions& options) const {
    options.allow_remote_images = allow_remote_images;
    options.allow_private_remote_images = allow_private_remote_images;
    options.max_image_bytes = max_image_bytes;
    options.request_timeout = std::chrono::seconds(chat_timeout_s);
  }
};

}  // namespace mineru::apps
