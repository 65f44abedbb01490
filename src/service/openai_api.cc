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
#include <mutex>
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

// What a stream ends with when the server stops before the generation did (HttpServer::Stop's
// drain deadline): an error event and the terminator, as for an engine failure.
std::string StreamAbortEvents() {
  return "data: " +
         ApiErrorBody("the server is shutting down: the request did not finish in time",
                      "unavailable_error", "service_unavailable") +
         "\n\ndata: [DONE]\n\n";
}

// Chat requests generating at once (OpenAiOptions::max_chat_in_flight): a slot is taken before
// the request is read, so parsing and image decoding are bounded too.
class Slots {
 public:
  explicit Slots(int64_t capacity) : capacity_(capacity) {}
  bool TryTake() {
    int64_t used = used_.load();
    while (used < capacity_) {
      if (used_.compare_exchange_weak(used, used + 1)) return true;
    }
    return false;
  }
  void Give() { used_.fetch_sub(1); }

 private:
  const int64_t capacity_;
  std::atomic<int64_t> used_{0};
};

// One taken slot, given back when destroyed.
class SlotHold {
 public:
  explicit SlotHold(std::shared_ptr<Slots> slots) : slots_(std::move(slots)) {}
  ~SlotHold() {
    if (slots_) slots_->Give();
  }
  SlotHold(SlotHold&& other) noexcept : slots_(std::move(other.slots_)) {}
  SlotHold(const SlotHold&) = delete;
  SlotHold& operator=(const SlotHold&) = delete;
  SlotHold& operator=(SlotHold&&) = delete;

 private:
  std::shared_ptr<Slots> slots_;
};

// What a finished generation answers with.
struct AnswerSpec {
  std::string id = CompletionId();
  int64_t created = static_cast<int64_t>(std::time(nullptr));
  std::string model;
  bool include_usage = false;
  std::chrono::milliseconds timeout{0};
  pipeline::RequestCache* cache = nullptr;
  std::optional<std::string> key;
};

// A chat.completion.
std::string CompletionJson(const AnswerSpec& spec, const std::string& text, const Outcome& o) {
  Json choice{{"index", 0},
              {"message", {{"role", "assistant"}, {"content", text}}},
              {"logprobs", nullptr},
              {"finish_reason", o.finish_reason}};
  return DumpJson(Json{{"id", spec.id},
                       {"object", "chat.completion"},
                       {"created", spec.created},
                       {"model", spec.model},
                       {"choices", Json::array({choice})},
                       {"usage", UsageJson(o)}});
}

// One generation, driven by the engine's token callback: tokens are queued here on the engine
// thread, and a short task on the handler pool (HttpServer::Post) turns them into text and
// events, so no thread waits while the model works. At most one such task runs at a time
// (scheduled_), so the text assembler needs no lock.
//
// Ownership: the engine's copy of the request holds this object through its token callback
// and this object holds the request's handle; Finish drops the handle, which ends the cycle.
class Generation : public std::enable_shared_from_this<Generation> {
 public:
  Generation(HttpServer& server, std::unique_ptr<TextAssembler> text, AnswerSpec spec,
             SlotHold slot)
      : server_(server), text_(std::move(text)), spec_(std::move(spec)), slot_(std::move(slot)) {}

  // Engine thread: must return at once.
  void OnToken(const engine::TokenEvent& event) {
    {
      std::lock_guard lock(mu_);
      if (event.token) tokens_.push_back(*event.token);
      if (event.finished) finished_ = true;
    }
    Schedule();
  }

  void SetHandle(engine::RequestHandle handle) {
    {
      std::lock_guard lock(mu_);
      handle_ = std::move(handle);
    }
    Schedule();
  }

  // The answer goes to a responder (non-streaming) or a stream (after its role chunk).
  void AttachResponder(std::shared_ptr<Responder> responder) {
    responder->OnDisconnect([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->Abandon();
    });
    {
      std::lock_guard lock(mu_);
      responder_ = std::move(responder);
    }
    Schedule();
  }
  void AttachStream(std::shared_ptr<SseWriter> writer) {
    // Cancelled the moment the client goes away: no token after it.
    writer->OnDisconnect([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->Abandon();
    });
    writer->Send("", Chunk(spec_.id, spec_.created, spec_.model,
                           Json{{"role", "assistant"}, {"content", ""}}, nullptr));
    {
      std::lock_guard lock(mu_);
      writer_ = std::move(writer);
    }
    Schedule();
  }

 private:
  // The client went away (or the server stops): the engine ends the request at its next step.
  void Abandon() {
    std::lock_guard lock(mu_);
    abandoned_ = true;
    if (handle_.valid()) handle_.Cancel();
  }

  // Posts a Run when there is something to do and none is posted; never under mu_.
  void Schedule() {
    {
      std::lock_guard lock(mu_);
      if (scheduled_ || done_ || !handle_.valid() || (!responder_ && !writer_)) return;
      if (tokens_.empty() && !finished_) return;
      scheduled_ = true;
    }
    server_.Post([run = std::make_shared<ScheduledRun>(shared_from_this())] { run->Go(); });
  }

  // A posted Run; one the pool drops unrun (it was stopped) drops the generation instead.
  struct ScheduledRun {
    explicit ScheduledRun(std::shared_ptr<Generation> g) : generation(std::move(g)) {}
    ~ScheduledRun() {
      if (!ran) generation->Drop();
    }
    void Go() {
      ran = true;
      generation->Run();
    }
    std::shared_ptr<Generation> generation;
    bool ran = false;
  };

  // The server stopped: nothing will answer. Ends the ownership cycle with the engine's request
  // (the engine still ends the request itself).
  void Drop() {
    std::shared_ptr<Responder> responder;
    std::shared_ptr<SseWriter> writer;
    engine::RequestHandle handle;
    {
      std::lock_guard lock(mu_);
      done_ = true;
      if (handle_.valid()) handle_.Cancel();
      handle = std::move(handle_);
      handle_ = {};
      responder = std::move(responder_);
      writer = std::move(writer_);
    }
  }

  // On a handler thread; the only one running for this generation.
  void Run() {
    while (true) {
      std::vector<int32_t> ids;
      bool finished = false;
      {
        std::lock_guard lock(mu_);
        ids.swap(tokens_);
        finished = finished_;
        if (ids.empty() && !finished) {
          scheduled_ = false;
          return;
        }
      }
      if (!ids.empty() && !text_->stopped()) Add(ids);
      if (finished) return Finish();
    }
  }

  void Add(const std::vector<int32_t>& ids) {
    const bool stopped = text_->Add(ids);
    const std::string delta = text_->TakeDelta();
    if (!delta.empty() && !Deliver(delta)) Abandon();
    if (stopped) {  // a stop string matched: the text is final, the rest is not wanted
      std::lock_guard lock(mu_);
      handle_.Cancel();
    }
  }

  // A piece of a stream's text; false when the stream is gone (or its client too slow).
  bool Deliver(const std::string& delta) {
    if (!writer_) return true;
    return writer_->Send(
        "", Chunk(spec_.id, spec_.created, spec_.model, Json{{"content", delta}}, nullptr));
  }

  void Finish() {
    engine::RequestHandle handle;
    bool abandoned = false;
    {
      std::lock_guard lock(mu_);
      done_ = true;
      handle = std::move(handle_);  // ends the cycle with the engine's request
      handle_ = {};
      abandoned = abandoned_;
    }
    // The result is set right after the last callback returned (engine/handle.h): at once.
    const engine::GenerationResult& result = handle.Wait();
    const Outcome o = OutcomeOf(result, abandoned);
    if (o.error.empty()) {
      text_->Finish();
      const std::string rest = text_->TakeDelta();
      if (!rest.empty()) Deliver(rest);
    }
    if (writer_) {
      EndStream(o);
    } else {
      Respond(o);
    }
  }

  Outcome OutcomeOf(const engine::GenerationResult& result, bool abandoned) const {
    Outcome o;
    o.prompt_tokens = result.usage.prompt_tokens;
    o.completion_tokens = result.usage.completion_tokens;
    if (abandoned) {
      o.error = "the client went away";
    } else if (text_->stopped()) {
      o.finish_reason = "stop";
      o.completion_tokens = text_->ids_seen();
    } else if (result.finish_reason == engine::FinishReason::kStop) {
      o.finish_reason = "stop";
    } else if (result.finish_reason == engine::FinishReason::kLength) {
      o.finish_reason = "length";
    } else if (result.finish_reason == engine::FinishReason::kDeadline) {
      o.timed_out = true;
      o.error = "deadline";
    } else {
      o.error = result.error.empty()
                    ? "generation ended: " + std::string(FinishReasonName(result.finish_reason))
                    : result.error;
    }
    return o;
  }

  void Respond(const Outcome& o) {
    if (o.timed_out) {
      responder_->Send(ApiError(504, TimeoutMessage(spec_.timeout), kTimeoutType, kTimeoutCode));
      return;
    }
    if (!o.error.empty()) {
      responder_->Send(ApiError(500, o.error, "server_error"));
      return;
    }
    Keep(spec_.cache, spec_.key, *text_, o);
    responder_->Send(HttpResponse::Json(200, CompletionJson(spec_, text_->text(), o)));
  }

  // SSE: a finish chunk, a usage chunk when asked, [DONE]. An engine failure mid-stream is an
  // error event before [DONE] (vLLM's behaviour).
  void EndStream(const Outcome& o) {
    if (writer_->disconnected()) return;
    if (o.timed_out) {
      writer_->Send("", ApiErrorBody(TimeoutMessage(spec_.timeout), kTimeoutType, kTimeoutCode));
    } else if (!o.error.empty()) {
      writer_->Send("", ApiErrorBody(o.error, "server_error", {}));
    } else {
      writer_->Send("",
                    Chunk(spec_.id, spec_.created, spec_.model, Json::object(), o.finish_reason));
      if (spec_.include_usage) {
        writer_->Send("", UsageChunk(spec_.id, spec_.created, spec_.model, o));
      }
      Keep(spec_.cache, spec_.key, *text_, o);
    }
    writer_->Send("", "[DONE]");
    writer_->Close();
  }

  HttpServer& server_;
  std::unique_ptr<TextAssembler> text_;  // Run's thread only
  const AnswerSpec spec_;
  SlotHold slot_;

  std::mutex mu_;  // guards what follows
  engine::RequestHandle handle_;
  std::vector<int32_t> tokens_;  // delivered, not yet taken
  bool finished_ = false;        // the engine's last event came
  bool abandoned_ = false;
  bool scheduled_ = false;  // a Run is posted or running
  bool done_ = false;       // Finish ran
  std::shared_ptr<Responder> responder_;
  std::shared_ptr<SseWriter> writer_;
};

// ---- Handlers -----------------------------------------------------------------------------

struct Api {
  HttpServer& server;
  engine::Engine& engine;
  OpenAiOptions options;
  std::shared_ptr<Slots> slots = std::make_shared<Slots>(options.max_chat_in_flight);
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
    SlotHold slot(slots);
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
    AnswerSpec spec;
    spec.model = options.model_id;
    spec.include_usage = parsed->include_usage;
    spec.timeout = options.request_timeout;
    spec.cache = options.cache;
    spec.key = std::move(key);
    auto generation = std::make_shared<Generation>(
        server,
        std::make_unique<TextAssembler>(*tokenizer, parsed->skip_special, std::move(parsed->stop)),
        std::move(spec), std::move(slot));
    parsed->request.on_token = [generation](const engine::TokenEvent& event) {
      generation->OnToken(event);
    };
    auto handle = engine.Submit(std::move(parsed->request));
    if (!handle) return SubmitError(handle.error());
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
    Outcome o;
    o.finish_reason = a.finish_reason;
    o.prompt_tokens = a.prompt_tokens;
    o.completion_tokens = a.completion_tokens;
    AnswerSpec spec;
    spec.model = options.model_id;
    if (stream) {
      return HttpResponse::EventStream([=](std::shared_ptr<SseWriter> writer) {
        const auto chunk = [&](Json delta, Json finish) {
          return Chunk(spec.id, spec.created, spec.model, std::move(delta), std::move(finish));
        };
        writer->Send("", chunk(Json{{"role", "assistant"}, {"content", ""}}, nullptr));
        if (!a.text.empty()) writer->Send("", chunk(Json{{"content", a.text}}, nullptr));
        writer->Send("", chunk(Json::object(), o.finish_reason));
        if (include_usage) writer->Send("", UsageChunk(spec.id, spec.created, spec.model, o));
        writer->Send("", "[DONE]");
        writer->Close();
      });
    }
    return HttpResponse::Json(200, CompletionJson(spec, a.text, o));
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
