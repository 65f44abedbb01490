// SPDX-License-Identifier: Apache-2.0
// Encoding and decoding with a loaded tokenizer (text/tokenizer.h): UTF-8 repair, added-token
// splitting, NFC, the Qwen2 pre-tokenizer regex and BPE on arbitrary text, and Decode on
// arbitrary ids. The tokenizer is the byte-level fixture of the tests
// (tests/data/tokenizer/fixture_tokenizer.json: Qwen2's split pattern, 10 added tokens).
// Input: one flags byte (bit 0: parse special tokens, bit 1: skip special tokens on decode),
// then the text; the text's bytes also serve as little-endian ids for a second Decode.
// Invariants: the ids of any text are tokens that decode; Decode of arbitrary ids either fails
// or returns valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

#ifndef MINERU_FUZZ_TOKENIZER_JSON
#error "define MINERU_FUZZ_TOKENIZER_JSON (the fixture's path)"
#endif

namespace {

const mineru::text::Tokenizer& Fixture() {
  static const auto* tokenizer = [] {
    auto loaded = mineru::text::Tokenizer::Load(MINERU_FUZZ_TOKENIZER_JSON);
    MINERU_CHECK(loaded.has_value(), "{}", loaded.error().ToString());
    return loaded->release();
  }();
  return *tokenizer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  if (size == 0) return 0;
  const text::Tokenizer& tokenizer = Fixture();
  const bool parse_special = (data[0] & 1) != 0;
  const bool skip_special = (data[0] & 2) != 0;
  const std::string_view input = fuzz::AsText(data + 1, size - 1);

  auto ids = tokenizer.Encode(input, parse_special);
  MINERU_CHECK(ids.has_value(), "{}", ids.error().message);
  for (int32_t id : *ids) MINERU_CHECK(tokenizer.IdToToken(id).has_value(), "id {}", id);
  auto decoded = tokenizer.Decode(*ids, skip_special);
  MINERU_CHECK(decoded.has_value(), "{}", decoded.error().message);
  MINERU_CHECK(text::IsValidUtf8(*decoded));

  std::vector<int32_t> raw(input.size() / 4);
  if (!raw.empty()) std::memcpy(raw.data(), input.data(), raw.size() * 4);
  if (auto text = tokenizer.Decode(raw, skip_special)) MINERU_CHECK(text::IsValidUtf8(*text));
  std::string bytes;
  for (int32_t id : raw) (void)tokenizer.AppendTokenBytes(id, &bytes);
  return 0;
}
