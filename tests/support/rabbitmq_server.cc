// SPDX-License-Identifier: Apache-2.0
// RabbitMqServer of rabbitmq_server.h.
#include "rabbitmq_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

extern char** environ;

namespace mineru::testing_support {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A port nothing listens on now (the kernel's pick for an ephemeral bind). Another process could
// take it before the broker binds it; the tests run on a private machine, so that is accepted.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// Connects to 127.0.0.1:port; -1 when nothing listens.
int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when the broker answers the AMQP 0-9-1 protocol header with a method frame
// (connection.start): the listener is up and the node accepts connections.
bool AnswersAmqp(int port) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return false;
  static constexpr char kHeader[] = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};
  bool ok = false;
  if (::send(fd, kHeader, sizeof(kHeader), MSG_NOSIGNAL) == sizeof(kHeader)) {
    pollfd p{fd, POLLIN, 0};
    unsigned char type = 0;
    ok = ::poll(&p, 1, 2000) > 0 && ::recv(fd, &type, 1, 0) == 1 && type == 1;
  }
  ::close(fd);
  return ok;
}

// Starts argv in its own process group (so that Stop reaches every process the broker's scripts
// start), stdout and stderr appended to `log`, with `env` added to this process's environment.
pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::string& log, std::string* error) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry = *e;
    std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : env) replaced |= std::string_view(x).substr(0, x.find('=')) == name;
    if (!replaced) env_strings.emplace_back(entry);
  }
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    *error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

// Reaps whatever of process group `pgid` has exited (ours as children or, being a subreaper,
// as orphans). True when no process of the group is left.
bool ReapGroup(pid_t pgid) {
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(-pgid, &status, WNOHANG);
    if (r > 0) continue;
    return r < 0 && errno == ECHILD;
  }
}

}  // namespace

RabbitMqServer::RabbitMqServer(std::string root) : root_(std::move(root)) {
  // Orphans of the broker's shell wrapper are reparented to this process and reaped by Stop.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::error_code ec;
  for (const char* dir : {"mnesia", "log", "home"}) fs::create_directories(root_ + "/" + dir, ec);
  std::ofstream(root_ + "/enabled_plugins") << "[].\n";
  node_name_ = "mineru-test-" + std::to_string(::getpid()) + "@localhost";
  amqp_port_ = FreePort();
  dist_port_ = FreePort();
  epmd_port_ = FreePort();
  while (dist_port_ == amqp_port_) dist_port_ = FreePort();
  while (epmd_port_ == amqp_port_ || epmd_port_ == dist_port_) epmd_port_ = FreePort();
}

RabbitMqServer::~RabbitMqServer() {
  Stop();
  StopGroup(epmd_pid_, std::chrono::seconds(5));
}

std::string RabbitMqServer::url() const {
  return "amqp://guest:guest@127.0.0.1:" + std::to_string(amqp_port_) + "/";
}

std::string RabbitMqServer::OutputTail() const {
  std::ifstream in(root_ + "/server.out", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr size_t kTail = 4096;
  return all.size() > kTail ? all.substr(all.size() - kTail) : all;
}

std::string RabbitMqServer::StartEpmd() {
  std::string error;
  epmd_pid_ = Spawn({"epmd", "-port", std::to_string(epmd_port_), "-address", "127.0.0.1"}, {},
                    root_ + "/epmd.out", &error);
  if (epmd_pid_ < 0) return error;
  for (auto deadline = Clock::now() + std::chrono::seconds(10); Clock::now() < deadline;) {
    if (int fd = ConnectLoopback(epmd_port_); fd >= 0) {
      ::close(fd);
      return "";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "epmd did not listen on port " + std::to_string(epmd_port_);
}

std::string RabbitMqServer::Start(std::chrono::seconds boot_timeout) {
  if (running()) return "";
  if (amqp_port_ == 0 || dist_port_ == 0 || epmd_port_ == 0) return "no free ports";
  if (epmd_pid_ < 0) {
    if (std::string error = StartEpmd(); !error.empty()) return error;
  }
  const std::vector<std::string> env = {
      "ERL_EPMD_PORT=" + std::to_string(epmd_port_),
      "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
      "RABBITMQ_NODE_PORT=" + std::to_string(amqp_port_),
      "RABBITMQ_DIST_PORT=" + std::to_string(dist_port_),
      "RABBITMQ_NODENAME=" + node_name_,
      "RABBITMQ_MNESIA_BASE=" + root_ + "/mnesia",
      "RABBITMQ_LOG_BASE=" + root_ + "/log",
      "HOME=" + root_ + "/home",
      "RABBITMQ_ENABLED_PLUGINS_FILE=" + root_ + "/enabled_plugins",
      "RABBITMQ_CONFIG_FILE=" + root_ + "/none",
      "RABBITMQ_ADVANCED_CONFIG_FILE=" + root_ + "/none.config",
      "RABBITMQ_CONF_ENV_FILE=" + root_ + "/none.env",
      // Two schedulers boot faster on a small machine; distribution on loopback only.
      "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=+S 2:2 -kernel inet_dist_use_interface {127,0,0,1}",
  };
  const auto started = Clock::now();
  std::string error;
  server_pid_ = Spawn({kServerScript}, env, root_ + "/server.out", &error);
  if (server_pid_ < 0) return error;
  for (auto deadline = started + boot_timeout; Clock::now() < deadline;) {
    int status = 0;
    if (::waitpid(server_pid_, &status, WNOHANG) == server_pid_) {
      server_pid_ = -1;
      return "rabbitmq-server exited during boot:\n" + OutputTail();
    }
    if (AnswersAmqp(amqp_port_)) {
      last_boot_time_ =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      return "";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Stop();
  return "rabbitmq-server did not answer AMQP within " + std::to_string(boot_timeout.count()) +
         " s:\n" + OutputTail();
}

void RabbitMqServer::StopGroup(pid_t& pid, std::chrono::seconds timeout) {
  if (pid <= 0) return;
  ::kill(-pid, SIGTERM);
  auto deadline = Clock::now() + timeout;
  while (!ReapGroup(pid) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!ReapGroup(pid)) {
    ::kill(-pid, SIGKILL);
    while (!ReapGroup(pid)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid = -1;
}

std::string RabbitMqServer::Stop(std::chrono::seconds stop_timeout) {
  if (!running()) return "";
  // SIGTERM to the whole group: the Erlang VM treats it as a graceful stop (connections are
  // closed with CONNECTION_FORCED, durable data flushed).
  StopGroup(server_pid_, stop_timeout);
  return "";
}

}  // namespace mineru::testing_support
