// SPDX-License-Identifier: Apache-2.0
// The tokenizer files of a generated MinerU2.5 checkpoint (mineru-cpp make-model): a
// tokenizer.json built from a Qwen2 byte-level BPE tokenizer.json (its vocabulary, merges,
// normalizer, pre-tokenizer and decoder; its own added tokens are dropped) plus Qwen2-VL's
// special tokens and MinerU's, and the tokenizer_config.json transformers keeps beside it (chat
// template, added_tokens_decoder, special-token roles).
//
// Ids of the added tokens follow the vocabulary: with Qwen2's 151,643 entries, Qwen2-VL's 14
// special tokens get 151643..151656 (their ids in every Qwen2-VL checkpoint) and MinerU's 15
// tokens 151657..151671 in the order of MineruAddedTokens(). MinerU2.5's real ids for its own
// tokens are not published; these are provisional, and the runtime reads whatever a real
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

struct ModelTokenizerFiles {
  std::string tokenizer_json;         // tokenizer.json text
  std::string tokenizer_config_json;  // tokenizer_config.json text
};

// `source` is a parsed tokenizer.json whose model is a byte-level BPE with ids 0..N-1 (the
// Qwen2 vocabulary from tools/tokenizer-reference); `source_name` names it in errors.
Result<ModelTokenizerFiles> BuildModelTokenizerFiles(const Json& source,
                                                     std::string_view source_name);

}  // namespace mineru::text
