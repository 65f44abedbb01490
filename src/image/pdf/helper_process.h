// SPDX-License-Identifier: Apache-2.0
// The render helper as a child process: started with posix_spawn (no fork of a possibly large,
// multithreaded caller), talked to over one end of a Unix socket pair with a deadline on every
// read and write, and always ended with SIGKILL and reaped, so that no zombie and no file
// descriptor outlives the object. Writes use MSG_NOSIGNAL: a helper that dies mid-request is
// an error here, never a SIGPIPE that kills the caller.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace mineru::pdf {

using Deadline = std::chrono::steady_clock::time_point;

// Why a transfer with the helper failed.
enum class TransferFailure {
  kNone,
  kTimeout,  // the deadline passed
  kClosed,   // the helper closed its end (it exited or died)
  kSystem,   // the operating system refused (poll, send, recv)
};

class HelperProcess {
 public:
  // Starts `path` with `args` (argv[1..]); the child's stdin and stdout are its end of a socket
  // pair, stderr is /dev/null and `document_fd` becomes its descriptor 3; every other
  // descriptor is closed in the child. The caller keeps (and closes) document_fd.
  static Result<HelperProcess> Spawn(const std::string& path, const std::vector<std::string>& args,
                                     int document_fd);

  HelperProcess() = default;
  HelperProcess(HelperProcess&& other) noexcept;
  HelperProcess& operator=(HelperProcess&& other) noexcept;
  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;
  ~HelperProcess();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // All of `bytes`, or the reason it could not be sent by the deadline.
  TransferFailure Send(std::span<const uint8_t> bytes, Deadline deadline);
  // Exactly out.size() bytes, or the reason they did not arrive by the deadline.
  TransferFailure Receive(std::span<uint8_t> out, Deadline deadline);
  // errno of the last kSystem failure.
  int last_errno() const { return last_errno_; }

  // How the helper ended.
  struct End {
    int signal = 0;    // the signal that ended it, 0 if it exited
    int status = -1;   // its exit status, -1 if a signal ended it or it is unknown
    std::string what;  // "exited with status 0", "was killed by signal 11 (Segmentation fault)"
  };

  // Kills the helper (SIGKILL), reaps it and says how it had ended; a helper that had already
  // died keeps its own cause of death. Idempotent: later calls repeat the first answer.
  const End& Stop();

 private:
  void Reset();

  pid_t pid_ = -1;
  int fd_ = -1;
  int last_errno_ = 0;
  End end_;
};

}  // namespace mineru::pdf
