// SPDX-License-Identifier: Apache-2.0
#include "pipeline/model_server_transfer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace mineru::pipeline {
namespace {

// First bytes of a refused answer's body quoted in its error.
constexpr size_t kBodyExcerptBytes = 200;

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Failures a retry cannot mend: the URL, the protocol, the TLS peer, the client itself.
bool PermanentTransportError(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_LOGIN_DENIED:
    case CURLE_BAD_FUNCTION_ARGUMENT:
      return true;
    default:
      return false;
  }
}

// The body's first bytes on one line, for an error text.
std::string Excerpt(std::string_view body) {
  std::string out(body.substr(0, kBodyExcerptBytes));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (body.size() > kBodyExcerptBytes) out += "...";
  return out;
}

}  // namespace

Result<std::unique_ptr<ModelServerTransfer>> ModelServerTransfer::Make(
    const ModelServerOptions& options, const std::string& url,
    std::shared_ptr<const std::string> body, std::chrono::milliseconds timeout) {
  std::unique_ptr<ModelServerTransfer> t(new ModelServerTransfer());
  if (!t->easy_) return Fail(ErrorCode::kInternal, "libcurl: cannot make a handle");
  t->body_.max_bytes = options.max_answer_bytes;
  t->max_retry_after_ = options.retry.max_retry_after;
  t->request_body_ = std::move(body);
  CURL* h = t->easy_.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for DNS timeouts: threads
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max<int64_t>(1, options.connect_timeout.count())));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, timeout.count())));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "mineru-cpp");
  if (!options.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options.ca_file.c_str());
  t->body_.Attach(h);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &ModelServerTransfer::Header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(h, CURLOPT_PRIVATE, t.get());
  // Answers are read as sent: a server that compresses them anyway fails the JSON rule.
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, nullptr);
  bool headers = t->easy_.AddHeader("Accept: application/json");
  // No "Expect: 100-continue" for large bodies: one round trip less on every crop request.
  headers = headers && t->easy_.AddHeader("Expect:");
  if (!options.api_key.empty()) {
    headers = headers && t->easy_.AddHeader("Authorization: Bearer " + options.api_key);
  }
  if (t->request_body_) {
    headers = headers && t->easy_.AddHeader("Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, t->request_body_->data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t->request_body_->size()));
  }
  if (!headers) return Fail(ErrorCode::kInternal, "libcurl: out of memory");
  t->easy_.UseHeaders();
  return t;
}

ModelServerTransfer::~ModelServerTransfer() = default;

size_t ModelServerTransfer::Header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<ModelServerTransfer*>(user);
  const size_t n = size * count;
  const std::string_view line(data, n);
  if (StartsWithNoCase(line, "HTTP/")) {
    t->retry_after_.clear();  // a new response (after a 100 Continue): its own headers
  } else if (StartsWithNoCase(line, "retry-after:")) {
    t->retry_after_ = std::string(Trim(line.substr(12)));
  }
  return n;
}

AttemptOutcome ModelServerTransfer::Finish(int code_value) {
  const auto code = static_cast<CURLcode>(code_value);
  AttemptOutcome out;
  out.status = easy_.ResponseCode();
  if (code != CURLE_OK) {
    if (body_.too_large) {
      out.kind = AttemptOutcome::Kind::kFatal;
      out.error = fmt::format(
          "the answer is larger than {} bytes (--model-server-max-answer-bytes)", body_.max_bytes);
      return out;
    }
    out.kind = PermanentTransportError(code) ? AttemptOutcome::Kind::kFatal
                                             : AttemptOutcome::Kind::kRetryable;
    out.error = curl_easy_strerror(code);
    return out;
  }
  if (out.status >= 200 && out.status < 300) {
    out.kind = AttemptOutcome::Kind::kAnswer;
    out.body = std::move(body_.bytes);
    return out;
  }
  out.error = fmt::format("HTTP {}: {}", out.status, Excerpt(body_.bytes));
  if (IsRetryableStatus(out.status)) {
    out.kind = AttemptOutcome::Kind::kRetryable;
    out.retry_after =
        ParseRetryAfter(retry_after_, std::chrono::system_clock::now(), max_retry_after_);
  } else {
    out.kind = AttemptOutcome::Kind::kFatal;
  }
  return out;
}

AttemptOutcome ModelServerTransfer::Perform() { return Finish(curl_easy_perform(easy_.get())); }

}  // namespace mineru::pipeline
