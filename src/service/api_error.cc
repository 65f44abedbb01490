// SPDX-License-Identifier: Apache-2.0
#include "service/api_error.h"

#include "base/json.h"

namespace mineru::service {

std::string ApiErrorBody(std::string_view message, std::string_view type, std::string_view code,
                         std::string_view param) {
  Json error{{"message", message},
             {"type", type},
             {"param", param.empty() ? Json(nullptr) : Json(param)},
             {"code", code.empty() ? Json(nullptr) : Json(code)}};
  return DumpJson(Json{{"object", "error"}, {"error", std::move(error)}});
}

HttpResponse ApiError(int status, std::string_view message, std::string_view type,
                      std::string_view code, std::string_view param) {
  HttpResponse r = HttpResponse::Json(status, ApiErrorBody(message, type, code, param));
  if (status == 429 || status == 503)
    r.headers["Retry-After"] = std::to_string(kRetryAfter.count());
  return r;
}

HttpResponse ApiErrorFor(const Error& error) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kCorrupt:
    case ErrorCode::kUnsupported:
      return ApiError(400, error.message, "invalid_request_error");
    case ErrorCode::kNotFound:
      return ApiError(404, error.message, "not_found_error");
    case ErrorCode::kResourceExhausted:
      return ApiError(429, error.message, "rate_limit_error", "rate_limit_exceeded");
    case ErrorCode::kUnavailable:
      return ApiError(503, error.message, "unavailable_error", "service_unavailable");
    case ErrorCode::kCancelled:
      return ApiError(409, error.message, "conflict_error");
    default:
      return ApiError(500, error.message, "server_error");
  }
}

}  // namespace mineru::service
