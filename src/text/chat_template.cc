// SPDX-License-Identifier: Apache-2.0
#include "text/chat_template.h"

#include <limits>

namespace mineru::text {

const std::string_view kQwen2VlChatTemplate =
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}"
    "{{ message['content'] }}<|im_end|>\n{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";
constexpr std::string_view kVisionStart = "<|vision_start|>";
constexpr std::string_view kVisionEnd = "<|vision_end|>";
constexpr std::string_view kImagePad = "<|image_pad|>";

// Walks the template, handing text runs and images to the callbacks in order. Text runs are
// cut only right after <|vision_start|>, so tokenizing them one by one gives the ids of the
// whole text (an added token ends a run there either way).
template <class OnText, class OnImage>
void Walk(std::span<const ChatMessage> messages, const ChatTemplateOptions& options, OnText on_text,
          OnImage on_image) {
  std::string run;
  int image_count = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (i == 0 && message.role != "system") {
      run += fmt::format("{}system\n{}{}\n", kImStart, kDefaultSystemPrompt, kImEnd);
    }
    run += fmt::format("{}{}\n", kImStart, message.role);
    for (const ChatPart& part : message.content) {
      if (part.kind == ChatPart::Kind::kText) {
        run += part.text;
        continue;
      }
      ++image_count;
      if (options.add_vision_id) run += fmt::format("Picture {}: ", image_count);
      run += kVisionStart;
      on_text(run);
      run.clear();
      on_image(part.grid);
      run += kVisionEnd;
    }
    run += kImEnd;
    run += '\n';
  }
  if (options.add_generation_prompt) run += fmt::format("{}assistant\n", kImStart);
  on_text(run);
}

}  // namespace

std::string RenderChatTemplate(std::span<const ChatMessage> messages,
                               const ChatTemplateOptions& options) {
  std::string text;
  Walk(
      messages, options, [&](const std::string& run) { text += run; },
      [&](const ImageGrid&) { text += kImagePad; });
  return text;
}

Result<ChatPrompt> BuildChatPrompt(const Tokenizer& tokenizer,
                                   std::span<const ChatMessage> messages,
                                   const ChatTemplateOptions& options) {
  for (std::string_view token : {kImStart, kImEnd, kVisionStart, kVisionEnd, kImagePad}) {
    const std::optional<int32_t> id = tokenizer.TokenToId(token);
    if (!id || tokenizer.FindAddedToken(*id) == nullptr) {
      return Fail(ErrorCode::kInvalidArgument,
                  "the tokenizer has no added token {} (the chat template needs it)", token);
    }
  }
  const int32_t pad = *tokenizer.TokenToId(kImagePad);
  const int64_t merge = options.spatial_merge_size;
  if (merge < 1) {
    return Fail(ErrorCode::kInvalidArgument, "spatial_merge_size {} must be positive", merge);
  }
  ChatPrompt prompt;
  prompt.text = RenderChatTemplate(messages, options);
  Status status = OkStatus();
  int64_t expected_pads = 0;
  Walk(
      messages, options,
      [&](const std::string& run) {
        if (status) status = tokenizer.EncodeAppend(run, /*parse_special=*/true, &prompt.ids);
      },
      [&](const ImageGrid& g) {
        if (!status) return;
        const int64_t index = static_cast<int64_t>(prompt.images.size());
        if (g.t < 1 || g.h < 1 || g.w < 1 || g.h % merge != 0 || g.w % merge != 0) {
          status = Fail(ErrorCode::kInvalidArgument,
                        "image {}: grid ({}, {}, {}) must be positive with h and w divisible by "
                        "the merge size {}",
                        index, g.t, g.h, g.w, merge);
          return;
        }
        constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
        const int64_t tokens = g.t * (g.h / merge) * (g.w / merge);
        if (g.t > kMax || g.h > kMax || g.w > kMax || tokens > kMax ||
            expected_pads + tokens > kMax) {
          status = Fail(ErrorCode::kInvalidArgument, "image {}: grid ({}, {}, {}) is too large",
                        index, g.t, g.h, g.w);
          return;
        }
        prompt.images.push_back({prompt.ids.size(), static_cast<size_t>(tokens)});
        prompt.ids.insert(prompt.ids.end(), static_cast<size_t>(tokens), pad);
        expected_pads += tokens;
      });
  MINERU_RETURN_IF_ERROR(status);
  int64_t pads = 0;
  for (int32_t id : prompt.ids) pads += id == pad;
  if (pads != expected_pads) {
    return Fail(ErrorCode::kInvalidArgument,
                "a text part contains {} itself: the prompt would have {} image tokens for "
                "images that need {}",
                kImagePad, pads, expected_pads);
  }
  return prompt;
}

}  // namespace mineru::text
