// SPDX-License-Identifier: Apache-2.0
#include "text/tokenizer.h"

#include <algorithm>
#include <limits>

#include "base/mapped_file.h"
#include "text/bpe.h"
#include "text/byte_level.h"
#include "text/pre_tokenizer.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace mineru::text {
namespace {

// A file whose largest id is far beyond its number of tokens would make the id table huge;
// real tokenizers number their tokens densely, so this is a format rule, not a tunable limit.
constexpr int64_t kIdSlack = 1024;

// "normalizer": null, {"type": "NFC"}, or a Sequence of NFCs. Returns whether NFC applies.
Result<bool> ParseNormalizer(const Json& root, std::string_view name) {
  const auto it = root.find("normalizer");
  if (it == root.end() || it->is_null()) return false;
  const std::string where = std::string(name) + ": normalizer";
  if (!it->is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected an object", where);
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> type, FindString(*it, "type", where));
  if (type == "NFC") return true;
  if (type == "Sequence") {
    const auto list = it->find("normalizers");
    if (list == it->end() || !list->is_array()) {
      return Fail(ErrorCode::kCorrupt, "{}: Sequence needs a 'normalizers' array", where);
    }
    bool nfc = false;
    for (const Json& item : *list) {
      MINERU_ASSIGN_OR_RETURN(std::optional<std::string> item_type,
                              FindString(item, "type", where));
      if (item_type != "NFC") {
        return Fail(ErrorCode::kUnsupported, "{}: normalizer '{}' is not supported (only NFC)",
                    where, item_type.value_or("?"));
      }
      nfc = true;
    }
    return nfc;
  }
  return Fail(ErrorCode::kUnsupported, "{}: normalizer '{}' is not supported (only NFC)", where,
              type.value_or("?"));
}

Status CheckDecoder(const Json& root, std::string_view name) {
  const std::string where = std::string(name) + ": decoder";
  const auto it = root.find("decoder");
  if (it == root.end() || it->is_null()) {
    return Fail(ErrorCode::kUnsupported,
                "{}: none given (tokens would be joined by spaces); only ByteLevel is supported",
                where);
  }
  if (!it->is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected an object", where);
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> type, FindString(*it, "type", where));
  if (type != "ByteLevel") {
    return Fail(ErrorCode::kUnsupported, "{}: '{}' is not supported (only ByteLevel)", where,
                type.value_or("?"));
  }
  return OkStatus();
}

Result<std::vector<AddedToken>> ParseAddedTokens(const Json& root, std::string_view name) {
  std::vector<AddedToken> tokens;
  const auto it = root.find("added_tokens");
  if (it == root.end() || it->is_null()) return tokens;
  if (!it->is_array()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'added_tokens' must be an array", name);
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& item = (*it)[i];
    const std::string where = fmt::format("{}: added_tokens[{}]", name, i);
    if (!item.is_object()) return Fail(ErrorCode::kCorrupt, "{}: expected an object", where);
    AddedToken token;
    MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> id, FindInt(item, "id", where));
    if (!id || *id < 0 || *id > std::numeric_limits<int32_t>::max()) {
      return Fail(ErrorCode::kCorrupt, "{}: needs an 'id' in [0, 2^31)", where);
    }
    token.id = static_cast<int32_t>(*id);
    MINERU_ASSIGN_OR_RETURN(std::optional<std::string> content, FindString(item, "content", where));
    if (!content || content->empty()) {
      return Fail(ErrorCode::kCorrupt, "{}: needs a non-empty 'content'", where);
    }
    token.content = std::move(*content);
    const std::pair<const char*, bool*> flags[] = {{"single_word", &token.single_word},
                                                   {"lstrip", &token.lstrip},
                                                   {"rstrip", &token.rstrip},
                                                   {"normalized", &token.normalized},
                                                   {"special", &token.special}};
    for (const auto& [key, field] : flags) {
      MINERU_ASSIGN_OR_RETURN(std::optional<bool> value, FindBool(item, key, where));
      if (value) *field = *value;
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

Result<std::unique_ptr<BpeModel>> ParseModel(const Json& root, std::string_view name,
                                             const BpeTables* streamed) {
  const auto it = root.find("model");
  if (it == root.end() || !it->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: missing the 'model' object", name);
  }
  const std::string where = std::string(name) + ": model";
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> type, FindString(*it, "type", where));
  // Like tokenizers, a model without a type that has merges is a BPE.
  if (!type && !it->contains("merges")) {
    return Fail(ErrorCode::kUnsupported, "{}: no 'type' and no merges (only BPE is supported)",
                where);
  }
  if (type && *type != "BPE") {
    return Fail(ErrorCode::kUnsupported, "{}: type '{}' is not supported (only BPE)", where, *type);
  }
  return BpeModel::FromJson(*it, where, streamed);
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path,
                                                   const TokenizerLimits& limits) {
  MINERU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, limits.max_file_bytes));
  // The vocabulary and merges (most of the file) go straight into flat lists rather than a tree:
  // building and freeing them as a tree took half of the load.
  BpeTables tables;
  const JsonStream stream{{{"model", "vocab"}, {"model", "merges"}},
                          [&](size_t path, std::string&& key, Json&& value) {
                            if (path == 0) {
                              tables.vocab.emplace_back(std::move(key), std::move(value));
                            } else {
                              tables.merges.push_back(std::move(value));
                            }
                            return OkStatus();
                          }};
  MINERU_ASSIGN_OR_RETURN(Json json,
                          ParseJson(text, path, JsonFileLimits(limits.max_json_depth), stream));
  text = std::string();  // the text is no longer needed while the tables are built
  return FromJson(json, path, limits, &tables);
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(const Json& json, std::string_view name,
                                                       const TokenizerLimits& limits) {
  return FromJson(json, name, limits, nullptr);
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(const Json& json, std::string_view name,
                                                       const TokenizerLimits& limits,
                                                       const BpeTables* streamed) {
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: not a JSON object", name);
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> version, FindString(json, "version", name));
  if (version && *version != "1.0") {
    return Fail(ErrorCode::kUnsupported, "{}: tokenizer.json version '{}' (only 1.0)", name,
                *version);
  }
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  t->limits_ = limits;
  MINERU_ASSIGN_OR_RETURN(t->bpe_, ParseModel(json, name, streamed));
  MINERU_ASSIGN_OR_RETURN(t->nfc_, ParseNormalizer(json, name));
  const auto pre = json.find("pre_tokenizer");
  MINERU_ASSIGN_OR_RETURN(PreTokenizer pre_tokenizer,
                          PreTokenizer::FromJson(pre == json.end() ? Json() : *pre,
                                                 std::string(name) + ": pre_tokenizer"));
  t->pre_tokenizer_ = std::make_unique<PreTokenizer>(std::move(pre_tokenizer));
  MINERU_RETURN_IF_ERROR(CheckDecoder(json, name));
  MINERU_ASSIGN_OR_RETURN(std::vector<AddedToken> added, ParseAddedTokens(json, name));

  // The id table: every vocab entry and added token, each id used once (an added token whose
  // content is in the vocab must carry the vocab's id, as tokenizers assigns it).
  const StringMap<int32_t>& vocab = t->bpe_->vocab();
  int64_t max_id = -1;
  for (const auto& [token, id] : vocab) max_id = std::max<int64_t>(max_id, id);
  for (const AddedToken& token : added) max_id = std::max<int64_t>(max_id, token.id);
  const int64_t count = static_cast<int64_t>(vocab.size() + added.size());
  if (max_id >= 2 * count + kIdSlack) {
    return Fail(ErrorCode::kCorrupt, "{}: ids are too sparse: id {} for {} tokens", name, max_id,
                count);
  }
  std::vector<const std::string*> vocab_by_id(static_cast<size_t>(max_id + 1), nullptr);
  for (const auto& [token, id] : vocab) {
    if (vocab_by_id[id] != nullptr) {
      const auto& [a, b] = std::minmax(token, *vocab_by_id[id]);
      return Fail(ErrorCode::kCorrupt, "{}: model.vocab gives id {} to both \"{}\" and \"{}\"",
                  name, id, a, b);
    }
    vocab_by_id[id] = &token;
  }
  t->tokens_.assign(vocab_by_id.size(), TokenEntry());
  std::vector<int32_t> added_index(vocab_by_id.size(), -1);
  for (size_t i = 0; i < added.size(); ++i) {
    const AddedToken& token = added[i];
    const std::string where = fmt::format("{}: added_tokens[{}] \"{}\"", name, i, token.content);
    const auto in_vocab = vocab.find(token.content);
    if (in_vocab != vocab.end() && in_vocab->second != token.id) {
      return Fail(ErrorCode::kCorrupt, "{}: id {} but the vocab gives it id {}", where, token.id,
                  in_vocab->second);
    }
    if (in_vocab == vocab.end() && vocab_by_id[token.id] != nullptr) {
      return Fail(ErrorCode::kCorrupt, "{}: id {} is already the vocab's \"{}\"", where, token.id,
                  *vocab_by_id[token.id]);
    }
    if (added_index[token.id] >= 0) {
      return Fail(ErrorCode::kCorrupt, "{}: id {} is also added token \"{}\"", where, token.id,
                  added[added_index[token.id]].content);
    }
    if (!t->added_ids_.emplace(token.content, token.id).second) {
      return Fail(ErrorCode::kCorrupt, "{}: listed twice", where);
    }
    added_index[token.id] = static_cast<int32_t>(i);
  }

  for (size_t id = 0; id < t->tokens_.size(); ++id) {
    const std::string* text =
        added_index[id] >= 0 ? &added[added_index[id]].content : vocab_by_id[id];
    if (text == nullptr) continue;
    TokenEntry& entry = t->tokens_[id];
    entry.present = true;
    entry.added = added_index[id];
    entry.text_offset = t->token_text_.size();
    entry.text_length = text->size();
    t->token_text_ += *text;
    const std::string bytes = ByteLevelDecodeToken(*text);
    entry.bytes_offset = t->token_bytes_.size();
    entry.bytes_length = bytes.size();
    t->token_bytes_ += bytes;
  }

  const bool nfc = t->nfc_;
  MINERU_ASSIGN_OR_RETURN(
      t->added_, AddedVocabulary::Build(
                     std::move(added), [nfc](std::string_view content) -> Result<std::string> {
                       std::string normalized;
                       if (!nfc) return std::string(content);
                       MINERU_ASSIGN_OR_RETURN(bool changed, NormalizeNfc(content, &normalized));
                       return changed ? normalized : std::string(content);
                     }));
  return t;
}

Result<std::vector<int32_t>> Tokenizer::Encode(std::string_view text, bool parse_special) const {
  std::vector<int32_t> ids;
  MINERU_RETURN_IF_ERROR(EncodeAppend(text, parse_special, &ids));
  return ids;
}

Status Tokenizer::EncodeAppend(std::string_view text, bool parse_special,
                               std::vector<int32_t>* ids) const {
  if (text.size() > limits_.max_encode_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "text of {} bytes is over the encode limit of {} bytes", text.size(),
                limits_.max_encode_bytes);
  }
  ids->reserve(ids->size() + text.size() / 3 + 4);
  if (IsValidUtf8(text)) return EncodeText(text, parse_special, ids);
  return EncodeText(RepairUtf8(text), parse_special, ids);
}

// Raw added tokens, then NFC of the text between them.
Status Tokenizer::EncodeText(std::string_view text, bool parse_special,
                             std::vector<int32_t>* ids) const {
  std::vector<Segment> segments;
  added_.Split(text, /*normalized_set=*/false, parse_special, &segments);
  std::string normalized;
  for (const Segment& segment : segments) {
    if (segment.token >= 0) {
      ids->push_back(added_.tokens()[segment.token].id);
      continue;
    }
    std::string_view piece = text.substr(segment.begin, segment.end - segment.begin);
    if (nfc_) {
      MINERU_ASSIGN_OR_RETURN(bool changed, NormalizeNfc(piece, &normalized));
      if (changed) piece = normalized;
    }
    MINERU_RETURN_IF_ERROR(EncodeNormalized(piece, parse_special, ids));
  }
  return OkStatus();
}

// Normalized added tokens, then pre-tokenization and BPE of the text between them.
Status Tokenizer::EncodeNormalized(std::string_view text, bool parse_special,
                                   std::vector<int32_t>* ids) const {
  std::vector<Segment> segments;
  added_.Split(text, /*normalized_set=*/true, parse_special, &segments);
  std::vector<Span> pieces;
  for (const Segment& segment : segments) {
    if (segment.token >= 0) {
      ids->push_back(added_.tokens()[segment.token].id);
      continue;
    }
    const std::string_view part = text.substr(segment.begin, segment.end - segment.begin);
    MINERU_RETURN_IF_ERROR(pre_tokenizer_->Split(part, &pieces));
    for (const Span& span : pieces) {
      bpe_->EncodePiece(part.substr(span.begin, span.end - span.begin), ids);
    }
  }
  return OkStatus();
}

Result<std::string> Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special) const {
  if (ids.size() > limits_.max_decode_ids) {
    return Fail(ErrorCode::kResourceExhausted, "{} ids are over the decode limit of {} ids",
                ids.size(), limits_.max_decode_ids);
  }
  std::string bytes;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (skip_special && IsSpecial(id)) continue;
    if (!AppendTokenBytes(id, &bytes)) {
      return Fail(ErrorCode::kInvalidArgument, "id {} (position {}) has no token", id, i);
    }
  }
  if (IsValidUtf8(bytes)) return bytes;
  return RepairUtf8(bytes);
}

bool Tokenizer::AppendTokenBytes(int32_t id, std::string* bytes) const {
  if (id < 0 || id >= id_limit() || !tokens_[id].present) return false;
  const TokenEntry& entry = tokens_[id];
  bytes->append(token_bytes_, entry.bytes_offset, entry.bytes_length);
  return true;
}

std::optional<int32_t> Tokenizer::TokenToId(std::string_view token) const {
  if (const auto it = added_ids_.find(token); it != added_ids_.end()) return it->second;
  if (const auto it = bpe_->vocab().find(token); it != bpe_->vocab().end()) return it->second;
  return std::nullopt;
}

std::optional<std::string_view> Tokenizer::IdToToken(int32_t id) const {
  if (id < 0 || id >= id_limit() || !tokens_[id].present) return std::nullopt;
  return std::string_view(token_text_).substr(tokens_[id].text_offset, tokens_[id].text_length);
}

const AddedToken* Tokenizer::FindAddedToken(int32_t id) const {
  if (id < 0 || id >= id_limit() || tokens_[id].added < 0) return nullptr;
  return &added_.tokens()[tokens_[id].added];
}

bool Tokenizer::IsSpecial(int32_t id) const {
  const AddedToken* token = FindAddedToken(id);
  return token != nullptr && token->special;
}

size_t Tokenizer::vocab_size() const { return bpe_->vocab().size(); }

}  // namespace mineru::text
