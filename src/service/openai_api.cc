// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible endpoints: driving a generation, the response and stream formats and the
// model list (requests are read by chat_request.cc, their text built by chat_text.cc).
#include "service/openai_api.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "service/api_error.h"
#include "service/chat_cache.h"
#include "service/chat_request.h"
#include "service/chat_text.h"

namespace mineru::service {
namespace {

// How often a waiting handler checks whether its client went away.
constexpr std::chrono::milliseconds kPollInterval{100};

// Errors found while reading the request: service/chat_request.h maps them (the unknown model
// 404, images over the request's budget 413, a full budget of images in flight 503, everything
// else 400).
HttpResponse RequestError(const Error& error) { return ChatRequestErrorResponse(error); }

// Errors of Engine::Submit: a full queue is 429, a stopping engine 503 (both with Retry-After),
// a refused request 400, anything else 500.
HttpResponse SubmitError(const Error& error) {
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

// The answer to a request that reached OpenAiOptions::request_timeout.
constexpr std::string_view kTimeoutType = "timeout_error";
constexpr std::string_view kTimeoutCode = "request_timeout";
std::string TimeoutMessage(std::chrono::milliseconds timeout) {
  return "the request did not finish within the server's request timeout of " +
         std::to_string(timeout.count()) + " ms (--chat-timeout)";
}

// "application/json" with any parameters, case-insensitively.
bool IsJsonContentType(std::string_view value) {
  value = value.substr(0, value.find(';'));
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  constexpr std::string_view kJson = "application/json";
  if (value.size() != kJson.size()) return false;
  for (size_t i = 0; i < kJson.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != kJson[i]) return false;
  }
  return true;
}

std::string CompletionId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof(buf), "chatcmpl-%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffu));
  return buf;
}

// ---- Generation ----------------------------------------------------------------------------

struct Outcome {
  std::string finish_reason;  // "stop" or "length"; empty on failure
  std::string error;          // the failure
  bool timed_out = false;     // the failure is the request's deadline
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

// Pulls the request's tokens into `text` until it ends, a stop string matches (the request is
// then cancelled) or `gone` turns true (cancelled, reported as a failure). `on_delta` gets each
// released piece of text; false from it also cancels.
Outcome Drive(engine::RequestHandle& handle, TextAssembler& text, const std::function<bool()>& gone,
              const std::function<bool(const std::string&)>& on_delta) {
  Outcome outcome;
  bool abandoned = false;
  while (true) {
    if (gone()) {
      abandoned = true;
      break;
    }
    bool timed_out = false;
    auto ids = handle.NextFor(kPollInterval, &timed_out);
    if (timed_out) continue;
    if (!ids) break;
    const bool stopped = text.Add(*ids);
    const std::string delta = text.TakeDelta();
    if (!delta.empty() && !on_delta(delta)) {
      abandoned = true;
      break;
    }
    if (stopped) break;
  }
  if (abandoned || text.stopped()) handle.Cancel();
  const engine::GenerationResult& result = handle.Wait();
  outcome.prompt_tokens = result.usage.prompt_tokens;
  outcome.completion_tokens = result.usage.completion_tokens;
  if (abandoned) {
    outcome.error = "the client went away";
    return outcome;
  }
  if (text.stopped()) {
    outcome.finish_reason = "stop";
    outcome.completion_tokens = text.ids_seen();
  } else if (result.finish_reason == engine::FinishReason::kStop) {
    outcome.finish_reason = "stop";
  } else if (result.finish_reason == engine::FinishReason::kLength) {
    outcome.finish_reason = "length";
  } else if (result.finish_reason == engine::FinishReason::kDeadline) {
    outcome.timed_out = true;
    outcome.error = "deadline";
    return outcome;
  } else {
    outcome.error = result.error.empty()
                        ? "generation ended: " + std::string(FinishReasonName(result.finish_reason))
                        : result.error;
    return outcome;
  }
  text.Finish();
  const std::string rest = text.TakeDelta();
  if (!rest.empty()) on_delta(rest);
  return outcome;
}

Json UsageJson(const Outcome& o) {
  return Json{{"prompt_tokens", o.prompt_tokens},
              {"completion_tokens", o.completion_tokens},
              {"total_tokens", o.prompt_tokens + o.completion_tokens}};
}

// Stores a completed answer under its key (when it has one).
void Keep(pipeline::RequestCache* cache, const std::optional<std::string>& key,
          const TextAssembler& text, const Outcome& o) {
  if (!key || !cache) return;
  cache->Put(
      *key, EncodeCachedChat({text.text(), o.finish_reason, o.prompt_tokens, o.completion_tokens}));
}

// One chat.completion.chunk event of a stream.
std::string Chunk(const std::string& id, int64_t created, const std::string& model, Json delta,
                  Json finish_reason) {
  Json choice{{"index", 0},
              {"delta", std::move(delta)},
              {"logprobs", nullptr},
              {"finish_reason", std::move(finish_reason)}};
  return DumpJson(Json{{"id", id},
                       {"object", "chat.completion.chunk"},
                       {"created", created},
                       {"model", model},
                       {"choices", Json::array({choice})}});
}

// The last chunk of a stream with stream_options.include_usage.
std::string UsageChunk(const std::string& id, int64_t created, const std::string& model,
                       const Outcome& o) {
  return DumpJson(Json{{"id", id},
                       {"object", "chat.completion.chunk"},
                       {"created", created},
                       {"model", model},
                       {"choices", Json::array()},
                       {"usage", UsageJson(o)}});
}

// ---- Handlers -----------------------------------------------------------------------------

struct Api {
  engine::Engine& engine;
  OpenAiOptions options;
  int64_t created = static_cast<int64_t>(std::time(nullptr));

  HttpResponse Models() const {
    Json model{{"id", options.model_id},
               {"object", "model"},
               {"created", created},
               {"owned_by", "mineru.cpp"},
               {"root", options.model_id},
               {"parent", nullptr},
               {"mineru_profile", pipeline::ProfileName(options.profile)}};
    return HttpResponse::Json(200, DumpJson(Json{{"object", "list"}, {"data", {model}}}));
  }

  HttpResponse ChatCompletions(const HttpRequest& http) const {
    const engine::Clock::time_point arrival = engine::Clock::now();
    if (!IsJsonContentType(http.Header("Content-Type"))) {
      return ApiError(415, "Content-Type must be application/json", "invalid_request_error");
    }
    auto body = ParseJson(http.body, "request body");
    if (!body) {
      return ApiError(400, "malformed JSON: " + body.error().message, "invalid_request_error");
    }
    auto parsed = ParseChatRequest(*body, options);
    if (!parsed) return RequestError(parsed.error());
    if (options.request_timeout.count() > 0) {
      parsed->request.deadline = arrival + options.request_timeout;
    }
    const text::Tokenizer* tokenizer = engine.tokenizer();
    if (tokenizer == nullptr) {
      return ApiError(500, "the model has no tokenizer.json", "server_error");
    }
    std::optional<std::string> key;
    if (options.cache) {
      key = ChatCacheKey(parsed->request, parsed->skip_special, parsed->stop);
      if (key) {
        std::optional<CachedChat> hit;
        if (std::optional<std::string> value = options.cache->Get(*key)) {
          hit = DecodeCachedChat(*value);
        }
        if (options.on_cache_lookup) options.on_cache_lookup(hit.has_value());
        if (hit) return Answer(std::move(*hit), parsed->stream, parsed->include_usage);
      }
    }
    auto handle = engine.Submit(std::move(parsed->request));
    if (!handle) return SubmitError(handle.error());
    auto text =
        std::make_shared<TextAssembler>(*tokenizer, parsed->skip_special, std::move(parsed->stop));
    if (parsed->stream) {
      return Stream(std::move(*handle), std::move(text), parsed->include_usage, std::move(key));
    }

    auto disconnected = http.disconnected;
    const Outcome o = Drive(
        *handle, *text, [&] { return disconnected->load(); },
        [](const std::string&) { return true; });
    if (o.timed_out) {
      return ApiError(504, TimeoutMessage(options.request_timeout), kTimeoutType, kTimeoutCode);
    }
    if (!o.error.empty()) return ApiError(500, o.error, "server_error");
    Keep(options.cache, key, *text, o);
    return Answer({text->text(), o.finish_reason, o.prompt_tokens, o.completion_tokens},
                  /*stream=*/false, false);
  }

  // A complete answer as chat.completion, or as a stream (role, the whole text, finish, usage
  // when asked, [DONE]).
  HttpResponse Answer(CachedChat a, bool stream, bool include_usage) const {
    Outcome o;
    o.finish_reason = a.finish_reason;
    o.prompt_tokens = a.prompt_tokens;
    o.completion_tokens = a.completion_tokens;
    if (stream) {
      const std::string id = CompletionId();
      const int64_t now = static_cast<int64_t>(std::time(nullptr));
      const std::string model = options.model_id;
      return HttpResponse::EventStream([=](std::shared_ptr<SseWriter> writer) {
        writer->Send("",
                     Chunk(id, now, model, Json{{"role", "assistant"}, {"content", ""}}, nullptr));
        if (!a.text.empty())
          writer->Send("", Chunk(id, now, model, Json{{"content", a.text}}, nullptr));
        writer->Send("", Chunk(id, now, model, Json::object(), o.finish_reason));
        if (include_usage) writer->Send("", UsageChunk(id, now, model, o));
        writer->Send("", "[DONE]");
        writer->Close();
      });
    }
    Json choice{{"index", 0},
                {"message", {{"role", "assistant"}, {"content", std::move(a.text)}}},
                {"logprobs", nullptr},
                {"finish_reason", o.finish_reason}};
    Json response{{"id", CompletionId()},
                  {"object", "chat.completion"},
                  {"created", static_cast<int64_t>(std::time(nullptr))},
                  {"model", options.model_id},
                  {"choices", Json::array({choice})},
                  {"usage", UsageJson(o)}};
    return HttpResponse::Json(200, DumpJson(response));
  }

  // SSE: a role chunk, content chunks, a finish chunk, a usage chunk when asked, [DONE]. An
  // engine failure mid-stream is an error event before [DONE] (vLLM's behaviour).
  HttpResponse Stream(engine::RequestHandle handle, std::shared_ptr<TextAssembler> text,
                      bool include_usage, std::optional<std::string> key) const {
    const std::string id = CompletionId();
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    const std::string model = options.model_id;
    const std::chrono::milliseconds timeout = options.request_timeout;
    auto shared_handle = std::make_shared<engine::RequestHandle>(std::move(handle));
    pipeline::RequestCache* cache = options.cache;
    return HttpResponse::EventStream([=](std::shared_ptr<SseWriter> writer) {
      auto chunk = [&](Json delta, Json finish_reason) {
        return Chunk(id, now, model, std::move(delta), std::move(finish_reason));
      };
      // Cancel the moment the client goes away (Drive only polls): no token after it.
      writer->OnDisconnect([shared_handle] { shared_handle->Cancel(); });
      writer->Send("", chunk(Json{{"role", "assistant"}, {"content", ""}}, nullptr));
      const Outcome o = Drive(
          *shared_handle, *text, [&] { return writer->disconnected(); },
          [&](const std::string& delta) {
            return writer->Send("", chunk(Json{{"content", delta}}, nullptr));
          });
      if (writer->disconnected()) return;
      if (o.timed_out) {
        writer->Send("", ApiErrorBody(TimeoutMessage(timeout), kTimeoutType, kTimeoutCode));
      } else if (!o.error.empty()) {
        writer->Send("", ApiErrorBody(o.error, "server_error", {}));
      } else {
        writer->Send("", chunk(Json::object(), o.finish_reason));
        if (include_usage) writer->Send("", UsageChunk(id, now, model, o));
        Keep(cache, key, *text, o);
      }
      writer->Send("", "[DONE]");
      writer->Close();
    });
  }
};

}  // namespace

void AddOpenAiRoutes(HttpServer& server, engine::Engine& engine, const OpenAiOptions& options) {
  auto api = std::make_shared<Api>(Api{engine, options});
  server.Route("GET", "/v1/models", [api](const HttpRequest&) { return api->Models(); });
  server.Route("POST", "/v1/chat/completions",
               [api](const HttpRequest& request) { return api->ChatCompletions(request); });
}

}  // namespace mineru::service
