// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible endpoints' handlers: the model list, and for a chat completion the
// in-flight bound, the body read into an engine request (chat_request.cc), the answer cache, and
// the submission whose generation chat_generation.cc drives to its answer (formats in
// chat_response.cc).
#include "service/openai_api.h"

#include <cctype>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/json.h"
#include "service/api_error.h"
#include "service/chat_cache.h"
#include "service/chat_generation.h"
#include "service/chat_request.h"
#include "service/chat_response.h"
#include "text/text_assembler.h"

namespace mineru::service {
namespace {

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

struct Api {
  HttpServer& server;
  engine::Engine& engine;
  OpenAiOptions options;
  std::shared_ptr<ChatSlots> slots = std::make_shared<ChatSlots>(options.max_chat_in_flight);
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
    if (!slots->TryTake()) {
      return ApiError(429,
                      "too many chat requests in flight (--max-chat-in-flight " +
                          std::to_string(options.max_chat_in_flight) + "): retry later",
                      "rate_limit_error", "rate_limit_exceeded");
    }
    ChatSlot slot(slots);
    if (!IsJsonContentType(http.Header("Content-Type"))) {
      return ApiError(415, "Content-Type must be application/json", "invalid_request_error");
    }
    auto body = ParseJson(http.body, "request body");
    if (!body) {
      return ApiError(400, "malformed JSON: " + body.error().message, "invalid_request_error");
    }
    auto parsed = ParseChatRequest(*body, options);
    if (!parsed) return ChatRequestErrorResponse(parsed.error());
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
    AnswerSpec spec;
    spec.identity.model = options.model_id;
    spec.include_usage = parsed->include_usage;
    spec.timeout = options.request_timeout;
    spec.cache = options.cache;
    spec.key = std::move(key);
    auto generation = std::make_shared<ChatGeneration>(
        server,
        std::make_unique<text::TextAssembler>(*tokenizer, parsed->skip_special,
                                              std::move(parsed->stop)),
        std::move(spec), std::move(slot));
    // The generation's assembler is the request's only detokenizer: the engine leaves
    // GenerationResult::text empty.
    parsed->request.decode_text = false;
    parsed->request.on_token = [generation](const engine::TokenEvent& event) {
      generation->OnToken(event);
    };
    auto handle = engine.Submit(std::move(parsed->request));
    if (!handle) return SubmitErrorResponse(handle.error());
    generation->SetHandle(std::move(*handle));
    if (parsed->stream) {
      HttpResponse stream = HttpResponse::EventStream(
          [generation](std::shared_ptr<SseWriter> writer) { generation->AttachStream(writer); });
      stream.sse_abort = StreamAbortEvents();
      return stream;
    }
    return HttpResponse::Later([generation](std::shared_ptr<Responder> responder) {
      generation->AttachResponder(std::move(responder));
    });
  }

  // A complete answer as chat.completion, or as a stream (role, the whole text, finish, usage
  // when asked, [DONE]).
  HttpResponse Answer(CachedChat a, bool stream, bool include_usage) const {
    ChatOutcome o;
    o.finish_reason = a.finish_reason;
    o.prompt_tokens = a.prompt_tokens;
    o.completion_tokens = a.completion_tokens;
    CompletionIdentity identity;
    identity.model = options.model_id;
    if (stream) {
      return HttpResponse::EventStream([=](std::shared_ptr<SseWriter> writer) {
        writer->Send("", RoleChunk(identity));
        if (!a.text.empty()) writer->Send("", ContentChunk(identity, a.text));
        writer->Send("", FinishChunk(identity, o.finish_reason));
        if (include_usage) writer->Send("", UsageChunk(identity, o));
        writer->Send("", "[DONE]");
        writer->Close();
      });
    }
    return HttpResponse::Json(200, CompletionJson(identity, a.text, o));
  }
};

}  // namespace

void AddOpenAiRoutes(HttpServer& server, engine::Engine& engine, const OpenAiOptions& options) {
  auto api = std::make_shared<Api>(Api{server, engine, options});
  server.Route("GET", "/v1/models", [api](const HttpRequest&) { return api->Models(); });
  server.Route("POST", "/v1/chat/completions",
               [api](const HttpRequest& request) { return api->ChatCompletions(request); });
}

}  // namespace mineru::service
