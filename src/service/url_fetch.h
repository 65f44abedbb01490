// SPDX-License-Identifier: Apache-2.0
// Fetching one remote resource (an image named by URL in a chat request) with hard bounds, for
// servers that allow remote images (off by default: a server that fetches URLs its clients name
// can be steered at its own and its network's internal addresses).
//
//   FetchLimits limits;
//   limits.max_bytes = options.max_image_bytes;
//   MINERU_ASSIGN_OR_RETURN(std::string body, FetchUrl("https://example.com/page.png", limits));
//
// Rules:
// * Only http:// and https:// URLs, and redirects only to those (file://, ftp://, ... are
//   refused wherever they appear); at most max_redirects redirects, followed here one hop at a
//   time (not by libcurl), each hop a new check.
// * Every connection, on every hop, goes only to a public unicast address (remote_address.h)
//   unless allow_private_addresses: the address is checked in libcurl's open-socket callback,
//   i.e. the one resolved address the socket is about to connect to, so URL spellings
//   ("localhost", "2130706433", "0x7f.1", "evil@127.0.0.1", "0.0.0.0") and DNS answers that
//   change between lookups (rebinding) cannot slip past. Proxies from the environment are
//   ignored (a proxy would make the checked address the proxy's).
// * One error text (kUnavailable, UnreachableText) for every target refused, not reachable,
//   or not answering in time: the client cannot tell a refused address from a closed port,
//   a closed port from an open one that speaks no HTTP, or a filtered one from a silent one.
//   Only a server that was allowed and answered HTTP is described (its status, its size, its
//   redirects).
// * The whole transfer (connects, redirects, bodies) ends within `timeout`; connecting within
//   connect_timeout.
// * A body larger than max_bytes is refused: at once when Content-Length announces it, else as
//   soon as the received bytes pass it (nothing beyond max_bytes + one network read is held).
// * Any final status other than 2xx is an error naming the status. Bodies are never
//   decompressed. Error texts name the URL as the client sent it (cut to kMaxUrlInError
//   bytes), never a redirect's target.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "image/decode.h"

namespace mineru::service {

inline constexpr int kDefaultFetchMaxRedirects = 3;
inline constexpr std::chrono::milliseconds kDefaultFetchTimeout{10'000};
inline constexpr std::chrono::milliseconds kDefaultFetchConnectTimeout{5'000};

// Longest prefix of a URL quoted in an error text.
inline constexpr size_t kMaxUrlInError = 256;

// What FetchUrl says, after "<url>: ", about every target it refused, could not reach or that
// did not answer within `timeout` (FetchLimits::timeout): the same text for all of them.
std::string UnreachableText(std::chrono::milliseconds timeout);

// One address a connection is about to be opened to.
struct FetchEndpoint {
  std::string ip;  // numeric, as inet_ntop writes it: "203.0.113.7", "2001:db8::1"
  int port = 0;
};

struct FetchLimits {
  uint64_t max_bytes = image::kDefaultMaxImageBytes;  // largest body accepted
  int max_redirects = kDefaultFetchMaxRedirects;      // 0: redirects are errors
  std::chrono::milliseconds timeout = kDefaultFetchTimeout;
  std::chrono::milliseconds connect_timeout = kDefaultFetchConnectTimeout;
  // Connect to loopback, private, link-local, ... addresses too (--allow-private-remote-images).
  bool allow_private_addresses = false;
  // Replaces the address rule above when set (tests: one local port allowed, another not).
  std::function<bool(const FetchEndpoint&)> allow_endpoint;
};

// True for URLs FetchUrl may fetch: "http://" or "https://" (scheme case-insensitive).
bool IsHttpUrl(std::string_view url);

// The body of a 2xx answer. Errors: kInvalidArgument (not an http(s) URL, or a redirect to
// another scheme), kResourceExhausted (body over max_bytes, too many redirects),
// kUnavailable ("<url>: " + UnreachableText(timeout) for a refused address and every connection,
// TLS, protocol or timeout failure; "<url>: the server answered HTTP <status>" for a non-2xx
// status).
Result<std::string> FetchUrl(std::string_view url, const FetchLimits& limits);

}  // namespace mineru::service
