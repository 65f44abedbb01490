// SPDX-License-Identifier: Apache-2.0
// FetchUrl on libcurl's easy interface: one handle per call (no shared state between the
// handler threads that call it).
#include "service/url_fetch.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

namespace mineru::service {
namespace {

constexpr char kUserAgent[] = "mineru-cpp";

// curl_global_init is not thread-safe in every libcurl build: run it once, before any handle.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

struct Sink {
  std::string body;
  uint64_t max_bytes = 0;
  bool too_large = false;
};

// Appends; returning less than given makes curl abort with CURLE_WRITE_ERROR.
size_t Write(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t n = size * count;
  if (sink->body.size() + n > sink->max_bytes) {
    sink->too_large = true;
    return 0;
  }
  sink->body.append(data, n);
  return n;
}

using Handle = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;

}  // namespace

bool IsHttpUrl(std::string_view url) {
  return StartsWithNoCase(url, "http://") || StartsWithNoCase(url, "https://");
}

Result<std::string> FetchUrl(std::string_view url, const FetchLimits& limits) {
  if (!IsHttpUrl(url)) {
    return Fail(ErrorCode::kInvalidArgument, "only http:// and https:// URLs can be fetched");
  }
  InitCurlOnce();
  Handle curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) return Fail(ErrorCode::kInternal, "cannot create a libcurl handle");
  CURL* h = curl.get();
  const std::string url_text(url);
  char error_buffer[CURL_ERROR_SIZE] = {};
  Sink sink;
  sink.max_bytes = limits.max_bytes;
  curl_easy_setopt(h, CURLOPT_URL, url_text.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // handler threads: no SIGALRM for DNS timeouts
#if LIBCURL_VERSION_NUM >= 0x075500           // 7.85: the string forms; the bitmasks are deprecated
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, limits.max_redirects > 0 ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, static_cast<long>(std::max(limits.max_redirects, 0)));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect_timeout.count()));
  // Refused before the body when Content-Length announces more; the write callback covers
  // bodies without a length.
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_bytes));
  curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);  // >= 400: no body read, status kept
  curl_easy_setopt(h, CURLOPT_USERAGENT, kUserAgent);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);

  const CURLcode code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  const std::string why = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  if (code == CURLE_FILESIZE_EXCEEDED || sink.too_large) {
    return Fail(ErrorCode::kResourceExhausted, "{}: the body is larger than the limit of {} bytes",
                url_text, limits.max_bytes);
  }
  if (code == CURLE_UNSUPPORTED_PROTOCOL) {
    return Fail(ErrorCode::kInvalidArgument,
                "{}: redirected to a URL that is not http:// or https:// ({})", url_text, why);
  }
  if (code == CURLE_TOO_MANY_REDIRECTS) {
    return Fail(ErrorCode::kResourceExhausted, "{}: more than {} redirects", url_text,
                limits.max_redirects);
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return Fail(ErrorCode::kUnavailable, "{}: no complete answer within {} ms ({})", url_text,
                limits.timeout.count(), why);
  }
  if (code == CURLE_HTTP_RETURNED_ERROR) {
    return Fail(ErrorCode::kUnavailable, "{}: the server answered HTTP {}", url_text, status);
  }
  if (code != CURLE_OK) {
    return Fail(ErrorCode::kUnavailable, "{}: fetch failed: {}", url_text, why);
  }
  // 1xx are consumed by curl and >= 400 fail above; what is left besides 2xx is a redirect
  // without a Location or one not followed (max_redirects 0).
  if (status < 200 || status > 299) {
    return Fail(ErrorCode::kUnavailable, "{}: the server answered HTTP {}", url_text, status);
  }
  return std::move(sink.body);
}

}  // namespace mineru::service
