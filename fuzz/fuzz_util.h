// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the libFuzzer targets of fuzz/: views of the input and an in-memory file for
// the APIs that read a path. A target states its invariants with MINERU_CHECK, whose abort
// libFuzzer records as a crash, like a sanitizer report.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace mineru::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

inline std::span<const uint8_t> AsBytes(std::string_view text) {
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

// Splits at the first `separator`: {before, after}; {input, ""} when there is none.
inline std::pair<std::string_view, std::string_view> SplitOnce(std::string_view input,
                                                               char separator) {
  const size_t at = input.find(separator);
  if (at == std::string_view::npos) return {input, {}};
  return {input.substr(0, at), input.substr(at + 1)};
}

// Whether `inner` lies within `outer` (the parsers that return views into their input).
inline bool IsWithin(std::string_view inner, std::string_view outer) {
  if (inner.empty()) return true;
  const auto* begin = outer.data();
  return inner.data() >= begin && inner.data() + inner.size() <= begin + outer.size();
}

// An anonymous in-memory file holding the fuzz input, reachable as /proc/self/fd/<fd> for the
// APIs that open a path (and mmap it). No disk traffic, nothing left behind.
class MemoryFile {
 public:
  explicit MemoryFile(std::span<const uint8_t> bytes) {
    fd_ = memfd_create("mineru-fuzz", MFD_CLOEXEC);
    MINERU_CHECK(fd_ >= 0, "memfd_create failed");
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      MINERU_CHECK(n > 0, "writing the memfd failed");
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace mineru::fuzz
