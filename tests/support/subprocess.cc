// SPDX-License-Identifier: Apache-2.0
// RunProcess and Describe of subprocess.h.
#include "subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace mineru::testing_support {
namespace {

// Closes the descriptor on every path out of RunProcess: the PDF tests count this process's
// descriptors before and after, so a leaked capture file would fail them.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Single quotes for a POSIX shell, so that the command of a failure message can be pasted into
// a terminal and rerun as is.
std::string ShellQuote(std::string_view arg) {
  std::string quoted = "'";
  for (const char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string_view EnvName(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// An unnamed temporary file, unlinked as soon as it is created so that nothing is left on disk
// whatever happens to the test, and close-on-exec so that no other child inherits it. Files
// rather than pipes: a pipe needs a reader draining it while the child writes, and its end of
// file waits for every process that inherited it (such as a helper the child started) to exit.
int OpenCaptureFile(std::string* error) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string name = (dir / "mineru_test_capture_XXXXXX").string();
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot create a capture file in " + dir.string() + ": " + std::strerror(errno);
    return -1;
  }
  ::unlink(name.c_str());
  return fd;
}

// Everything written to the capture file. pread, because the child moved the offset it shares
// with this descriptor.
std::string ReadAll(int fd) {
  std::string bytes;
  char buffer[1 << 16];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
    offset += n;
  }
  return bytes;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv_in,
                         const std::vector<std::string>& extra_env,
                         std::chrono::milliseconds timeout) {
  ProcessResult result;
  result.timeout = timeout;
  for (const std::string& arg : argv_in) {
    if (!result.command.empty()) result.command += ' ';
    result.command += ShellQuote(arg);
  }
  if (argv_in.empty()) {
    result.error = "no program to run (empty argv)";
    return result;
  }

  // A duplicate NAME would leave which value the child sees to its getenv, so the inherited
  // entry is dropped rather than shadowed.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view name = EnvName(*e);
    const bool replaced = std::any_of(extra_env.begin(), extra_env.end(),
                                      [&](const std::string& x) { return EnvName(x) == name; });
    if (!replaced) env_strings.emplace_back(*e);
  }
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = argv_in;
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  const Fd out(OpenCaptureFile(&result.error));
  if (out.get() < 0) return result;
  const Fd err(OpenCaptureFile(&result.error));
  if (err.get() < 0) return result;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.get(), 2);
  pid_t pid = -1;
  // posix_spawnp: a program name without a slash (pdftoppm) is looked up in PATH; a path is
  // used as is.
  const int spawn_error = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    result.error = "cannot start " + argv_in[0] + ": " + std::strerror(spawn_error);
    return result;
  }
  result.started = true;

  // Polls rather than blocks so that a hang is reported as a failure, not a stuck test run.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  int wait_errno = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      wait_errno = errno;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      result.timed_out = true;
      pid_t killed = -1;
      do {
        killed = ::waitpid(pid, &status, 0);
      } while (killed < 0 && errno == EINTR);
      if (killed < 0) wait_errno = errno;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Without a status from waitpid nothing is known of how the child ended: neither `exited`
  // nor `signal` is set, so no check of the result can pass by accident.
  if (wait_errno != 0) {
    result.error = "lost track of the child: waitpid: " + std::string(std::strerror(wait_errno));
  } else if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  result.out = ReadAll(out.get());
  result.err = ReadAll(err.get());
  return result;
}

std::string Describe(const ProcessResult& r) {
  std::ostringstream s;
  s << "\ncommand: " << r.command << "\n";
  if (!r.started) {
    s << "not started: " << r.error;
  } else if (r.timed_out) {
    s << "killed after " << std::chrono::duration<double>(r.timeout).count() << " s (hung)";
  } else if (r.exited) {
    s << "exit code " << r.exit_code;
  } else if (r.signal != 0) {
    s << "killed by signal " << r.signal << " (" << ::strsignal(r.signal) << ")";
  } else {
    s << "ended in an unknown way: " << r.error;
  }
  s << "\nstdout: " << r.out.substr(0, 2000) << "\nstderr: " << r.err.substr(0, 2000);
  return s.str();
}

}  // namespace mineru::testing_support
