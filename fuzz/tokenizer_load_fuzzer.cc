// SPDX-License-Identifier: Apache-2.0
// Loading a tokenizer.json (text/tokenizer.h Tokenizer::FromJson, after ParseJson as Load does):
// the BPE vocabulary and merges, the added tokens, the normalizer and pre-tokenizer sections;
// then one Encode and Decode with whatever loaded.
// Invariants: encoded ids have tokens, and they decode.
#include <cstddef>
#include <cstdint>

#include "base/json.h"
#include "fuzz/fuzz_util.h"
#include "text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  static const text::TokenizerLimits limits;
  auto json = ParseJson(fuzz::AsText(data, size), "tokenizer.json", limits.max_json_depth);
  if (!json) return 0;
  auto tokenizer = text::Tokenizer::FromJson(*json, "tokenizer.json", limits);
  if (!tokenizer) return 0;
  auto ids = (*tokenizer)->Encode("Text Recognition: <|im_start|>x\n\u00e9\u0301 12 ab");
  if (!ids) return 0;  // a vocabulary without the bytes this text needs
  for (int32_t id : *ids) {
    MINERU_CHECK(id >= 0 && id < (*tokenizer)->id_limit(), "id {}", id);
    MINERU_CHECK((*tokenizer)->IdToToken(id).has_value(), "id {}", id);
  }
  auto decoded = (*tokenizer)->Decode(*ids);
  MINERU_CHECK(decoded.has_value(), "{}", decoded.error().message);
  return 0;
}
