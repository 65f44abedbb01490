// SPDX-License-Identifier: Apache-2.0
// A byte-level BPE tokenizer loaded from a Hugging Face tokenizer.json, computing the ids
// Hugging Face tokenizers computes (docs/TOKENIZER.md has the rules and the proof).
//
//   MINERU_ASSIGN_OR_RETURN(auto tokenizer, text::Tokenizer::Load(dir + "/tokenizer.json"));
//   MINERU_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tokenizer->Encode("\nText Recognition:"));
//   MINERU_ASSIGN_OR_RETURN(std::string text, tokenizer->Decode(ids));
//
// Encode: bytes that are not UTF-8 are repaired (text/utf8.h), added tokens are split out
// (text/added_vocabulary.h), the rest is NFC-normalised, pre-tokenized (text/pre_tokenizer.h)
// and BPE-encoded (text/bpe.h). Special tokens are never added around the text. Decode: each
// id's token through the ByteLevel decoder, the bytes then repaired as UTF-8.
//
// A Tokenizer is immutable after loading except for an internal cache, and may be used from
// any number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "text/added_vocabulary.h"
#include "text/string_map.h"

namespace mineru::text {

class BpeModel;
struct BpeTables;
class PreTokenizer;

inline constexpr uint64_t kDefaultMaxTokenizerFileBytes = uint64_t{64} << 20;
inline constexpr uint64_t kDefaultMaxEncodeBytes = uint64_t{4} << 20;
inline constexpr uint64_t kDefaultMaxDecodeIds = uint64_t{1} << 20;

// Limits on untrusted input (docs/LIMITS.md); exceeding one is kResourceExhausted.
struct TokenizerLimits {
  uint64_t max_file_bytes = kDefaultMaxTokenizerFileBytes;  // tokenizer.json size
  int max_json_depth = kJsonMaxDepth;                       // its nesting
  uint64_t max_encode_bytes = kDefaultMaxEncodeBytes;       // text bytes per Encode call
  uint64_t max_decode_ids = kDefaultMaxDecodeIds;           // ids per Decode call
};

class Tokenizer {
 public:
  static Result<std::unique_ptr<Tokenizer>> Load(const std::string& path,
                                                 const TokenizerLimits& limits = {});
  // `name` appears in error messages in place of a path.
  static Result<std::unique_ptr<Tokenizer>> FromJson(const Json& json, std::string_view name,
                                                     const TokenizerLimits& limits = {});

  // The ids of `text`. With parse_special, special added tokens written in the text are
  // recognised (Hugging Face's default); without, they are tokenized as ordinary text
  // (tokenizers' encode_special_tokens, transformers' split_special_tokens). Non-special added
  // tokens are always recognised.
  Result<std::vector<int32_t>> Encode(std::string_view text, bool parse_special = true) const;
  // Appends to *ids instead.
  Status EncodeAppend(std::string_view text, bool parse_special, std::vector<int32_t>* ids) const;

  // The text of `ids`; skip_special drops special added tokens (MinerU keeps them). An id with
  // no token is an error (Hugging Face would drop it silently).
  Result<std::string> Decode(std::span<const int32_t> ids, bool skip_special = false) const;
  // The raw bytes one token stands for (not necessarily whole UTF-8 characters), for
  // streaming; false when the id has no token.
  bool AppendTokenBytes(int32_t id, std::string* bytes) const;

  std::optional<int32_t> TokenToId(std::string_view token) const;
  std::optional<std::string_view> IdToToken(int32_t id) const;
  // The added token with this id, or nullptr.
  const AddedToken* FindAddedToken(int32_t id) const;
  bool IsSpecial(int32_t id) const;
  // One past the largest id (ids below it may still have no token).
  int32_t id_limit() const { return static_cast<int32_t>(tokens_.size()); }
  const std::vector<AddedToken>& added_tokens() const { return added_.tokens(); }
  size_t vocab_size() const;  // entries of the BPE vocabulary
  bool normalizes_nfc() const { return nfc_; }
  const TokenizerLimits& limits() const { return limits_; }

  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;
  ~Tokenizer();

 private:
  // FromJson over a tree whose model vocab and merges were streamed into `streamed` (Load).
  static Result<std::unique_ptr<Tokenizer>> FromJson(const Json& json, std::string_view name,
                                                     const TokenizerLimits& limits,
                                                     const BpeTables* streamed);
  Tokenizer();
  Status EncodeText(std::string_view text, bool parse_special, std::vector<int32_t>* ids) const;
  Status EncodeNormalized(std::string_view text, bool parse_special,
                          std::vector<int32_t>* ids) const;

  TokenizerLimits limits_;
  bool nfc_ = false;
  std::unique_ptr<BpeModel> bpe_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  AddedVocabulary added_;

  // Per id: its token string (vocab or added), the bytes it decodes to, and flags.
  struct TokenEntry {
    size_t text_offset = 0, text_length = 0;    // into token_text_
    size_t bytes_offset = 0, bytes_length = 0;  // into token_bytes_
    int32_t added = -1;                         // index into added_tokens(), -1 if none
    bool present = false;
  };
  std::vector<TokenEntry> tokens_;
  std::string token_text_, token_bytes_;
  StringMap<int32_t> added_ids_;  // content -> id of the added tokens
};

}  // namespace mineru::text
