// SPDX-License-Identifier: Apache-2.0
#include "service/chat_request.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/api_error.h"
#include "service/chat_images.h"

namespace mineru::service {
namespace {

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
    // The range first: converting a double outside int64's range is undefined behaviour.
    if (d > -9e18 && d < 9e18 && d == static_cast<double>(static_cast<int64_t>(d))) {
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

// "messages": roles system/user/assistant; content a string, null, or an array of text and
// image_url parts. Image parts are collected in order of appearance (`images`), to be read
// once every part is known (service/chat_images.h).
Status ParseMessages(const Json& messages, engine::Request* request,
                     std::vector<ImagePart>* images) {
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
          images->push_back({url->get_ref<const std::string&>(), part_where});
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

// "logit_bias": {"<token id>": bias, ...} as OpenAI and vLLM take it: keys decimal token ids
// (no sign, no leading zero, so two keys never name one token), values numbers clamped to
// [-100, 100] as vLLM clamps them; at most limits.max_logit_bias entries, counted before any is
// read. The engine checks the ids against the vocabulary.
Status ParseLogitBias(const Json& body, const ChatLimits& limits, engine::SamplingParams* s) {
  const Json* bias = Field(body, "logit_bias");
  if (bias == nullptr) return OkStatus();
  if (!bias->is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "'logit_bias' must be an object of token ids");
  }
  if (bias->size() > limits.max_logit_bias) {
    return Fail(ErrorCode::kInvalidArgument,
                "'logit_bias' has {} entries; the limit is {} (--max-logit-bias)", bias->size(),
                limits.max_logit_bias);
  }
  for (auto it = bias->begin(); it != bias->end(); ++it) {
    const std::string& key = it.key();
    int64_t id = 0;
    bool digits = !key.empty() && key.size() <= 10 && (key[0] != '0' || key.size() == 1);
    for (char c : key) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      id = id * 10 + (c - '0');
    }
    if (!digits || id > std::numeric_limits<int32_t>::max()) {
      return Fail(ErrorCode::kInvalidArgument,
                  "'logit_bias' key '{}' is not a token id (a decimal integer)", key.substr(0, 32));
    }
    if (!it.value().is_number()) {
      return Fail(ErrorCode::kInvalidArgument, "'logit_bias' value of token {} must be a number",
                  id);
    }
    const double value = std::clamp(it.value().get<double>(), double{-engine::kMaxLogitBias},
                                    double{engine::kMaxLogitBias});
    s->logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(value));
  }
  std::sort(s->logit_bias.begin(), s->logit_bias.end());  // by id: one request, one order
  return OkStatus();
}

// The sampling fields, OpenAI's defaults where absent (temperature 1, top_p 1), vLLM's
// extensions (top_k, repetition_penalty, vllm_xargs.no_repeat_ngram_size), logit_bias. Ranges
// are checked by the engine (SamplingParams::Validate); the limits on what costs more as it
// grows (limits) here.
Status ParseSampling(const Json& body, const ChatLimits& limits, engine::SamplingParams* s) {
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
    if (ngram && *ngram > limits.max_no_repeat_ngram_size) {
      return Fail(ErrorCode::kInvalidArgument,
                  "'vllm_xargs.no_repeat_ngram_size' is {}; the limit is {} "
                  "(--max-no-repeat-ngram-size)",
                  *ngram, limits.max_no_repeat_ngram_size);
    }
    if (ngram) {
      MINERU_ASSIGN_OR_RETURN(s->no_repeat_ngram_size, Int32(*ngram, "no_repeat_ngram_size"));
    }
  }
  MINERU_ASSIGN_OR_RETURN(auto seed, IntField(body, "seed"));
  if (seed) s->seed = static_cast<uint64_t>(*seed);
  return ParseLogitBias(body, limits, s);
}

// "stop": a string or a list of strings, at most limits.max_stop_strings of them (counted
// before any is read), each at most limits.max_stop_bytes bytes; empty ones are dropped.
Result<std::vector<std::string>> ParseStop(const Json& body, const ChatLimits& limits) {
  std::vector<std::string> out;
  const Json* stop = Field(body, "stop");
  if (stop == nullptr) return out;
  if (!stop->is_string() && !stop->is_array()) {
    return Fail(ErrorCode::kInvalidArgument, "'stop' must be a string or list of strings");
  }
  if (stop->is_array() && stop->size() > limits.max_stop_strings) {
    return Fail(ErrorCode::kInvalidArgument,
                "'stop' has {} strings; the limit is {} (--max-stop-strings)", stop->size(),
                limits.max_stop_strings);
  }
  const bool one = stop->is_string();
  for (size_t i = 0; i < (one ? 1 : stop->size()); ++i) {
    const Json& s = one ? *stop : (*stop)[i];
    if (!s.is_string()) {
      return Fail(ErrorCode::kInvalidArgument, "'stop' must be a string or list of strings");
    }
    const std::string& text = s.get_ref<const std::string&>();
    if (text.size() > limits.max_stop_bytes) {
      return Fail(ErrorCode::kInvalidArgument,
                  "'{}' is {} bytes; the limit is {} bytes (--max-stop-bytes)",
                  one ? std::string("stop") : fmt::format("stop[{}]", i), text.size(),
                  limits.max_stop_bytes);
    }
    if (!text.empty()) out.push_back(text);
  }
  return out;
}

}  // namespace

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
  MINERU_RETURN_IF_ERROR(ParseSampling(body, options.limits, &out.request.sampling));

  // Both limits as the current client sends them; the smaller one applies. Nothing is sized by
  // them: the engine clamps a limit to what the context leaves.
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> limit, IntField(body, key));
    if (!limit) continue;
    if (*limit < 1) return Fail(ErrorCode::kInvalidArgument, "'{}' must be at least 1", key);
    out.request.max_new_tokens = std::min(*limit, out.request.max_new_tokens.value_or(*limit));
  }
  MINERU_ASSIGN_OR_RETURN(out.stop, ParseStop(body, options.limits));
  MINERU_ASSIGN_OR_RETURN(auto priority, IntField(body, "priority"));
  if (priority) {
    MINERU_ASSIGN_OR_RETURN(out.request.priority, Int32(*priority, "priority"));
  }
  MINERU_ASSIGN_OR_RETURN(auto skip_special, BoolField(body, "skip_special_tokens"));
  out.skip_special = skip_special.value_or(false);
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
  // Images last: the most expensive part, after every cheap check, and only once every part
  // of every message is known (their count and budgets come before any decoding).
  std::vector<ImagePart> images;
  MINERU_RETURN_IF_ERROR(ParseMessages(*messages, &out.request, &images));
  MINERU_ASSIGN_OR_RETURN(out.request.images, LoadChatImages(images, options));
  return out;
}

HttpResponse ChatRequestErrorResponse(const Error& error) {
  switch (error.code) {
    case ErrorCode::kNotFound:
      return ApiError(404, error.message, "invalid_request_error", "model_not_found");
    case ErrorCode::kResourceExhausted:
      return ApiError(413, error.message, "invalid_request_error", "limit_exceeded");
    case ErrorCode::kUnavailable:
      return ApiError(503, error.message, "unavailable_error", "service_unavailable");
    default:
      return ApiError(400, error.message, "invalid_request_error");
  }
}

}  // namespace mineru::service
