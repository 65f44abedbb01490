// SPDX-License-Identifier: Apache-2.0
#include "text/chat_template_file.h"

#include <filesystem>

#include "base/json.h"
#include "base/mapped_file.h"
#include "text/chat_template.h"

namespace mineru::text {
namespace {

namespace fs = std::filesystem;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The "chat_template" field of a tokenizer_config.json or chat_template.json: nullopt when
// absent or null.
Result<std::optional<std::string>> TemplateField(const Json& json, const std::string& path) {
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected a JSON object", path);
  const auto it = json.find("chat_template");
  if (it == json.end() || it->is_null()) return std::optional<std::string>();
  if (it->is_string()) return std::optional<std::string>(it->get<std::string>());
  if (it->is_array()) {
    // transformers' named templates: [{"name": "default", "template": "..."}, ...].
    for (const Json& entry : *it) {
      if (!entry.is_object()) continue;
      const auto name = entry.find("name");
      const auto text = entry.find("template");
      if (name != entry.end() && name->is_string() && *name == "default" && text != entry.end() &&
          text->is_string()) {
        return std::optional<std::string>(text->get<std::string>());
      }
    }
    return Fail(ErrorCode::kCorrupt, "{}: 'chat_template' lists no \"default\" template", path);
  }
  return Fail(ErrorCode::kCorrupt, "{}: 'chat_template' must be a string or a list, got {}", path,
              std::string(it->type_name()));
}

}  // namespace

Result<std::optional<ChatTemplateSource>> FindChatTemplate(const std::string& model_dir,
                                                           uint64_t max_bytes) {
  std::error_code ec;
  const fs::path dir(model_dir);
  const std::string jinja = (dir / "chat_template.jinja").string();
  if (fs::exists(jinja, ec)) {
    MINERU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(jinja, max_bytes));
    return std::optional<ChatTemplateSource>(ChatTemplateSource{jinja, std::move(text)});
  }
  for (const char* name : {"chat_template.json", "tokenizer_config.json"}) {
    const std::string path = (dir / name).string();
    if (!fs::exists(path, ec)) continue;
    MINERU_ASSIGN_OR_RETURN(Json json, ReadJsonFile(path, max_bytes));
    MINERU_ASSIGN_OR_RETURN(std::optional<std::string> text, TemplateField(json, path));
    if (text) {
      return std::optional<ChatTemplateSource>(
          ChatTemplateSource{path + "#chat_template", std::move(*text)});
    }
  }
  return std::optional<ChatTemplateSource>();
}

std::string_view ChatTemplateMatchName(ChatTemplateMatch match) {
  switch (match) {
    case ChatTemplateMatch::kBuiltIn:
      return "built-in";
    case ChatTemplateMatch::kCompatible:
      return "compatible";
    case ChatTemplateMatch::kForeign:
      break;
  }
  return "foreign";
}

ChatTemplateMatch MatchChatTemplate(std::string_view jinja) {
  const std::string_view trimmed = Trim(jinja);
  if (trimmed == Trim(kQwen2VlChatTemplate)) return ChatTemplateMatch::kBuiltIn;
  // What the built-in renderer writes, literally, in every prompt it makes.
  for (std::string_view piece :
       {std::string_view("<|im_start|>"), std::string_view("<|im_end|>\n"),
        std::string_view("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"),
        std::string_view("<|vision_start|><|image_pad|><|vision_end|>"),
        std::string_view("<|im_start|>assistant\n"), std::string_view("add_generation_prompt")}) {
    if (trimmed.find(piece) == std::string_view::npos) return ChatTemplateMatch::kForeign;
  }
  return ChatTemplateMatch::kCompatible;
}

Status CheckChatTemplate(const std::optional<ChatTemplateSource>& source) {
  if (!source || MatchChatTemplate(source->text) != ChatTemplateMatch::kForeign) {
    return OkStatus();
  }
  return Fail(ErrorCode::kUnsupported,
              "{}: the chat template is not Qwen2-VL's (it lacks the ChatML turns, the default "
              "system prompt or the <|vision_start|><|image_pad|><|vision_end|> placeholder); "
              "this runtime renders only the Qwen2-VL template",
              source->path);
}

}  // namespace mineru::text
