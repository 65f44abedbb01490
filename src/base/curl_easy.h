// SPDX-License-Identifier: Apache-2.0
// The libcurl handle every fetching part of the program shares: the model server client
// (pipeline/model_server_transfer.h), remote images (service/url_fetch.h) and Hub downloads
// (apps/hub_download.h). Each sets its own options (timeouts, limits, protocols, redirects) on
// the handle; what they share is here: libcurl's one-time global setup, the handle and its
// header list freed together, and a response body collected under a byte limit.
//
//   CurlEasy curl;
//   if (!curl) return Fail(ErrorCode::kInternal, "libcurl: cannot make a handle");
//   CurlBody body;
//   body.max_bytes = limit;
//   body.Attach(curl.get());
//   curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
//   const CURLcode code = curl_easy_perform(curl.get());  // body.too_large: over the limit
//
// Its own library (mineru_curl) so that only the layers that fetch link libcurl.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <string>

namespace mineru {

// curl_global_init(CURL_GLOBAL_DEFAULT), once per process, on the first call (std::call_once:
// it is not thread-safe in every libcurl build and must run before the first handle). Returns
// its result, the same on every call. CurlEasy calls it; code that makes other libcurl objects
// (multi handles, URL handles) calls it first.
CURLcode InitCurl();

// One easy handle and the header lines it sends, freed together. Not thread-safe: one thread
// at a time per handle (libcurl's rule).
class CurlEasy {
 public:
  // InitCurl(), then curl_easy_init; false (get() null) when either failed.
  CurlEasy();
  ~CurlEasy();
  CurlEasy(const CurlEasy&) = delete;
  CurlEasy& operator=(const CurlEasy&) = delete;

  CURL* get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

  // Adds one header line ("Name: value"; "Name:" stops libcurl sending its own); false when
  // libcurl is out of memory (the lines added before are kept).
  bool AddHeader(const std::string& line);
  // Sends the lines added so far (CURLOPT_HTTPHEADER); the list lives as long as the handle.
  void UseHeaders();
  // curl_easy_reset (every option back to its default) and the header lines dropped.
  void Reset();
  // The last response's HTTP status; 0 when none arrived.
  long ResponseCode() const;

 private:
  CURL* handle_ = nullptr;
  curl_slist* headers_ = nullptr;
};

// A response body held in memory, refused past max_bytes: the write callback takes nothing of a
// piece that would pass the limit, which makes libcurl abort with CURLE_WRITE_ERROR, and sets
// too_large so that the caller can tell that from a transport failure.
struct CurlBody {
  uint64_t max_bytes = 0;
  std::string bytes;
  bool too_large = false;

  // Sets the handle's CURLOPT_WRITEFUNCTION and CURLOPT_WRITEDATA to this body.
  void Attach(CURL* handle);
  // Empty again (before the next transfer on the same handle).
  void Clear();
};

}  // namespace mineru
