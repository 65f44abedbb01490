// SPDX-License-Identifier: Apache-2.0
// Fetching one remote resource (an image named by URL in a chat request) with hard bounds, for
// servers that allow remote images (off by default: a server that fetches URLs its clients name
// can be steered at internal addresses, spec reliability.md 8).
//
//   FetchLimits limits;
//   limits.max_bytes = options.max_image_bytes;
//   MINERU_ASSIGN_OR_RETURN(std::string body, FetchUrl("https://example.com/page.png", limits));
//
// Rules:
// * Only http:// and https:// URLs, and redirects only to those (file://, ftp://, ... are
//   refused wherever they appear); at most max_redirects redirects.
// * The whole transfer (connect, redirects, body) ends within `timeout`; connecting within
//   connect_timeout.
// * A body larger than max_bytes is refused: at once when Content-Length announces it, else as
//   soon as the received bytes pass it (nothing beyond max_bytes + one network read is held).
// * Any status other than 2xx is an error naming the status. Bodies are never decompressed.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "image/decode.h"

namespace mineru::service {

inline constexpr int kDefaultFetchMaxRedirects = 3;
inline constexpr std::chrono::milliseconds kDefaultFetchTimeout{10'000};
inline constexpr std::chrono::milliseconds kDefaultFetchConnectTimeout{5'000};

struct FetchLimits {
  uint64_t max_bytes = image::kDefaultMaxImageBytes;  // largest body accepted
  int max_redirects = kDefaultFetchMaxRedirects;      // 0: redirects are errors
  std::chrono::milliseconds timeout = kDefaultFetchTimeout;
  std::chrono::milliseconds connect_timeout = kDefaultFetchConnectTimeout;
};

// True for URLs FetchUrl may fetch: "http://" or "https://" (scheme case-insensitive).
bool IsHttpUrl(std::string_view url);

// The body of a 2xx answer. Errors: kInvalidArgument (not an http(s) URL, or a redirect to
// another scheme), kResourceExhausted (body over max_bytes, too many redirects),
// kUnavailable (connection, TLS or timeout failures; a non-2xx status).
Result<std::string> FetchUrl(std::string_view url, const FetchLimits& limits);

}  // namespace mineru::service
