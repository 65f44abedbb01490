// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp serve` as a child process for the CLI tests: started on port 0 with the given
// arguments, its URL read from the "listening on http://HOST:PORT" line of its stderr; stopped
// with SIGTERM (as an operator would) by Stop() or on destruction.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace mineru::apps::testing {

class ServeProcess {
 public:
  // `args` follow "mineru-cpp --threads 2 serve --port 0"; `env` entries ("NAME=value") are
  // added to the test's environment.
  explicit ServeProcess(const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {})
      : ServeProcess("serve", args, env, "listening on ") {}
  // Any long-running subcommand: `args` follow "mineru-cpp --threads 2 <subcommand>" (plus
  // "--port 0" for serve); started once a stderr line begins with `ready_prefix` (its rest is
  // url()).
  ServeProcess(const std::string& subcommand, const std::vector<std::string>& args,
               const std::vector<std::string>& env, std::string_view ready_prefix);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // "http://127.0.0.1:PORT"; empty when the server did not start (see log()).
  const std::string& url() const { return url_; }
  int port() const;
  // The server's process id (for /proc/<pid>/...); -1 once stopped or when it did not start.
  pid_t pid() const { return pid_; }
  // stderr so far (all of it after Stop).
  const std::string& log() const { return log_; }
  // SIGTERM, then waits: the exit code, or -1 when a signal ended it. Idempotent.
  int Stop();
  // SIGKILL (a crash), then waits.
  void Kill();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  int exit_code_ = -1;
  std::string url_;
  std::string log_;
};

}  // namespace mineru::apps::testing
