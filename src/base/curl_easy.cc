// SPDX-License-Identifier: Apache-2.0
#include "base/curl_easy.h"

#include <mutex>

namespace mineru {
namespace {

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<CurlBody*>(user);
  const size_t n = size * count;
  if (body->bytes.size() + n > body->max_bytes) {
    body->too_large = true;
    return 0;  // less than given: libcurl aborts with CURLE_WRITE_ERROR
  }
  body->bytes.append(data, n);
  return n;
}

}  // namespace

CURLcode InitCurl() {
  static std::once_flag once;
  static CURLcode result = CURLE_OK;
  std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return result;
}

CurlEasy::CurlEasy() {
  if (InitCurl() == CURLE_OK) handle_ = curl_easy_init();
}

CurlEasy::~CurlEasy() {
  if (handle_ != nullptr) curl_easy_cleanup(handle_);
  if (headers_ != nullptr) curl_slist_free_all(headers_);
}

bool CurlEasy::AddHeader(const std::string& line) {
  curl_slist* grown = curl_slist_append(headers_, line.c_str());
  if (grown == nullptr) return false;
  headers_ = grown;
  return true;
}

void CurlEasy::UseHeaders() { curl_easy_setopt(handle_, CURLOPT_HTTPHEADER, headers_); }

void CurlEasy::Reset() {
  curl_easy_reset(handle_);
  if (headers_ != nullptr) curl_slist_free_all(headers_);
  headers_ = nullptr;
}

long CurlEasy::ResponseCode() const {
  long code = 0;
  curl_easy_getinfo(handle_, CURLINFO_RESPONSE_CODE, &code);
  return code;
}

void CurlBody::Attach(CURL* handle) {
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, this);
}

void CurlBody::Clear() {
  bytes.clear();
  too_large = false;
}

}  // namespace mineru
