// SPDX-License-Identifier: Apache-2.0
// How to reach a RabbitMQ broker (the AMQP client's connection settings, celery/amqp_client.h),
// and the amqp:// URL that names them.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mineru::jobs {

struct AmqpOptions {
  static constexpr int kDefaultPort = 5672;
  static constexpr std::chrono::seconds kDefaultHeartbeat{30};
  static constexpr std::chrono::seconds kDefaultConnectTimeout{5};
  // Waits for replies to declarations, consumes and other synchronous methods.
  static constexpr std::chrono::seconds kDefaultRpcTimeout{10};
  // How long Publish waits for the broker's confirm. Confirms of persistent messages wait for
  // the broker's batched fsync, which can take hundreds of milliseconds under load.
  static constexpr std::chrono::seconds kDefaultConfirmTimeout{30};
  static constexpr std::chrono::milliseconds kDefaultReconnectInitialBackoff{200};
  static constexpr std::chrono::milliseconds kDefaultReconnectMaxBackoff{10'000};
  // The longest the I/O thread sleeps waiting for the socket when no command wakes it; commands
  // wake it at once, so this only bounds how late a heartbeat can be sent (far below heartbeat/2).
  static constexpr std::chrono::milliseconds kDefaultIdleWait{100};
  // Largest message body accepted from the broker (RabbitMQ's own default max_message_size is
  // 128 MiB). A larger delivery is rejected without requeue (dead-lettered when the queue has a
  // dead-letter exchange) and counted in AmqpCounters::oversized_rejected.
  static constexpr size_t kDefaultMaxBodyBytes = size_t{128} << 20;
  static constexpr int kDefaultFrameMax = 131072;

  std::string host = "localhost";
  int port = kDefaultPort;
  std::string user = "guest";
  std::string password = "guest";
  std::string vhost = "/";
  std::chrono::seconds heartbeat = kDefaultHeartbeat;  // 0 disables heartbeats
  std::chrono::milliseconds connect_timeout = kDefaultConnectTimeout;
  std::chrono::milliseconds rpc_timeout = kDefaultRpcTimeout;
  std::chrono::milliseconds confirm_timeout = kDefaultConfirmTimeout;
  std::chrono::milliseconds reconnect_initial_backoff = kDefaultReconnectInitialBackoff;
  std::chrono::milliseconds reconnect_max_backoff = kDefaultReconnectMaxBackoff;
  std::chrono::milliseconds idle_wait = kDefaultIdleWait;
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  int frame_max = kDefaultFrameMax;
};

// "amqp://user:pass@host:port/vhost": user and password default to guest/guest, the port to
// 5672, the vhost to "/" (an empty path, or "/%2F"); %XX escapes are decoded in every part.
// "amqps://" (TLS) and query parameters are refused as unsupported.
Result<AmqpOptions> ParseAmqpUrl(std::string_view url);

}  // namespace mineru::jobs
