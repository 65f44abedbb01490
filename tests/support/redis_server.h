// SPDX-License-Identifier: Apache-2.0
// A real redis-server for the tests, run as a child process on a free loopback port with no
// persistence (--save "" --appendonly no) in a private scratch directory. It can be stopped
// (SIGTERM), started again on the same port, and paused (SIGSTOP) to stand for an overloaded
// server, so tests see what a client sees when Redis goes away, comes back or hangs.
//
// A missing redis-server fails the test (Debian's redis-server package; scripts/setup-debian.sh
// installs it): the tests that need it are never skipped.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace mineru::testing_support {

class RedisServer {
 public:
  // `extra_args`: more redis-server options, e.g. {"--requirepass", "secret"}.
  explicit RedisServer(std::vector<std::string> extra_args = {});
  ~RedisServer();  // stops it
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts the server and waits until it answers PING. The first start picks a free port
  // (retrying with another when the one picked was taken meanwhile); later starts reuse it.
  ::testing::AssertionResult Start();
  // SIGTERM, then waits for the process to end. Nothing when not running.
  void Stop();
  // SIGSTOP / SIGCONT: the server keeps its connections but answers nothing while paused.
  void Pause();
  void Resume();

  int port() const { return port_; }
  // "redis://127.0.0.1:<port>" (with ":<password>@" when one is given).
  std::string Url(const std::string& password = "") const;
  bool running() const { return pid_ > 0; }
  // What the server wrote (its log), for failure messages.
  std::string Log() const;

 private:
  ::testing::AssertionResult StartOnPort(int port, bool* port_taken);

  std::vector<std::string> extra_args_;
  std::string dir_;  // data directory and log
  int port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
};

}  // namespace mineru::testing_support
