// SPDX-License-Identifier: Apache-2.0
#include "serve_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

extern char** environ;

namespace mineru::apps::testing {

ServeProcess::ServeProcess(const std::string& subcommand, const std::vector<std::string>& args,
                           const std::vector<std::string>& env, std::string_view ready_prefix) {
  const std::string binary = std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp";
  int fds[2];
  if (pipe(fds) != 0) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> all = {binary, "--threads", "2", subcommand};
  if (subcommand == "serve") {
    all.push_back("--port");
    all.push_back("0");
  }
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = env;
  for (char** e = environ; *e; ++e) environment.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    pid_ = -1;
    close(fds[0]);
    return;
  }
  fd_ = fds[0];
  // Reads until the line naming the URL (or EOF: the server failed to start).
  std::string line;
  char c;
  while (read(fd_, &c, 1) == 1) {
    log_ += c;
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line.rfind(ready_prefix, 0) == 0) {
      url_ = line.substr(ready_prefix.size());
      if (url_.empty()) url_ = line;  // a ready line without a URL
      break;
    }
    line.clear();
  }
}

ServeProcess::~ServeProcess() { Stop(); }

int ServeProcess::port() const {
  const size_t colon = url_.rfind(':');
  return colon == std::string::npos ? 0 : std::atoi(url_.c_str() + colon + 1);
}

void ServeProcess::Kill() {
  if (pid_ > 0) kill(pid_, SIGKILL);
  Stop();
}

int ServeProcess::Stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    char buf[4096];
    ssize_t n;
    while (fd_ >= 0 && (n = read(fd_, buf, sizeof(buf))) > 0)
      log_.append(buf, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    pid_ = -1;
  }
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  return exit_code_;
}

}  // namespace mineru::apps::testing
