// SPDX-License-Identifier: Apache-2.0
// The one error shape of our JSON APIs (OpenAI's error object plus vLLM's top-level marker,
// which MinerU's client checks):
//   {"object": "error", "error": {"message", "type", "param", "code"}}
// and the Retry-After answers of backpressure.
//
// Rules:
// * "code" is never null: a stable string per kind of error (docs/API.md, "Errors"), the one a
//   caller names (the limit's name, "model_not_found", ...) or else DefaultErrorCode(status).
// * 429 and 503 are for conditions that pass and carry Retry-After; a permanent limit is 413
//   (or 400) naming the limit, so a client that honours Retry-After does not retry forever.
// * No message a client sees holds an absolute server path (task inputs, work directories,
//   model files): ApiError and ApiErrorBody pass every message through WithoutServerPaths.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/server_paths.h"
#include "base/status.h"
#include "service/http_server.h"

namespace mineru::service {

// Seconds a client is told to wait after a 429 or 503 (Retry-After).
inline constexpr std::chrono::seconds kRetryAfter{1};

// The code of an error answered with `status` when the answer names none:
//   400 invalid_request, 401 unauthorized, 403 forbidden, 404 not_found,
//   405 method_not_allowed, 408 request_timeout, 409 conflict, 411 length_required,
//   413 limit_exceeded, 415 unsupported_media_type, 417 expectation_failed,
//   422 invalid_request, 429 rate_limit_exceeded, 431 header_too_large, 499 client_closed,
//   500 internal_error, 501 not_implemented, 503 service_unavailable, 504 request_timeout;
//   any other 4xx invalid_request, any other 5xx internal_error.
std::string_view DefaultErrorCode(int status);

// The code of an answer with `status` and `type` that names none: the type itself when it is
// specific (it does not end in "_error": "task_failed", "server_overloaded"), else
// DefaultErrorCode(status).
std::string_view ErrorCodeFor(int status, std::string_view type);

// An empty code is the type when the type is specific (it does not end in "_error":
// "task_failed"), else the generic code of that type ("not_found_error": "not_found"); an empty
// param is null (as OpenAI sends it).
std::string ApiErrorBody(std::string_view message, std::string_view type,
                         std::string_view code = "", std::string_view param = "");
// The body with its status; an empty code is ErrorCodeFor(status, type). 429 and 503 also carry
// Retry-After (kRetryAfter).
HttpResponse ApiError(int status, std::string_view message, std::string_view type,
                      std::string_view code = "", std::string_view param = "");

// An Error from a lower layer as an HTTP answer: kInvalidArgument, kCorrupt and kUnsupported
// 400; kNotFound 404; kResourceExhausted 413 "limit_exceeded" (a named limit of the request or
// its document: permanent, so not 429); kUnavailable 503 + Retry-After; kCancelled 409;
// everything else 500. Callers answer a passing condition that lower layers report as
// kResourceExhausted (a full queue) themselves, with 429 or 503 and Retry-After.
HttpResponse ApiErrorFor(const Error& error);

}  // namespace mineru::service
