// SPDX-License-Identifier: Apache-2.0
// Checks on a checkpoint's added-token table: the tokens a pipeline profile relies on must be
// added tokens marked special (so that each is one id, written whole in the model's output and
// kept by a decoder that keeps special tokens), and the side files transformers also reads
// (added_tokens.json, tokenizer_config.json's added_tokens_decoder) must agree with
// tokenizer.json. Token ids are never assumed: whatever tokenizer.json says is used.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "text/tokenizer.h"

namespace mineru::text {

// Every token of `required` must be an added token of `tokenizer`, and special. kUnsupported
// otherwise, naming each missing (or non-special) token, `needed_by` ("the pro profile") and
// `where` (the tokenizer file).
Status CheckRequiredTokens(const Tokenizer& tokenizer, std::span<const std::string_view> required,
                           std::string_view needed_by, std::string_view where);

// Where model_dir has added_tokens.json ({content: id}) or a tokenizer_config.json with
// added_tokens_decoder ({"id": {"content", "special", ...}}), each entry must be the same added
// token in `tokenizer` (same id and content; same special flag for the decoder). kCorrupt naming
// the file and the token otherwise. Files over max_bytes are kResourceExhausted.
Status CheckAddedTokenFiles(const std::string& model_dir, const Tokenizer& tokenizer,
                            uint64_t max_bytes = kDefaultMaxTokenizerFileBytes);

}  // namespace mineru::text
