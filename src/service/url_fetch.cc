// SPDX-License-Identifier: Apache-2.0
// FetchUrl on libcurl's easy interface: one handle per call (no shared state between the
// handler threads that call it), redirects followed here so that each hop is checked again.
#include "service/url_fetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>

#include "base/curl_easy.h"
#include "service/remote_address.h"

namespace mineru::service {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kUserAgent[] = "mineru-cpp";

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// The numeric form and port of an AF_INET/AF_INET6 socket address; nullopt for other families.
std::optional<FetchEndpoint> EndpointOf(const sockaddr* address, socklen_t length) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in v4;
    std::memcpy(&v4, address, sizeof v4);
    if (inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text) == nullptr) return std::nullopt;
    return FetchEndpoint{text, ntohs(v4.sin_port)};
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 v6;
    std::memcpy(&v6, address, sizeof v6);
    if (inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text) == nullptr) return std::nullopt;
    return FetchEndpoint{text, ntohs(v6.sin6_port)};
  }
  return std::nullopt;
}

// The gate: libcurl calls this for every connection it opens, with the resolved address it is
// about to connect to. Refusing (CURL_SOCKET_BAD) makes libcurl try the host's next address or
// fail with CURLE_COULDNT_CONNECT, exactly as for a closed port.
curl_socket_t OpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  const auto* limits = static_cast<const FetchLimits*>(user);
  if (purpose != CURLSOCKTYPE_IPCXN || address == nullptr) return CURL_SOCKET_BAD;
  const socklen_t length = static_cast<socklen_t>(address->addrlen);
  bool allowed = false;
  if (limits->allow_endpoint) {
    const std::optional<FetchEndpoint> endpoint = EndpointOf(&address->addr, length);
    allowed = endpoint && limits->allow_endpoint(*endpoint);
  } else if (address->family == AF_INET || address->family == AF_INET6) {
    allowed = limits->allow_private_addresses || IsPublicAddress(&address->addr, length);
  }
  if (!allowed) return CURL_SOCKET_BAD;
  // SOCK_CLOEXEC: the server spawns helper processes, which must not inherit the socket.
  const int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  return fd < 0 ? CURL_SOCKET_BAD : fd;
}

std::string QuotedUrl(std::string_view url) {
  if (url.size() <= kMaxUrlInError) return std::string(url);
  return std::string(url.substr(0, kMaxUrlInError)) + "...";
}

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

std::string UnreachableText(std::chrono::milliseconds timeout) {
  return fmt::format(
      "not fetched: the address is not allowed or not reachable, or no complete answer came "
      "within {} ms (non-public addresses are fetched only where the server allows private "
      "remote images)",
      timeout.count());
}

bool IsHttpUrl(std::string_view url) {
  return StartsWithNoCase(url, "http://") || StartsWithNoCase(url, "https://");
}

Result<std::string> FetchUrl(std::string_view url, const FetchLimits& limits) {
  if (!IsHttpUrl(url)) {
    return Fail(ErrorCode::kInvalidArgument, "only http:// and https:// URLs can be fetched");
  }
  const std::string quoted = QuotedUrl(url);
  auto unreachable = [&] {
    return Fail(ErrorCode::kUnavailable, "{}: {}", quoted, UnreachableText(limits.timeout));
  };
  CurlEasy curl;
  if (!curl) return Fail(ErrorCode::kInternal, "cannot create a libcurl handle");
  CURL* h = curl.get();
  CurlBody sink;
  sink.max_bytes = limits.max_bytes;
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // handler threads: no SIGALRM for DNS timeouts
#if LIBCURL_VERSION_NUM >= 0x075500           // 7.85: the string forms; the bitmasks are deprecated
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);  // followed below, one checked hop at a time
  curl_easy_setopt(h, CURLOPT_PROXY, "");           // "": no proxy, whatever the environment says
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, &OpenSocket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &limits);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect_timeout.count()));
  // Refused before the body when Content-Length announces more; the write callback covers
  // bodies without a length.
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_bytes));
  curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);  // >= 400: no body read, status kept
  curl_easy_setopt(h, CURLOPT_USERAGENT, kUserAgent);
  sink.Attach(h);

  const Clock::time_point deadline = Clock::now() + limits.timeout;
  std::string hop_url(url);
  for (int redirects = 0;; ++redirects) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return unreachable();
    curl_easy_setopt(h, CURLOPT_URL, hop_url.c_str());
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(left));
    sink.Clear();

    const CURLcode code = curl_easy_perform(h);
    const long status = curl.ResponseCode();
    if (code == CURLE_FILESIZE_EXCEEDED || sink.too_large) {
      return Fail(ErrorCode::kResourceExhausted,
                  "{}: the body is larger than the limit of {} bytes", quoted, limits.max_bytes);
    }
    if (code == CURLE_HTTP_RETURNED_ERROR) {
      return Fail(ErrorCode::kUnavailable, "{}: the server answered HTTP {}", quoted, status);
    }
    // Everything else that failed (a refused address, DNS, connect, TLS, a reply that is not
    // HTTP, a timeout) reads the same.
    if (code != CURLE_OK) return unreachable();
    if (status >= 200 && status <= 299) return std::move(sink.bytes);
    const char* location = nullptr;
    if (!IsRedirect(status) || curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &location) != CURLE_OK ||
        location == nullptr) {
      // 1xx are consumed by libcurl and >= 400 fail above: a 3xx without a usable Location.
      return Fail(ErrorCode::kUnavailable, "{}: the server answered HTTP {}", quoted, status);
    }
    if (redirects >= limits.max_redirects) {
      return Fail(ErrorCode::kResourceExhausted, "{}: more than {} redirects", quoted,
                  limits.max_redirects);
    }
    if (!IsHttpUrl(location)) {
      return Fail(ErrorCode::kInvalidArgument,
                  "{}: redirected to a URL that is not http:// or https://", quoted);
    }
    hop_url = location;  // copied before the next perform invalidates it
  }
}

}  // namespace mineru::service
