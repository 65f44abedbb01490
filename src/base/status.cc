// SPDX-License-Identifier: Apache-2.0
#include "base/status.h"

#include <cstdio>
#include <cstdlib>

namespace mineru {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kResourceExhausted:
      return "limit exceeded";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "error";
}

std::string Error::ToString() const { return std::string(ErrorCodeName(code)) + ": " + message; }

void CheckFailed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "%s:%d: check failed: %s %s\n", file, line, condition, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace mineru
