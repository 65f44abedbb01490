// SPDX-License-Identifier: Apache-2.0
// One HTTP attempt against a model server through a libcurl easy handle (base/curl_easy.h): set
// up with the
// server's options (timeouts, API key, keep-alive, HTTP/1.1), the answer collected under
// max_answer_bytes, then judged by the retry rule (pipeline/retry_policy.h). The blocking
// GET /v1/models and the remote generator's multi-interface transfers share it.
//
// Error texts never carry the server's address or libcurl's detail buffer (which names hosts
// and ports): they reach API clients through task errors and reports, and the model server's
// address is the operator's business. They say what failed ("Couldn't connect to server",
// "Timeout was reached", "HTTP 503: <first bytes of the body>").
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/curl_easy.h"
#include "base/status.h"
#include "pipeline/model_server.h"

namespace mineru::pipeline {

// What one attempt came to.
struct AttemptOutcome {
  enum class Kind {
    kAnswer,     // a 2xx answer, read whole: `body`
    kRetryable,  // a transport failure or 429/500/502/503/504: `error`, `retry_after`
    kFatal,      // anything else: `error`
  };
  Kind kind = Kind::kFatal;
  long status = 0;  // HTTP status, 0 when none arrived
  std::string body;
  std::string error;
  std::optional<std::chrono::milliseconds> retry_after;  // the server's Retry-After, capped
};

class ModelServerTransfer {
 public:
  // `body` empty: GET, else POST of application/json. `timeout`: the whole attempt.
  // Errors: kInternal when libcurl cannot make a handle.
  static Result<std::unique_ptr<ModelServerTransfer>> Make(const ModelServerOptions& options,
                                                           const std::string& url,
                                                           std::shared_ptr<const std::string> body,
                                                           std::chrono::milliseconds timeout);
  ~ModelServerTransfer();
  ModelServerTransfer(const ModelServerTransfer&) = delete;
  ModelServerTransfer& operator=(const ModelServerTransfer&) = delete;

  CURL* easy() const { return easy_.get(); }
  // Judges the attempt once libcurl is done with it (`code`: its CURLcode).
  AttemptOutcome Finish(int code);
  // curl_easy_perform, then Finish.
  AttemptOutcome Perform();

 private:
  ModelServerTransfer() = default;
  static size_t Header(char* data, size_t size, size_t count, void* user);

  CurlEasy easy_;
  std::shared_ptr<const std::string> request_body_;  // held: libcurl reads it in place
  CurlBody body_;                                    // the answer, under max_answer_bytes
  std::string retry_after_;
  std::chrono::milliseconds max_retry_after_{0};
};

}  // namespace mineru::pipeline
