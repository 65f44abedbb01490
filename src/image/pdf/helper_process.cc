// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/helper_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

extern char** environ;

namespace mineru::pdf {
namespace {

// Descriptors handed to the child are first moved to at least this number, so that none of
// them can be 0-3 already (dup2 onto itself would keep close-on-exec set).
constexpr int kFirstSafeFd = 10;

int MoveUp(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, kFirstSafeFd);
  ::close(fd);
  return moved;
}

class FileActions {
 public:
  FileActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

class SpawnAttributes {
 public:
  SpawnAttributes() { ::posix_spawnattr_init(&attr_); }
  ~SpawnAttributes() { ::posix_spawnattr_destroy(&attr_); }
  posix_spawnattr_t* get() { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

int MillisecondsUntil(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  // Rounded up so that the last poll does not spin with a zero timeout.
  return static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 1 << 30));
}

// Waits until fd is ready for `events` or the deadline passes.
TransferFailure WaitReady(int fd, short events, Deadline deadline, int* error) {
  for (;;) {
    if (std::chrono::steady_clock::now() >= deadline) return TransferFailure::kTimeout;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, MillisecondsUntil(deadline));
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno;
      return TransferFailure::kSystem;
    }
    if (n == 0) continue;  // re-checks the deadline
    return TransferFailure::kNone;
  }
}

}  // namespace

Result<HelperProcess> HelperProcess::Spawn(const std::string& path,
                                           const std::vector<std::string>& args, int document_fd) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Fail(ErrorCode::kIo, "socketpair for the render helper: {}", std::strerror(errno));
  }
  const int parent_fd = MoveUp(pair[0]);
  const int child_fd = MoveUp(pair[1]);
  const int doc_fd = ::fcntl(document_fd, F_DUPFD_CLOEXEC, kFirstSafeFd);
  auto close_all = [&] {
    for (int fd : {parent_fd, child_fd, doc_fd}) {
      if (fd >= 0) ::close(fd);
    }
  };
  if (parent_fd < 0 || child_fd < 0 || doc_fd < 0) {
    const int saved = errno;
    close_all();
    return Fail(ErrorCode::kIo, "descriptors for the render helper: {}", std::strerror(saved));
  }

  FileActions actions;
  ::posix_spawn_file_actions_adddup2(actions.get(), child_fd, STDIN_FILENO);
  ::posix_spawn_file_actions_adddup2(actions.get(), child_fd, STDOUT_FILENO);
  ::posix_spawn_file_actions_addopen(actions.get(), STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_adddup2(actions.get(), doc_fd, 3);
  // Whatever the caller left open without close-on-exec stays out of the helper.
  ::posix_spawn_file_actions_addclosefrom_np(actions.get(), 4);

  // The helper starts with no blocked signals and default dispositions, whatever the caller
  // uses (a caller that ignores SIGPIPE or blocks SIGXCPU must not weaken the helper's limits).
  SpawnAttributes attr;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  ::posix_spawnattr_setsigmask(attr.get(), &none);
  ::posix_spawnattr_setsigdefault(attr.get(), &all);
  ::posix_spawnattr_setflags(attr.get(), POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv_strings{path};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int spawn_error =
      ::posix_spawn(&pid, path.c_str(), actions.get(), attr.get(), argv.data(), environ);
  ::close(child_fd);
  ::close(doc_fd);
  if (spawn_error != 0) {
    ::close(parent_fd);
    return Fail(ErrorCode::kUnavailable, "cannot start render helper {}: {}", path,
                std::strerror(spawn_error));
  }
  HelperProcess helper;
  helper.pid_ = pid;
  helper.fd_ = parent_fd;
  return helper;
}

HelperProcess::HelperProcess(HelperProcess&& other) noexcept { *this = std::move(other); }

HelperProcess& HelperProcess::operator=(HelperProcess&& other) noexcept {
  if (this != &other) {
    Reset();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    last_errno_ = other.last_errno_;
    end_ = std::move(other.end_);
  }
  return *this;
}

HelperProcess::~HelperProcess() { Reset(); }

void HelperProcess::Reset() {
  if (pid_ > 0) Stop();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

TransferFailure HelperProcess::Send(std::span<const uint8_t> bytes, Deadline deadline) {
  if (fd_ < 0) return TransferFailure::kClosed;
  size_t sent = 0;
  while (sent < bytes.size()) {
    const TransferFailure ready = WaitReady(fd_, POLLOUT, deadline, &last_errno_);
    if (ready != TransferFailure::kNone) return ready;
    const ssize_t n =
        ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (errno == EPIPE || errno == ECONNRESET) return TransferFailure::kClosed;
      last_errno_ = errno;
      return TransferFailure::kSystem;
    }
    sent += static_cast<size_t>(n);
  }
  return TransferFailure::kNone;
}

TransferFailure HelperProcess::Receive(std::span<uint8_t> out, Deadline deadline) {
  if (fd_ < 0) return TransferFailure::kClosed;
  size_t received = 0;
  while (received < out.size()) {
    const TransferFailure ready = WaitReady(fd_, POLLIN, deadline, &last_errno_);
    if (ready != TransferFailure::kNone) return ready;
    const ssize_t n = ::recv(fd_, out.data() + received, out.size() - received, MSG_DONTWAIT);
    if (n == 0) return TransferFailure::kClosed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (errno == ECONNRESET) return TransferFailure::kClosed;
      last_errno_ = errno;
      return TransferFailure::kSystem;
    }
    received += static_cast<size_t>(n);
  }
  return TransferFailure::kNone;
}

const HelperProcess::End& HelperProcess::Stop() {
  if (pid_ > 0) {
    // The helper holds nothing worth a graceful shutdown; SIGKILL cannot be caught or delayed,
    // so the wait below returns as soon as the kernel has torn the process down.
    ::kill(pid_, SIGKILL);
    int status = 0;
    pid_t done;
    do {
      done = ::waitpid(pid_, &status, 0);
    } while (done < 0 && errno == EINTR);
    if (done != pid_) {
      // Someone else reaped it (SIGCHLD set to SIG_IGN, or a waitpid(-1) elsewhere).
      end_.what = "ended (its exit status was collected elsewhere)";
    } else if (WIFSIGNALED(status)) {
      end_.signal = WTERMSIG(status);
      end_.what =
          fmt::format("was killed by signal {} ({})", end_.signal, ::strsignal(end_.signal));
    } else {
      end_.status = WEXITSTATUS(status);
      end_.what = fmt::format("exited with status {}", end_.status);
    }
    pid_ = -1;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  return end_;
}

}  // namespace mineru::pdf
