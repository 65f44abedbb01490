// SPDX-License-Identifier: Apache-2.0
// A private RabbitMQ node for the tests that need a real broker, run as a child process of the
// test binary: its own epmd on a free port, its own AMQP and distribution ports (free ones,
// loopback only), node name mineru-test-<pid>@localhost, data, logs and Erlang cookie (HOME)
// under `root`, no plugins and no config file. Stop() shuts it down gracefully (SIGTERM) and
// Start() boots it again with the same data and ports, for the broker-restart tests.
//
// How it is started (for CI notes): epmd -port <P> -address 127.0.0.1 in the foreground, then
// /usr/lib/rabbitmq/bin/rabbitmq-server (not the /usr/sbin wrapper, which switches users) with
//   ERL_EPMD_PORT=<P> RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=<amqp>
//   RABBITMQ_DIST_PORT=<dist> RABBITMQ_NODENAME=mineru-test-<pid>@localhost
//   RABBITMQ_MNESIA_BASE=<root>/mnesia RABBITMQ_LOG_BASE=<root>/log HOME=<root>/home
//   RABBITMQ_ENABLED_PLUGINS_FILE=<root>/enabled_plugins ("[]." in it)
//   RABBITMQ_CONFIG_FILE=<root>/none (absent: no config)
//   RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="+S 2:2 -kernel inet_dist_use_interface {127,0,0,1}"
// It is ready when an AMQP protocol header sent to its port is answered by connection.start.
//
// The test process becomes a child subreaper, so the Erlang processes the broker's shell
// wrapper leaves behind are reaped here rather than lingering as zombies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace mineru::testing_support {

class RabbitMqServer {
 public:
  // A cold boot takes about 4 s on a small machine; the limit only turns a broken installation
  // into a failure rather than a stuck test.
  static constexpr std::chrono::seconds kDefaultBootTimeout{60};
  static constexpr std::chrono::seconds kDefaultStopTimeout{30};
  static constexpr const char* kServerScript = "/usr/lib/rabbitmq/bin/rabbitmq-server";

  // Prepares `root` (created if needed) and picks the ports; starts nothing.
  explicit RabbitMqServer(std::string root);
  ~RabbitMqServer();  // stops the broker and epmd
  RabbitMqServer(const RabbitMqServer&) = delete;
  RabbitMqServer& operator=(const RabbitMqServer&) = delete;

  // Boots the broker (and epmd, the first time) and waits until it answers AMQP. Returns an
  // error message (with the end of the broker's output) or "" on success.
  std::string Start(std::chrono::seconds boot_timeout = kDefaultBootTimeout);
  // Graceful shutdown; the data stays for the next Start. "" on success.
  std::string Stop(std::chrono::seconds stop_timeout = kDefaultStopTimeout);

  bool running() const { return server_pid_ > 0; }
  int amqp_port() const { return amqp_port_; }
  // amqp://guest:guest@127.0.0.1:<port>/
  std::string url() const;
  // How long the last successful Start took, for reports.
  std::chrono::milliseconds last_boot_time() const { return last_boot_time_; }
  // The last few kilobytes of the broker's stdout and stderr, for failure messages.
  std::string OutputTail() const;

 private:
  std::string StartEpmd();
  void StopGroup(pid_t& pid, std::chrono::seconds timeout);

  std::string root_;
  std::string node_name_;
  int amqp_port_ = 0;
  int dist_port_ = 0;
  int epmd_port_ = 0;
  pid_t epmd_pid_ = -1;
  pid_t server_pid_ = -1;
  std::chrono::milliseconds last_boot_time_{0};
};

}  // namespace mineru::testing_support
