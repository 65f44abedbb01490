// SPDX-License-Identifier: Apache-2.0
// What POST /v1/chat/completions answers, in OpenAI's shapes (and vLLM's, which MinerU's client
// reads): a chat.completion, the chat.completion.chunk events of a stream with its usage chunk,
// and the errors of a generation (a refused submission, the request timeout, a stopping server).
//
//   CompletionIdentity identity{.model = "mineru"};
//   writer->Send("", RoleChunk(identity));             // first event of every stream
//   writer->Send("", ContentChunk(identity, delta));   // each piece of text
//   writer->Send("", FinishChunk(identity, "stop"));   // then UsageChunk when asked, [DONE]
//
// Every object of one answer carries the same id, created and model (CompletionIdentity).
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include "service/http_server.h"

namespace mineru::service {

// "chatcmpl-" and 24 random hex digits.
std::string NewCompletionId();

struct CompletionIdentity {
  std::string id = NewCompletionId();
  int64_t created = static_cast<int64_t>(std::time(nullptr));  // Unix seconds
  std::string model;
};

// How a generation ended, as its answer reports it.
struct ChatOutcome {
  std::string finish_reason;  // "stop" or "length"; empty on failure
  std::string error;          // the failure
  bool timed_out = false;     // the failure is the request's deadline
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

// {"prompt_tokens", "completion_tokens", "total_tokens"}: total is their sum.
Json UsageJson(const ChatOutcome& outcome);

// A chat.completion: one choice holding the assistant message `text`, its finish reason, usage.
std::string CompletionJson(const CompletionIdentity& identity, const std::string& text,
                           const ChatOutcome& outcome);

// One chat.completion.chunk event: one choice with `delta` and `finish_reason` (null until the
// last).
std::string CompletionChunk(const CompletionIdentity& identity, Json delta, Json finish_reason);
// The first chunk of a stream: {"role": "assistant", "content": ""}.
std::string RoleChunk(const CompletionIdentity& identity);
// A piece of the text: {"content": text}.
std::string ContentChunk(const CompletionIdentity& identity, const std::string& text);
// The finish chunk: an empty delta and the finish reason.
std::string FinishChunk(const CompletionIdentity& identity, const std::string& finish_reason);
// The last chunk of a stream with stream_options.include_usage: no choices, the usage.
std::string UsageChunk(const CompletionIdentity& identity, const ChatOutcome& outcome);

// What a stream ends with when the server stops before the generation did (HttpServer::Stop's
// drain deadline): an error event (type "unavailable_error") and the terminator, as for an
// engine failure. HttpResponse::sse_abort of every chat stream.
std::string StreamAbortEvents();

// Errors of Engine::Submit: a full queue is 429, a stopping engine 503 (both with Retry-After),
// a refused request 400, anything else 500.
HttpResponse SubmitErrorResponse(const Error& error);

// A request that reached OpenAiOptions::request_timeout (`timeout`): 504 with type
// "timeout_error" and code "request_timeout"; TimeoutEvent is the same error as one event's
// body, for a stream that already started.
HttpResponse TimeoutResponse(std::chrono::milliseconds timeout);
std::string TimeoutEvent(std::chrono::milliseconds timeout);

}  // namespace mineru::service
