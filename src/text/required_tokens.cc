// SPDX-License-Identifier: Apache-2.0
#include "text/required_tokens.h"

#include <charconv>
#include <filesystem>
#include <vector>

#include "base/json.h"

namespace mineru::text {
namespace {

namespace fs = std::filesystem;

std::string Joined(const std::vector<std::string_view>& tokens) {
  std::string out;
  for (std::string_view token : tokens) out += (out.empty() ? "" : " ") + std::string(token);
  return out;
}

// The added token with exactly this content, or nullptr.
const AddedToken* FindByContent(const Tokenizer& tokenizer, std::string_view content) {
  const std::optional<int32_t> id = tokenizer.TokenToId(content);
  if (!id) return nullptr;
  const AddedToken* token = tokenizer.FindAddedToken(*id);
  return token != nullptr && token->content == content ? token : nullptr;
}

Status CheckAddedTokensJson(const std::string& path, const Tokenizer& tokenizer,
                            uint64_t max_bytes) {
  MINERU_ASSIGN_OR_RETURN(Json json, ReadJsonFile(path, max_bytes));
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected a JSON object", path);
  for (const auto& [content, id] : json.items()) {
    if (!id.is_number_integer()) {
      return Fail(ErrorCode::kCorrupt, "{}: the id of {} must be an integer, got {}", path, content,
                  id.dump());
    }
    const AddedToken* token = FindByContent(tokenizer, content);
    if (token == nullptr || token->id != id.get<int64_t>()) {
      return Fail(ErrorCode::kCorrupt, "{}: {} has id {} but tokenizer.json {}", path, content,
                  id.get<int64_t>(),
                  token == nullptr ? std::string("has no such added token")
                                   : "gives it id " + std::to_string(token->id));
    }
  }
  return OkStatus();
}

Status CheckAddedTokensDecoder(const std::string& path, const Tokenizer& tokenizer,
                               uint64_t max_bytes) {
  MINERU_ASSIGN_OR_RETURN(Json json, ReadJsonFile(path, max_bytes));
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected a JSON object", path);
  const auto decoder = json.find("added_tokens_decoder");
  if (decoder == json.end() || decoder->is_null()) return OkStatus();
  if (!decoder->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'added_tokens_decoder' must be an object", path);
  }
  for (const auto& [key, entry] : decoder->items()) {
    int32_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0) {
      return Fail(ErrorCode::kCorrupt, "{}: added_tokens_decoder key \"{}\" is not an id", path,
                  key);
    }
    const std::string entry_where = fmt::format("{}: added_tokens_decoder[{}]", path, key);
    if (!entry.is_object()) {
      return Fail(ErrorCode::kCorrupt, "{}: expected an object", entry_where);
    }
    MINERU_ASSIGN_OR_RETURN(auto content, FindString(entry, "content", entry_where));
    MINERU_ASSIGN_OR_RETURN(auto special, FindBool(entry, "special", entry_where));
    const AddedToken* token = tokenizer.FindAddedToken(id);
    if (!content || token == nullptr || token->content != *content) {
      return Fail(ErrorCode::kCorrupt, "{}: {} is not tokenizer.json's added token {}", entry_where,
                  content ? *content : std::string("(no content)"),
                  token == nullptr ? std::string("(none)") : token->content);
    }
    if (special && *special != token->special) {
      return Fail(ErrorCode::kCorrupt, "{}: {} is {}special here but {}special in tokenizer.json",
                  entry_where, *content, *special ? "" : "not ", token->special ? "" : "not ");
    }
  }
  return OkStatus();
}

}  // namespace

Status CheckRequiredTokens(const Tokenizer& tokenizer, std::span<const std::string_view> required,
                           std::string_view needed_by, std::string_view where) {
  std::vector<std::string_view> missing, plain;
  for (std::string_view content : required) {
    const AddedToken* token = FindByContent(tokenizer, content);
    if (token == nullptr) {
      missing.push_back(content);
    } else if (!token->special) {
      plain.push_back(content);
    }
  }
  if (!missing.empty()) {
    return Fail(ErrorCode::kUnsupported, "{}: no added token {} ({} needs {})", where,
                Joined(missing), needed_by, missing.size() == 1 ? "it" : "them");
  }
  if (!plain.empty()) {
    return Fail(ErrorCode::kUnsupported, "{}: added token {} is not marked special ({} needs {})",
                where, Joined(plain), needed_by, plain.size() == 1 ? "it special" : "them special");
  }
  return OkStatus();
}

Status CheckAddedTokenFiles(const std::string& model_dir, const Tokenizer& tokenizer,
                            uint64_t max_bytes) {
  std::error_code ec;
  const std::string added = (fs::path(model_dir) / "added_tokens.json").string();
  if (fs::exists(added, ec))
    MINERU_RETURN_IF_ERROR(CheckAddedTokensJson(added, tokenizer, max_bytes));
  const std::string config = (fs::path(model_dir) / "tokenizer_config.json").string();
  if (fs::exists(config, ec)) {
    MINERU_RETURN_IF_ERROR(CheckAddedTokensDecoder(config, tokenizer, max_bytes));
  }
  return OkStatus();
}

}  // namespace mineru::text
