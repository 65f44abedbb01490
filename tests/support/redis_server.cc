// SPDX-License-Identifier: Apache-2.0
#include "redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "scratch.h"

extern char** environ;

namespace mineru::testing_support {
namespace {

using std::chrono::milliseconds;

// How long a starting server may take to answer PING, and a stopping one to exit. Both take
// milliseconds; the bound only turns a hang into a failure.
constexpr auto kStartupLimit = std::chrono::seconds(30);
constexpr auto kStopLimit = std::chrono::seconds(30);
constexpr int kPortAttempts = 10;

// A port nobody listens on now: bind port 0 on loopback, read what the kernel chose, close.
int PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Whether something on the port answers an inline PING (+PONG, or -NOAUTH when a password is
// required: either way the server is up).
bool AnswersPing(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    constexpr std::string_view kPing = "PING\r\n";
    if (send(fd, kPing.data(), kPing.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(kPing.size())) {
      char buf[64];
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      const std::string_view reply(buf, n > 0 ? static_cast<size_t>(n) : 0);
      ok = reply.substr(0, 5) == "+PONG" || reply.substr(0, 7) == "-NOAUTH";
    }
  }
  close(fd);
  return ok;
}

}  // namespace

RedisServer::RedisServer(std::vector<std::string> extra_args) : extra_args_(std::move(extra_args)) {
  static std::atomic<int> counter{0};
  dir_ = ScratchRoot() + "/redis-" + std::to_string(counter++);
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
}

RedisServer::~RedisServer() { Stop(); }

std::string RedisServer::Url(const std::string& password) const {
  return "redis://" + (password.empty() ? "" : ":" + password + "@") +
         "127.0.0.1:" + std::to_string(port_);
}

std::string RedisServer::Log() const { return ReadFile(dir_ + "/redis.log"); }

::testing::AssertionResult RedisServer::Start() {
  if (running()) return ::testing::AssertionSuccess();
  if (port_ != 0) {
    bool taken = false;
    return StartOnPort(port_, &taken);
  }
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    const int port = PickFreePort();
    if (port == 0) continue;
    bool taken = false;
    ::testing::AssertionResult started = StartOnPort(port, &taken);
    if (started) {
      port_ = port;
      return started;
    }
    if (!taken) return started;
  }
  return ::testing::AssertionFailure()
         << "no free loopback port for redis-server after " << kPortAttempts << " attempts";
}

::testing::AssertionResult RedisServer::StartOnPort(int port, bool* port_taken) {
  *port_taken = false;
  std::vector<std::string> args = {"redis-server",
                                   "--port",
                                   std::to_string(port),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_,
                                   "--daemonize",
                                   "no",
                                   "--logfile",
                                   ""};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::string log = dir_ + "/redis.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, "redis-server", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error == ENOENT) {
    return ::testing::AssertionFailure()
           << "redis-server is not installed (Debian package redis-server; "
              "scripts/setup-debian.sh installs it)";
  }
  if (error != 0) {
    return ::testing::AssertionFailure() << "cannot start redis-server: " << std::strerror(error);
  }
  const auto deadline = std::chrono::steady_clock::now() + kStartupLimit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      const std::string text = Log();
      *port_taken = text.find("Address already in use") != std::string::npos;
      return ::testing::AssertionFailure() << "redis-server on port " << port << " exited:\n"
                                           << text;
    }
    if (AnswersPing(port)) {
      pid_ = pid;
      paused_ = false;
      return ::testing::AssertionSuccess();
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return ::testing::AssertionFailure()
         << "redis-server on port " << port << " did not answer PING:\n"
         << Log();
}

void RedisServer::Stop() {
  if (pid_ <= 0) return;
  if (paused_) Resume();
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kStopLimit;
  while (waitpid(pid_, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  pid_ = -1;
}

void RedisServer::Pause() {
  if (pid_ <= 0 || paused_ || kill(pid_, SIGSTOP) != 0) return;
  // Returns once the child has stopped, so nothing sent after Pause is answered before Resume.
  int status = 0;
  waitpid(pid_, &status, WUNTRACED);
  paused_ = true;
}

void RedisServer::Resume() {
  if (pid_ <= 0 || !paused_ || kill(pid_, SIGCONT) != 0) return;
  int status = 0;
  waitpid(pid_, &status, WCONTINUED);
  paused_ = false;
}

}  // namespace mineru::testing_support
