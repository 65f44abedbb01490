// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible endpoints: request parsing, the text of a generation (incremental
// decoding, stop strings) and the response and stream formats.
#include "service/openai_api.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "image/data_url.h"
#include "service/api_error.h"
#include "service/chat_cache.h"

namespace mineru::service {
namespace {

// How often a waiting handler checks whether its client went away.
constexpr std::chrono::milliseconds kPollInterval{100};
// What UTF-8 repair puts where a character is incomplete: U+FFFD.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Errors found while reading the request: kNotFound is the unknown model (404), everything else
// is the client's mistake (400).
HttpResponse RequestError(const Error& error) {
  if (error.code == ErrorCode::kNotFound) {
    return ApiError(404, error.message, "invalid_request_error", "model_not_found");
  }
  return ApiError(400, error.message, "invalid_request_error");
}

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

// ---- Request parsing ----------------------------------------------------------------------

// A field of `object`; null counts as absent (clients send null for "default").
const Json* Field(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::optional<double>> NumberField(const Json& object, std::string_view key) {
  const Json* v = Field(object, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) return Fail(ErrorCode::kInvalidArgument, "'{}' must be a number", key);
  return v->get<double>();
}

Result<std::optional<int64_t>> IntField(const Json& object, std::string_view key) {
  const Json* v = Field(object, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
    return Fail(ErrorCode::kInvalidArgument, "'{}' is too large", key);
  }
  if (v->is_number_integer()) return v->get<int64_t>();
  // 100.0 is an integer to Python clients.
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d)) && d > -9e18 && d < 9e18) {
      return static_cast<int64_t>(d);
    }
  }
  return Fail(ErrorCode::kInvalidArgument, "'{}' must be an integer", key);
}

Result<std::optional<bool>> BoolField(const Json& object, std::string_view key) {
  const Json* v = Field(object, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) return Fail(ErrorCode::kInvalidArgument, "'{}' must be a boolean", key);
  return v->get<bool>();
}

Result<int32_t> Int32(int64_t value, std::string_view key) {
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return Fail(ErrorCode::kInvalidArgument, "'{}' is out of range", key);
  }
  return static_cast<int32_t>(value);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// One image part's URL to pixels. `where` names the part ("messages[1].content[0]").
Result<image::RgbImage> LoadImage(std::string_view url, const OpenAiOptions& options,
                                  const std::string& where) {
  std::vector<uint8_t> bytes;
  if (IsHttpUrl(url)) {
    if (!options.allow_remote_images) {
      return Fail(ErrorCode::kInvalidArgument,
                  "{}: remote image URLs are not allowed on this server (start it with "
                  "--allow-remote-images to fetch them); send a data: URL "
                  "(data:image/png;base64,...)",
                  where);
    }
    FetchLimits limits;
    limits.max_bytes = options.max_image_bytes;
    limits.timeout = options.remote_image_timeout;
    limits.max_redirects = options.remote_image_max_redirects;
    auto fetched = FetchUrl(url, limits);
    if (!fetched) {
      return Fail(ErrorCode::kInvalidArgument, "{}: cannot fetch the image: {}", where,
                  fetched.error().message);
    }
    bytes.assign(fetched->begin(), fetched->end());
  } else if (StartsWith(url, "data:")) {
    auto data = image::ParseDataUrl(url, options.max_image_bytes);
    if (!data) {
      return Fail(ErrorCode::kInvalidArgument, "{}: bad image data URL: {}", where,
                  data.error().message);
    }
    if (!StartsWith(data->mime_type, "image/")) {
      return Fail(ErrorCode::kInvalidArgument, "{}: data URL type '{}' is not an image", where,
                  data->mime_type);
    }
    bytes = std::move(data->bytes);
  } else {
    // file:// would read the server's own files; other schemes have no meaning here.
    return Fail(ErrorCode::kInvalidArgument,
                "{}: image URLs must be data: URLs (or http(s):// where the server allows "
                "remote images); this scheme is never fetched",
                where);
  }
  image::DecodeOptions decode;
  decode.limits.max_bytes = options.max_image_bytes;
  auto decoded = image::DecodeImage(bytes, decode);
  if (!decoded) {
    return Fail(ErrorCode::kInvalidArgument, "{}: unsupported or corrupt image: {}", where,
                decoded.error().message);
  }
  return std::move(decoded->image);
}

// "messages": roles system/user/assistant; content a string, null, or an array of text and
// image_url parts. Images go to request->images in order of appearance.
Status ParseMessages(const Json& messages, const OpenAiOptions& options, engine::Request* request) {
  if (!messages.is_array() || messages.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "'messages' must be a non-empty array");
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return Fail(ErrorCode::kInvalidArgument, "{} must be an object", where);
    const Json* role = Field(m, "role");
    if (role == nullptr || !role->is_string()) {
      return Fail(ErrorCode::kInvalidArgument, "{}.role must be a string", where);
    }
    text::ChatMessage message;
    message.role = role->get<std::string>();
    if (message.role != "system" && message.role != "user" && message.role != "assistant") {
      return Fail(ErrorCode::kInvalidArgument,
                  "{}.role '{}' is not supported (system, user, assistant)", where, message.role);
    }
    const Json* content = Field(m, "content");
    if (content == nullptr) {
      // An empty message (e.g. an assistant turn without text).
    } else if (content->is_string()) {
      message.content.push_back(text::ChatPart::Text(content->get<std::string>()));
    } else if (content->is_array()) {
      for (size_t j = 0; j < content->size(); ++j) {
        const Json& part = (*content)[j];
        const std::string part_where = where + ".content[" + std::to_string(j) + "]";
        const Json* type = part.is_object() ? Field(part, "type") : nullptr;
        if (type == nullptr || !type->is_string()) {
          return Fail(ErrorCode::kInvalidArgument, "{} must be an object with a string 'type'",
                      part_where);
        }
        const std::string kind = type->get<std::string>();
        if (kind == "text") {
          const Json* text = Field(part, "text");
          if (text == nullptr || !text->is_string()) {
            return Fail(ErrorCode::kInvalidArgument, "{}.text must be a string", part_where);
          }
          message.content.push_back(text::ChatPart::Text(text->get<std::string>()));
        } else if (kind == "image_url") {
          const Json* image_url = Field(part, "image_url");
          const Json* url = image_url == nullptr     ? nullptr
                            : image_url->is_string() ? image_url
                            : image_url->is_object() ? Field(*image_url, "url")
                                                     : nullptr;
          if (url == nullptr || !url->is_string()) {
            return Fail(ErrorCode::kInvalidArgument, "{}.image_url.url must be a string",
                        part_where);
          }
          MINERU_ASSIGN_OR_RETURN(image::RgbImage rgb, LoadImage(url->get_ref<const std::string&>(),
                                                                 options, part_where));
          engine::ImageInput input;
          input.rgb = std::move(rgb);
          request->images.push_back(std::move(input));
          message.content.push_back(text::ChatPart::Image({}));
        } else {
          return Fail(ErrorCode::kInvalidArgument,
                      "{}: part type '{}' is not supported (text, image_url)", part_where, kind);
        }
      }
    } else {
      return Fail(ErrorCode::kInvalidArgument, "{}.content must be a string or an array", where);
    }
    request->messages.push_back(std::move(message));
  }
  return OkStatus();
}

struct ChatRequest {
  engine::Request request;
  std::vector<std::string> stop;  // stop strings, none empty
  bool skip_special = true;       // OpenAI's default; MinerU sends false
  bool stream = false;
  bool include_usage = false;
};

// The sampling fields, OpenAI's defaults where absent (temperature 1, top_p 1), vLLM's
// extensions (top_k, repetition_penalty, vllm_xargs.no_repeat_ngram_size). Ranges are
// checked by the engine (SamplingParams::Validate).
Status ParseSampling(const Json& body, engine::SamplingParams* s) {
  s->temperature = 1.0f;
  MINERU_ASSIGN_OR_RETURN(auto temperature, NumberField(body, "temperature"));
  if (temperature) s->temperature = static_cast<float>(*temperature);
  MINERU_ASSIGN_OR_RETURN(auto top_p, NumberField(body, "top_p"));
  if (top_p) s->top_p = static_cast<float>(*top_p);
  MINERU_ASSIGN_OR_RETURN(auto top_k, IntField(body, "top_k"));
  if (top_k) {
    MINERU_ASSIGN_OR_RETURN(s->top_k, Int32(*top_k, "top_k"));
  }
  MINERU_ASSIGN_OR_RETURN(auto presence, NumberField(body, "presence_penalty"));
  if (presence) s->presence_penalty = static_cast<float>(*presence);
  MINERU_ASSIGN_OR_RETURN(auto frequency, NumberField(body, "frequency_penalty"));
  if (frequency) s->frequency_penalty = static_cast<float>(*frequency);
  MINERU_ASSIGN_OR_RETURN(auto repetition, NumberField(body, "repetition_penalty"));
  if (repetition) s->repetition_penalty = static_cast<float>(*repetition);
  if (const Json* xargs = Field(body, "vllm_xargs")) {
    if (!xargs->is_object()) {
      return Fail(ErrorCode::kInvalidArgument, "'vllm_xargs' must be an object");
    }
    MINERU_ASSIGN_OR_RETURN(auto ngram, IntField(*xargs, "no_repeat_ngram_size"));
    if (ngram) {
      MINERU_ASSIGN_OR_RETURN(s->no_repeat_ngram_size, Int32(*ngram, "no_repeat_ngram_size"));
    }
  }
  MINERU_ASSIGN_OR_RETURN(auto seed, IntField(body, "seed"));
  if (seed) s->seed = static_cast<uint64_t>(*seed);
  return OkStatus();
}

Result<ChatRequest> ParseChatRequest(const Json& body, const OpenAiOptions& options) {
  if (!body.is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "the request body must be a JSON object");
  }
  ChatRequest out;
  if (const Json* model = Field(body, "model")) {
    if (!model->is_string()) return Fail(ErrorCode::kInvalidArgument, "'model' must be a string");
    if (model->get_ref<const std::string&>() != options.model_id) {
      return Fail(ErrorCode::kNotFound, "The model '{}' does not exist (this server has '{}')",
                  model->get<std::string>(), options.model_id);
    }
  }
  const Json* messages = Field(body, "messages");
  if (messages == nullptr) return Fail(ErrorCode::kInvalidArgument, "'messages' is required");
  MINERU_ASSIGN_OR_RETURN(auto n, IntField(body, "n"));
  if (n && *n != 1) return Fail(ErrorCode::kInvalidArgument, "only 'n' = 1 is supported");
  MINERU_RETURN_IF_ERROR(ParseSampling(body, &out.request.sampling));

  MINERU_ASSIGN_OR_RETURN(auto max_completion, IntField(body, "max_completion_tokens"));
  MINERU_ASSIGN_OR_RETURN(auto max_tokens, IntField(body, "max_tokens"));
  if (max_completion || max_tokens) {
    const int64_t limit = max_completion ? *max_completion : *max_tokens;
    if (limit < 1) {
      return Fail(ErrorCode::kInvalidArgument, "'{}' must be at least 1",
                  max_completion ? "max_completion_tokens" : "max_tokens");
    }
    out.request.max_new_tokens = limit;
  }
  if (const Json* stop = Field(body, "stop")) {
    if (stop->is_string()) {
      out.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const Json& s : *stop) {
        if (!s.is_string()) {
          return Fail(ErrorCode::kInvalidArgument, "'stop' must be a string or list of strings");
        }
        out.stop.push_back(s.get<std::string>());
      }
    } else {
      return Fail(ErrorCode::kInvalidArgument, "'stop' must be a string or list of strings");
    }
    std::erase_if(out.stop, [](const std::string& s) { return s.empty(); });
  }
  MINERU_ASSIGN_OR_RETURN(auto priority, IntField(body, "priority"));
  if (priority) {
    MINERU_ASSIGN_OR_RETURN(out.request.priority, Int32(*priority, "priority"));
  }
  MINERU_ASSIGN_OR_RETURN(auto skip_special, BoolField(body, "skip_special_tokens"));
  out.skip_special = skip_special.value_or(true);
  MINERU_ASSIGN_OR_RETURN(auto stream, BoolField(body, "stream"));
  out.stream = stream.value_or(false);
  if (const Json* stream_options = Field(body, "stream_options")) {
    if (!out.stream) {
      return Fail(ErrorCode::kInvalidArgument, "'stream_options' needs 'stream': true");
    }
    if (!stream_options->is_object()) {
      return Fail(ErrorCode::kInvalidArgument, "'stream_options' must be an object");
    }
    MINERU_ASSIGN_OR_RETURN(auto include_usage, BoolField(*stream_options, "include_usage"));
    out.include_usage = include_usage.value_or(false);
  }
  // Images last: the most expensive part, after every cheap check.
  MINERU_RETURN_IF_ERROR(ParseMessages(*messages, options, &out.request));
  return out;
}

// ---- Generation text ----------------------------------------------------------------------

// Turns token ids into response text as they arrive. Rules:
// * Text is released only as whole UTF-8 characters: ids whose decoding ends in U+FFFD are held
//   until more ids (or the end) arrive. Byte-level decoding of a split at such a point equals
//   decoding everything at once, so only the held ids are decoded again.
// * Ids without a token are dropped; special tokens too when skip_special is set.
// * The text is cut before the first stop string; a tail that could still grow into a stop
//   string is not released until it cannot.
class TextAssembler {
 public:
  TextAssembler(const text::Tokenizer& tokenizer, bool skip_special, std::vector<std::string> stop)
      : tokenizer_(tokenizer), skip_special_(skip_special), stop_(std::move(stop)) {
    for (const std::string& s : stop_) max_stop_ = std::max(max_stop_, s.size());
  }

  // Adds generated ids; true once a stop string matched (the text is then final).
  bool Add(std::span<const int32_t> ids) {
    if (stopped_) return true;
    ids_seen_ += static_cast<int64_t>(ids.size());
    pending_.insert(pending_.end(), ids.begin(), ids.end());
    std::string decoded = Decode(pending_);
    if (decoded.ends_with(kReplacement)) return false;
    Append(decoded);
    return stopped_;
  }

  // The generation ended: held ids are decoded as they are.
  void Finish() {
    if (!stopped_ && !pending_.empty()) Append(Decode(pending_));
    pending_.clear();
    finished_ = true;
  }

  // The text released since the last call.
  std::string TakeDelta() {
    size_t end = text_.size();
    if (!stopped_ && !finished_) end -= Holdback();
    if (end <= released_) return {};
    std::string delta = text_.substr(released_, end - released_);
    released_ = end;
    return delta;
  }

  const std::string& text() const { return text_; }
  bool stopped() const { return stopped_; }
  int64_t ids_seen() const { return ids_seen_; }

 private:
  std::string Decode(const std::vector<int32_t>& ids) const {
    std::vector<int32_t> kept;
    kept.reserve(ids.size());
    for (int32_t id : ids) {
      if (!tokenizer_.IdToToken(id)) continue;
      if (skip_special_ && tokenizer_.IsSpecial(id)) continue;
      kept.push_back(id);
    }
    auto text = tokenizer_.Decode(kept, skip_special_);
    return text ? std::move(*text) : std::string();
  }

  void Append(const std::string& decoded) {
    pending_.clear();
    const size_t old_size = text_.size();
    text_ += decoded;
    if (max_stop_ == 0) return;
    const size_t from = old_size >= max_stop_ - 1 ? old_size - (max_stop_ - 1) : 0;
    size_t cut = std::string::npos;
    for (const std::string& s : stop_) cut = std::min(cut, text_.find(s, from));
    if (cut != std::string::npos) {
      text_.resize(cut);
      stopped_ = true;
    }
  }

  // Length of the longest tail of the text that is a proper prefix of a stop string.
  size_t Holdback() const {
    const size_t longest = std::min(text_.size(), max_stop_ == 0 ? 0 : max_stop_ - 1);
    for (size_t k = longest; k > 0; --k) {
      const std::string_view tail = std::string_view(text_).substr(text_.size() - k);
      for (const std::string& s : stop_) {
        if (s.size() > k && std::string_view(s).substr(0, k) == tail) return k;
      }
    }
    return 0;
  }

  const text::Tokenizer& tokenizer_;
  const bool skip_special_;
  const std::vector<std::string> stop_;
  size_t max_stop_ = 0;
  std::vector<int32_t> pending_;  // ids not yet in text_
  std::string text_;
  size_t released_ = 0;  // bytes of text_ handed out by TakeDelta
  int64_t ids_seen_ = 0;
  bool stopped_ = false;
  bool finished_ = false;
};

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
    Json model{{"id", options.model_id},   {"object", "model"},        {"created", created},
               {"owned_by", "mineru.cpp"}, {"root", options.model_id}, {"parent", nullptr}};
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
