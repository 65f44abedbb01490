// SPDX-License-Identifier: Apache-2.0
// What the long-running subcommands (serve, worker) share about their process: SIGTERM and
// SIGINT taken by the main thread, and a work directory that is theirs alone.
#pragma once

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include "base/status.h"

namespace mineru::apps {

// Blocks SIGTERM and SIGINT in this thread and every thread started after it (call before any
// thread starts), so that WaitForTermination in the main thread is the only taker.
class TerminationSignals {
 public:
  static Result<TerminationSignals> Block() {
    TerminationSignals s;
    sigemptyset(&s.set_);
    sigaddset(&s.set_, SIGTERM);
    sigaddset(&s.set_, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &s.set_, nullptr) != 0) {
      return Fail(ErrorCode::kInternal, "cannot block SIGTERM/SIGINT");
    }
    return s;
  }
  // Waits for one of them; "SIGTERM" or "SIGINT".
  const char* Wait() const {
    int number = 0;
    while (sigwait(&set_, &number) != 0) {
    }
    return number == SIGINT ? "SIGINT" : "SIGTERM";
  }

 private:
  TerminationSignals() = default;
  sigset_t set_{};
};

// The directory tasks work in: the one asked for, or a new one under $TMPDIR (named
// <prefix>-XXXXXX) that the destructor removes.
class WorkDir {
 public:
  static Result<WorkDir> Make(const std::string& requested, const std::string& prefix) {
    WorkDir dir;
    if (!requested.empty()) {
      dir.path_ = requested;
      return dir;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      return Fail(ErrorCode::kIo, "{}: cannot create a work directory: {}", templ,
                  std::strerror(errno));
    }
    dir.path_ = templ;
    dir.owned_ = true;
    return dir;
  }
  WorkDir(WorkDir&& o) noexcept
      : path_(std::move(o.path_)), owned_(std::exchange(o.owned_, false)) {}
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir() {
    std::error_code ec;
    if (owned_) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  WorkDir() = default;
  std::string path_;
  bool owned_ = false;
};

}  // namespace mineru::apps
