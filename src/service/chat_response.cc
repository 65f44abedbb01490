// SPDX-License-Identifier: Apache-2.0
#include "service/chat_response.h"

#include <cstdio>
#include <random>
#include <string_view>
#include <utility>

#include "service/api_error.h"

namespace mineru::service {
namespace {

constexpr std::string_view kTimeoutType = "timeout_error";
constexpr std::string_view kTimeoutCode = "request_timeout";

std::string TimeoutMessage(std::chrono::milliseconds timeout) {
  return "the request did not finish within the server's request timeout of " +
         std::to_string(timeout.count()) + " ms (--chat-timeout)";
}

}  // namespace

std::string NewCompletionId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof(buf), "chatcmpl-%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffu));
  return buf;
}

Json UsageJson(const ChatOutcome& o) {
  return Json{{"prompt_tokens", o.prompt_tokens},
              {"completion_tokens", o.completion_tokens},
              {"total_tokens", o.prompt_tokens + o.completion_tokens}};
}

std::string CompletionJson(const CompletionIdentity& identity, const std::string& text,
                           const ChatOutcome& o) {
  Json choice{{"index", 0},
              {"message", {{"role", "assistant"}, {"content", text}}},
              {"logprobs", nullptr},
              {"finish_reason", o.finish_reason}};
  return DumpJson(Json{{"id", identity.id},
                       {"object", "chat.completion"},
                       {"created", identity.created},
                       {"model", identity.model},
                       {"choices", Json::array({choice})},
                       {"usage", UsageJson(o)}});
}

std::string CompletionChunk(const CompletionIdentity& identity, Json delta, Json finish_reason) {
  Json choice{{"index", 0},
              {"delta", std::move(delta)},
              {"logprobs", nullptr},
              {"finish_reason", std::move(finish_reason)}};
  return DumpJson(Json{{"id", identity.id},
                       {"object", "chat.completion.chunk"},
                       {"created", identity.created},
                       {"model", identity.model},
                       {"choices", Json::array({choice})}});
}

std::string RoleChunk(const CompletionIdentity& identity) {
  return CompletionChunk(identity, Json{{"role", "assistant"}, {"content", ""}}, nullptr);
}

std::string ContentChunk(const CompletionIdentity& identity, const std::string& text) {
  return CompletionChunk(identity, Json{{"content", text}}, nullptr);
}

std::string FinishChunk(const CompletionIdentity& identity, const std::string& finish_reason) {
  return CompletionChunk(identity, Json::object(), finish_reason);
}

std::string UsageChunk(const CompletionIdentity& identity, const ChatOutcome& o) {
  return DumpJson(Json{{"id", identity.id},
                       {"object", "chat.completion.chunk"},
                       {"created", identity.created},
                       {"model", identity.model},
                       {"choices", Json::array()},
                       {"usage", UsageJson(o)}});
}

std::string StreamAbortEvents() {
  return "data: " +
         ApiErrorBody("the server is shutting down: the request did not finish in time",
                      "unavailable_error", "service_unavailable") +
         "\n\ndata: [DONE]\n\n";
}

HttpResponse SubmitErrorResponse(const Error& error) {
  switch (error.code) {
    case ErrorCode::kResourceExhausted:
      return ApiError(429, error.message, "rate_limit_error", "rate_limit_exceeded");
    case ErrorCode::kInvalidArgument:
      return ApiError(400, error.message, "invalid_request_error");
    case ErrorCode::kUnavailable:
      return ApiError(503, error.message, "unavailable_error", "service_unavailable");
    default:
      return ApiError(500, error.message, "server_error");
  }
}

HttpResponse TimeoutResponse(std::chrono::milliseconds timeout) {
  return ApiError(504, TimeoutMessage(timeout), kTimeoutType, kTimeoutCode);
}

std::string TimeoutEvent(std::chrono::milliseconds timeout) {
  return ApiErrorBody(TimeoutMessage(timeout), kTimeoutType, kTimeoutCode);
}

}  // namespace mineru::service
