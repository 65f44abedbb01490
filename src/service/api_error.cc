// SPDX-License-Identifier: Apache-2.0
#include "service/api_error.h"

#include "base/json.h"

namespace mineru::service {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// OpenAI's generic types ("..._error") say little; a type without that suffix names the error
// itself ("task_failed", "server_overloaded") and is its own code.
bool IsSpecificType(std::string_view type) { return !type.empty() && !EndsWith(type, "_error"); }

// The code of a generic type, for bodies sent without a status (stream events).
std::string_view CodeOfType(std::string_view type) {
  if (type == "invalid_request_error") return "invalid_request";
  if (type == "not_found_error") return "not_found";
  if (type == "rate_limit_error") return "rate_limit_exceeded";
  if (type == "unavailable_error") return "service_unavailable";
  if (type == "timeout_error") return "request_timeout";
  if (type == "conflict_error") return "conflict";
  if (type == "authentication_error") return "unauthorized";
  if (type == "permission_error") return "forbidden";
  if (IsSpecificType(type)) return type;
  return "internal_error";  // "server_error" and anything unknown
}

std::string Body(std::string_view message, std::string_view type, std::string_view code,
                 std::string_view param) {
  Json error{{"message", WithoutServerPaths(message)},
             {"type", type},
             {"param", param.empty() ? Json(nullptr) : Json(param)},
             {"code", code}};
  return DumpJson(Json{{"object", "error"}, {"error", std::move(error)}});
}

}  // namespace

std::string_view DefaultErrorCode(int status) {
  switch (status) {
    case 400:
    case 422:
      return "invalid_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 408:
    case 504:
      return "request_timeout";
    case 409:
      return "conflict";
    case 411:
      return "length_required";
    case 413:
      return "limit_exceeded";
    case 415:
      return "unsupported_media_type";
    case 417:
      return "expectation_failed";
    case 429:
      return "rate_limit_exceeded";
    case 431:
      return "header_too_large";
    case 499:
      return "client_closed";
    case 501:
      return "not_implemented";
    case 503:
      return "service_unavailable";
    default:
      return status >= 400 && status < 500 ? "invalid_request" : "internal_error";
  }
}

std::string_view ErrorCodeFor(int status, std::string_view type) {
  return IsSpecificType(type) ? type : DefaultErrorCode(status);
}

std::string ApiErrorBody(std::string_view message, std::string_view type, std::string_view code,
                         std::string_view param) {
  return Body(message, type, code.empty() ? CodeOfType(type) : code, param);
}

HttpResponse ApiError(int status, std::string_view message, std::string_view type,
                      std::string_view code, std::string_view param) {
  if (code.empty()) code = ErrorCodeFor(status, type);
  HttpResponse r = HttpResponse::Json(status, Body(message, type, code, param));
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
      return ApiError(413, error.message, "invalid_request_error", "limit_exceeded");
    case ErrorCode::kUnavailable:
      return ApiError(503, error.message, "unavailable_error", "service_unavailable");
    case ErrorCode::kCancelled:
      return ApiError(409, error.message, "conflict_error");
    default:
      return ApiError(500, error.message, "server_error");
  }
}

}  // namespace mineru::service
