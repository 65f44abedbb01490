// SPDX-License-Identifier: Apache-2.0
// The one error shape of our JSON APIs (OpenAI's error object plus vLLM's top-level marker,
// which MinerU's client checks):
//   {"object": "error", "error": {"message", "type", "param", "code"}}
// and the Retry-After answers of backpressure.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"
#include "service/http_server.h"

namespace mineru::service {

// Seconds a client is told to wait after a 429 or 503 (Retry-After).
inline constexpr std::chrono::seconds kRetryAfter{1};

// An empty code or param is null (as OpenAI sends them).
std::string ApiErrorBody(std::string_view message, std::string_view type,
                         std::string_view code = "", std::string_view param = "");
// The body with its status; 429 and 503 also carry Retry-After (kRetryAfter).
HttpResponse ApiError(int status, std::string_view message, std::string_view type,
                      std::string_view code = "", std::string_view param = "");

// An Error from a lower layer as an HTTP answer: kInvalidArgument 400, kNotFound 404,
// kResourceExhausted 429 + Retry-After, kUnavailable 503 + Retry-After, kCancelled 409,
// everything else 500.
HttpResponse ApiErrorFor(const Error& error);

}  // namespace mineru::service
