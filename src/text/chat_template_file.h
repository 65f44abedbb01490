// SPDX-License-Identifier: Apache-2.0
// The chat template a checkpoint ships, and whether it is the one this runtime renders.
//
// The runtime renders chat prompts with its own Qwen2-VL renderer (text/chat_template.h), not
// with a Jinja engine. The loader reads the checkpoint's template anyway, to refuse a model whose
// template would render something else:
//   kBuiltIn     the file holds kQwen2VlChatTemplate (whitespace around it aside): the prompts
//                are exactly what transformers renders;
//   kCompatible  a different text that still writes Qwen2-VL's ChatML turns, default system
//                prompt and vision placeholders (for instance a reformatted copy or a variant
//                with tool-call branches): accepted, and the built-in form is rendered;
//   kForeign     anything else: CheckChatTemplate refuses it (kUnsupported, naming the file).
// A checkpoint with no template at all gets the built-in one (what MinerU's client assumes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mineru::text {

// Largest template file (or tokenizer_config.json) read.
inline constexpr uint64_t kDefaultMaxChatTemplateFileBytes = uint64_t{16} << 20;

struct ChatTemplateSource {
  std::string path;  // the file, with "#chat_template" when the template is a JSON field
  std::string text;  // the Jinja source
};

// Looks in model_dir, first match wins (transformers' order):
//   chat_template.jinja                        the whole file;
//   chat_template.json                         its "chat_template" string;
//   tokenizer_config.json                      its "chat_template": a string, or a list of
//                                              {"name", "template"} whose "default" entry counts.
// nullopt when none has one. Errors: a file over max_bytes, JSON that does not parse, a
// chat_template of another type.
Result<std::optional<ChatTemplateSource>> FindChatTemplate(
    const std::string& model_dir, uint64_t max_bytes = kDefaultMaxChatTemplateFileBytes);

enum class ChatTemplateMatch { kBuiltIn, kCompatible, kForeign };

// "built-in", "compatible", "foreign".
std::string_view ChatTemplateMatchName(ChatTemplateMatch match);

ChatTemplateMatch MatchChatTemplate(std::string_view jinja);

// OK for no template, kBuiltIn and kCompatible; kUnsupported naming the file for kForeign.
Status CheckChatTemplate(const std::optional<ChatTemplateSource>& source);

}  // namespace mineru::text
