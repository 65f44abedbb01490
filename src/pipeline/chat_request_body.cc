// SPDX-License-Identifier: Apache-2.0
#include "pipeline/chat_request_body.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "image/data_url.h"
#include "image/encode.h"

namespace mineru::pipeline {
namespace {

// Insertion order is the wire order (Json, nlohmann::json, sorts its keys).
using OrderedJson = nlohmann::ordered_json;

// The double whose shortest decimal form is the float's: fmt writes a float as the shortest
// text that reads back to it ("0.005"), and that text read as a double is the number a Python
// literal 0.005 is, which nlohmann then writes as "0.005" again. Widening the float directly
// would write 0.004999999888241291. Callers pass finite values (Validate ran).
double ShortestDecimal(float value) {
  const std::string text = fmt::format("{}", value);
  double parsed = 0.0;
  std::from_chars(text.data(), text.data() + text.size(), parsed);
  return parsed;
}

// OpenAI refuses the vLLM extensions; MinerU's client drops them for "gpt..." model ids.
bool IsOpenAiModel(std::string_view model) {
  if (model.size() < 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (std::tolower(static_cast<unsigned char>(model[i])) != "gpt"[i]) return false;
  }
  return true;
}

size_t CountImageParts(const engine::Request& request) {
  size_t count = 0;
  for (const text::ChatMessage& message : request.messages) {
    for (const text::ChatPart& part : message.content) {
      if (part.kind == text::ChatPart::Kind::kImage) ++count;
    }
  }
  return count;
}

Result<OrderedJson> ImagePart(const engine::ImageInput& input, size_t index,
                              const ChatBodyOptions& options) {
  if (!input.rgb) {
    return Fail(ErrorCode::kInvalidArgument,
                "image {} has no decoded pixels (a model server is sent the image, not "
                "preprocessed pixel values)",
                index);
  }
  // Unfiltered rows: a third of the encode time on document images, and no larger.
  auto png = image::EncodePng(
      *input.rgb, {.compression_level = options.png_compression_level, .filter_rows = false});
  if (!png) return tl::unexpected(WithContext(png.error(), fmt::format("image {}", index)));
  OrderedJson part = OrderedJson::object();
  part["type"] = "image_url";
  part["image_url"] = OrderedJson::object();
  part["image_url"]["url"] = image::MakeDataUrl("image/png", *png);
  return part;
}

// A system message is a plain string, as the client sends its own; it cannot hold an image.
Result<OrderedJson> SystemMessage(const text::ChatMessage& message) {
  std::string content;
  for (const text::ChatPart& part : message.content) {
    if (part.kind == text::ChatPart::Kind::kImage) {
      return Fail(ErrorCode::kInvalidArgument, "a system message cannot carry an image");
    }
    content += part.text;
  }
  return OrderedJson{{"role", message.role}, {"content", std::move(content)}};
}

// Any other message: an array of parts, the images taking request.images in order.
Result<OrderedJson> PartsMessage(const text::ChatMessage& message, const engine::Request& request,
                                 size_t& next_image, const ChatBodyOptions& options) {
  OrderedJson parts = OrderedJson::array();
  for (const text::ChatPart& part : message.content) {
    if (part.kind == text::ChatPart::Kind::kImage) {
      MINERU_ASSIGN_OR_RETURN(OrderedJson image,
                              ImagePart(request.images[next_image], next_image, options));
      parts.push_back(std::move(image));
      ++next_image;
    } else {
      parts.push_back(OrderedJson{{"type", "text"}, {"text", part.text}});
    }
  }
  return OrderedJson{{"role", message.role}, {"content", std::move(parts)}};
}

Result<OrderedJson> Messages(const engine::Request& request, const ChatBodyOptions& options) {
  OrderedJson messages = OrderedJson::array();
  // The chat template's rule: a default system turn unless the first message is one.
  if (request.messages.front().role != "system") {
    messages.push_back(OrderedJson{{"role", "system"}, {"content", kClientSystemPrompt}});
  }
  size_t next_image = 0;
  for (const text::ChatMessage& message : request.messages) {
    if (message.role == "system") {
      MINERU_ASSIGN_OR_RETURN(OrderedJson system, SystemMessage(message));
      messages.push_back(std::move(system));
    } else {
      MINERU_ASSIGN_OR_RETURN(OrderedJson other,
                              PartsMessage(message, request, next_image, options));
      messages.push_back(std::move(other));
    }
  }
  return messages;
}

}  // namespace

Result<std::string> BuildChatRequestBody(const engine::Request& request, std::string_view model,
                                         const ChatBodyOptions& options) {
  if (!request.prompt_ids.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "a model server takes chat messages, not ready prompt ids");
  }
  if (request.messages.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "the request has no messages");
  }
  const size_t image_parts = CountImageParts(request);
  if (image_parts != request.images.size()) {
    return Fail(ErrorCode::kInvalidArgument, "the messages have {} image parts for {} images",
                image_parts, request.images.size());
  }
  // What the engine refuses the body refuses too, so that a request fails the same way in
  // process and through a server (and no NaN becomes a JSON null).
  const engine::SamplingParams& sampling = request.sampling;
  MINERU_RETURN_IF_ERROR(sampling.Validate());
  if (request.max_new_tokens && *request.max_new_tokens < 1) {
    return Fail(ErrorCode::kInvalidArgument, "max_new_tokens must be at least 1, not {}",
                *request.max_new_tokens);
  }
  // Not sent: stop_ids (the served model's own end tokens apply; the pipeline sets none) and
  // keep_logits (a debugging aid of the engine).

  const bool openai = IsOpenAiModel(model);
  OrderedJson body = OrderedJson::object();
  body["model"] = model;
  MINERU_ASSIGN_OR_RETURN(body["messages"], Messages(request, options));
  if (request.priority != 0) body["priority"] = request.priority;
  body["temperature"] = ShortestDecimal(sampling.temperature);
  body["top_p"] = ShortestDecimal(sampling.top_p);
  // The engine reads top_k 0 and -1 as off; vLLM (and the client's default) spell off -1.
  if (!openai) body["top_k"] = sampling.top_k >= 1 ? sampling.top_k : -1;
  body["presence_penalty"] = ShortestDecimal(sampling.presence_penalty);
  body["frequency_penalty"] = ShortestDecimal(sampling.frequency_penalty);
  if (!openai) body["repetition_penalty"] = ShortestDecimal(sampling.repetition_penalty);
  if (sampling.no_repeat_ngram_size > 0) {
    body["vllm_xargs"] =
        OrderedJson{{"no_repeat_ngram_size", sampling.no_repeat_ngram_size}, {"debug", false}};
  }
  if (request.max_new_tokens) {
    body["max_completion_tokens"] = *request.max_new_tokens;
    body["max_tokens"] = *request.max_new_tokens;
  }
  if (!openai) body["skip_special_tokens"] = false;
  if (sampling.seed) body["seed"] = *sampling.seed;
  if (!sampling.logit_bias.empty()) {
    OrderedJson bias = OrderedJson::object();
    for (const auto& [token, value] : sampling.logit_bias) {
      bias[std::to_string(token)] = ShortestDecimal(value);
    }
    body["logit_bias"] = std::move(bias);
  }
  // Prompts carry page text; bytes that are not UTF-8 become U+FFFD rather than an exception.
  return body.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace mineru::pipeline
