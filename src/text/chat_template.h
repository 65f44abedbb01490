// SPDX-License-Identifier: Apache-2.0
// The Qwen2-VL chat template (ChatML with vision placeholders) and the prompt ids it yields.
//
// Rendering, exactly what the Jinja template kQwen2VlChatTemplate produces:
//   - when the first message is not a system message, a default system turn
//     "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" comes first;
//   - each message is "<|im_start|>" + role + "\n" + its parts concatenated + "<|im_end|>\n";
//     a text part is its text, an image part "<|vision_start|><|image_pad|><|vision_end|>",
//     preceded by "Picture N: " (N counts images over all messages) with add_vision_id;
//   - with add_generation_prompt, "<|im_start|>assistant\n" ends the prompt.
// The ids are those of tokenizing that text with special tokens parsed (as transformers does),
// except that each image's single <|image_pad|> becomes t·h·w / merge² copies, merge being the
// vision tower's spatial_merge_size (2). Token ids are looked up by content in the tokenizer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "text/tokenizer.h"

namespace mineru::text {

inline constexpr std::string_view kDefaultSystemPrompt = "You are a helpful assistant.";

// The Jinja source of the Qwen2-VL chat template, as tokenizer_config.json stores it.
extern const std::string_view kQwen2VlChatTemplate;

// An image's patch grid before merging: temporal, height and width in patches (the image
// processor's image_grid_thw).
struct ImageGrid {
  int64_t t = 1, h = 0, w = 0;
};

struct ChatPart {
  enum class Kind { kText, kImage };
  Kind kind = Kind::kText;
  std::string text;  // kText
  ImageGrid grid;    // kImage

  static ChatPart Text(std::string text) { return {Kind::kText, std::move(text), {}}; }
  static ChatPart Image(ImageGrid grid) { return {Kind::kImage, {}, grid}; }
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::vector<ChatPart> content;
};

struct ChatTemplateOptions {
  bool add_generation_prompt = true;
  bool add_vision_id = false;  // "Picture N: " before each image
  int64_t spatial_merge_size = 2;
};

// Where one image's tokens are: ids[offset, offset + length) are all <|image_pad|>.
struct ImageSpan {
  size_t offset = 0;
  size_t length = 0;
};

struct ChatPrompt {
  std::string text;               // the rendered template (one <|image_pad|> per image)
  std::vector<int32_t> ids;       // the model's input ids
  std::vector<ImageSpan> images;  // one per image part, in order
};

std::string RenderChatTemplate(std::span<const ChatMessage> messages,
                               const ChatTemplateOptions& options = {});

// Errors: a special token of the template missing from the tokenizer; a grid that is not
// positive or not divisible by the merge size; a text part that itself produces <|image_pad|>
// (the ids would no longer match the images); the tokenizer's encode limit (on each text run).
Result<ChatPrompt> BuildChatPrompt(const Tokenizer& tokenizer,
                                   std::span<const ChatMessage> messages,
                                   const ChatTemplateOptions& options = {});

}  // namespace mineru::text
