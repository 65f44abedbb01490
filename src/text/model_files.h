// SPDX-License-Identifier: Apache-2.0
// The tokenizer files of a generated MinerU2.5 checkpoint (mineru-cpp make-model): a
// tokenizer.json built from a Qwen2 byte-level BPE tokenizer.json (its vocabulary, merges,
// normalizer, pre-tokenizer and decoder; its own added tokens are dropped) plus Qwen2-VL's
// special tokens and MinerU's, and the tokenizer_config.json transformers keeps beside it (chat
// template, added_tokens_decoder, special-token roles).
//
// Ids of the added tokens follow the vocabulary: with Qwen2's 151,643 entries, Qwen2-VL's 14
// special tokens get 151643..151656 (their ids in every Qwen2-VL checkpoint), then MinerU's own:
//   TokenTable::k2509  15 tokens 151657..151671 in the order of MineruAddedTokens()
//                      (provisional: the 2509 checkpoint's own table is not published);
//   TokenTable::kPro   17 tokens 151657..151673 in the order of ProAddedTokens(), the table of
//                      MinerU2.5-Pro-2605 (as wilhelmjung/ds4 mineru/mu.c lists it).
// Every added token is special. The runtime never relies on these ids: it reads whatever a real
// tokenizer.json says.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace mineru::text {

// Qwen2-VL's special tokens, in id order.
std::span<const std::string_view> Qwen2VlSpecialTokens();
// MinerU2.5's own tokens (layout references and rotations, the one-step parsing markers, OTSL
// table cells), in the order they are given ids.
std::span<const std::string_view> MineruAddedTokens();
// MinerU2.5-Pro-2605's own tokens, in id order (151657..151673 after Qwen2-VL's 14).
std::span<const std::string_view> ProAddedTokens();

enum class TokenTable {
  k2509,  // what make-model writes for the 2509 shapes (tokenizer.json, tokenizer_config.json)
  kPro,   // the Pro-2605 layout: 31 tokens and the separate files the Pro checkpoint ships
};

struct ModelTokenizerFiles {
  std::string tokenizer_json;         // tokenizer.json text
  std::string tokenizer_config_json;  // tokenizer_config.json text (2509: with the template)
  // TokenTable::kPro only; empty (not written) for k2509.
  std::string chat_template_jinja;      // chat_template.jinja: the template alone
  std::string special_tokens_map_json;  // special_tokens_map.json
  std::string added_tokens_json;        // added_tokens.json: content -> id
};

// `source` is a parsed tokenizer.json whose model is a byte-level BPE with ids 0..N-1 (the
// Qwen2 vocabulary from tools/tokenizer-reference); `source_name` names it in errors.
Result<ModelTokenizerFiles> BuildModelTokenizerFiles(const Json& source,
                                                     std::string_view source_name,
                                                     TokenTable table = TokenTable::k2509);

}  // namespace mineru::text
