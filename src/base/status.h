// SPDX-License-Identifier: Apache-2.0
// Error handling for everything derived from outside bytes (files, HTTP bodies, messages,
// weights): functions return Result<T>; they never abort on bad input.
//
//   Result<Config> ParseConfig(const Json& j);
//   MINERU_ASSIGN_OR_RETURN(Config config, ParseConfig(j));
//   MINERU_RETURN_IF_ERROR(CheckShape(...));
//
// Internal invariants (programming errors) use MINERU_CHECK, which aborts with a message.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>

namespace mineru {

enum class ErrorCode {
  kInvalidArgument,    // the caller's request or option is wrong
  kNotFound,           // a file, tensor or key does not exist
  kIo,                 // the operating system refused (open, read, mmap, write)
  kCorrupt,            // bytes do not follow their format (truncated, overlapping, bad header)
  kUnsupported,        // valid but not handled (unknown dtype, architecture)
  kResourceExhausted,  // a named limit was reached
  kCancelled,
  kUnavailable,
  kInternal,
};

std::string_view ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;

  // "corrupt: model.safetensors: header length 99 past end of file (12 bytes)"
  std::string ToString() const;
};

template <class T>
using Result = tl::expected<T, Error>;
using Status = tl::expected<void, Error>;

inline Status OkStatus() { return {}; }

inline tl::unexpected<Error> MakeError(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

// Fail(ErrorCode::kCorrupt, "{}: bad magic", path)
template <class... Args>
tl::unexpected<Error> Fail(ErrorCode code, fmt::format_string<Args...> format, Args&&... args) {
  return MakeError(code, fmt::format(format, std::forward<Args>(args)...));
}

// Prefixes the message with context: "loading model/: " + original.
inline Error WithContext(Error error, std::string_view context) {
  error.message = std::string(context) + ": " + error.message;
  return error;
}

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& message);

}  // namespace mineru

#define MINERU_CONCAT_INNER(a, b) a##b
#define MINERU_CONCAT(a, b) MINERU_CONCAT_INNER(a, b)

// Returns the error of a Status/Result expression from the enclosing function.
#define MINERU_RETURN_IF_ERROR(expr)                                    \
  do {                                                                  \
    auto mineru_status_ = (expr);                                       \
    if (!mineru_status_) return tl::unexpected(mineru_status_.error()); \
  } while (0)

// MINERU_ASSIGN_OR_RETURN(auto x, Compute()); declares x or returns the error.
#define MINERU_ASSIGN_OR_RETURN(lhs, expr) \
  MINERU_ASSIGN_OR_RETURN_IMPL(MINERU_CONCAT(mineru_result_, __LINE__), lhs, expr)
#define MINERU_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)       \
  auto tmp = (expr);                                       \
  if (!tmp) return tl::unexpected(std::move(tmp).error()); \
  lhs = std::move(tmp).value()

// Invariant checks for programming errors only (never for input-derived conditions).
#define MINERU_CHECK(cond, ...)                                                                 \
  do {                                                                                          \
    if (!(cond)) ::mineru::CheckFailed(__FILE__, __LINE__, #cond, fmt::format("" __VA_ARGS__)); \
  } while (0)
