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

// `code` defaults to the status number (OpenAI sends a string code or null; vLLM the number).
std::string ApiErrorBody(int status, std::string_view message, std::string_view type,
                         std::string_view code = "", std::string_view param = "");
HttpResponse ApiError(int status, std::string_view message, std::string_view type,
                      std::string_view code = "", std::string_view param = "");

// An Error from a lower layer as an HTTP answer: kInvalidArgument 400, kNotFound 404,
// kResourceExhausted 429 + Retry-After, kUnavailable 503 + Retry-After, kCancelled 409,
// everything else 500.
HttpResponse ApiErrorFor(const Error& error);

}  // namespace mineru::service
