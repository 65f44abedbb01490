// SPDX-License-Identifier: Apache-2.0
#include "service/chat_cache.h"

#include <fmt/format.h>

#include <span>

#include "base/json.h"
#include "base/sha256.h"

namespace mineru::service {
namespace {

// Length-prefixed, so that no two different requests hash the same bytes.
void AddField(Sha256& hasher, std::string_view tag, std::string_view bytes) {
  hasher.Update(fmt::format("{}{}:", tag, bytes.size()));
  hasher.Update(bytes);
}

}  // namespace

std::optional<std::string> ChatCacheKey(const engine::Request& request, bool skip_special,
                                        const std::vector<std::string>& stop) {
  const engine::SamplingParams& s = request.sampling;
  if (!s.greedy() && !s.seed) return std::nullopt;
  if (!request.prompt_ids.empty() || request.stop_ids) return std::nullopt;  // not from the API
  Sha256 hasher;
  // Floats as their exact decimal (%.9g round-trips a float), as pipeline::RequestCacheKey.
  hasher.Update(fmt::format(
      "chat1|t={:.9g};p={:.9g};k={};pp={:.9g};fp={:.9g};rp={:.9g};nr={};s={}|max={}|skip={}|",
      s.temperature, s.top_p, s.top_k, s.presence_penalty, s.frequency_penalty,
      s.repetition_penalty, s.no_repeat_ngram_size, s.seed ? std::to_string(*s.seed) : "-",
      request.max_new_tokens ? std::to_string(*request.max_new_tokens) : "-",
      skip_special ? 1 : 0));
  for (const std::string& one : stop) AddField(hasher, "stop", one);
  // Only when present, so that the keys of requests without a bias stay what they were.
  for (const auto& [token, bias] : s.logit_bias) {
    AddField(hasher, "bias", fmt::format("{}={:.9g}", token, bias));
  }
  size_t image = 0;
  for (const text::ChatMessage& message : request.messages) {
    AddField(hasher, "role", message.role);
    for (const text::ChatPart& part : message.content) {
      if (part.kind == text::ChatPart::Kind::kText) {
        AddField(hasher, "text", part.text);
        continue;
      }
      if (image >= request.images.size() || !request.images[image].rgb) return std::nullopt;
      const image::RgbImage& rgb = *request.images[image++].rgb;
      hasher.Update(fmt::format("image{}x{}:", rgb.width, rgb.height));
      hasher.Update(std::span(rgb.pixels.data(), rgb.pixels.size()));
    }
  }
  if (image != request.images.size()) return std::nullopt;
  return "chat1|" + HexString(hasher.Finish());
}

std::string EncodeCachedChat(const CachedChat& chat) {
  return DumpJson(Json{{"text", chat.text},
                       {"finish_reason", chat.finish_reason},
                       {"prompt_tokens", chat.prompt_tokens},
                       {"completion_tokens", chat.completion_tokens}});
}

std::optional<CachedChat> DecodeCachedChat(std::string_view value) {
  auto json = ParseJson(value, "cached chat");
  if (!json || !json->is_object()) return std::nullopt;
  auto text = FindString(*json, "text", "cached chat");
  auto finish = FindString(*json, "finish_reason", "cached chat");
  auto prompt = FindInt(*json, "prompt_tokens", "cached chat");
  auto completion = FindInt(*json, "completion_tokens", "cached chat");
  if (!text || !*text || !finish || !*finish || !prompt || !*prompt || !completion ||
      !*completion) {
    return std::nullopt;
  }
  if ((**finish != "stop" && **finish != "length") || **prompt < 0 || **completion < 0) {
    return std::nullopt;
  }
  return CachedChat{std::move(**text), std::move(**finish), **prompt, **completion};
}

}  // namespace mineru::service
