// SPDX-License-Identifier: Apache-2.0
// The pre-tokenizer of a tokenizer.json: cuts normalised text into the pieces BPE sees.
//
// Supported (anything else is refused with kUnsupported when the file is loaded):
//   {"type": "Split", "pattern": {"Regex": R} | {"String": S}, "behavior": "Isolated",
//    "invert": false}
//   {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true | false}
//   {"type": "Sequence", "pretokenizers": [Split..., ByteLevel]}
// ByteLevel must come exactly once, last; with use_regex (its default) it first splits with
// GPT-2's own pattern, as Hugging Face tokenizers' ByteLevel does. The byte-to-alphabet mapping
// itself happens in the BPE model (text/bpe.h), which looks bytes up directly.
//
// Regexes run on Oniguruma with its default syntax, the engine and settings Hugging Face
// tokenizers uses (its onig crate), so Unicode classes (\p{L}, \p{N}), case-insensitive groups
// and \s (which there includes U+0085 and excludes U+FEFF) behave exactly as in the reference.
// Isolated: every match is a piece and so is the text between matches; empty pieces vanish.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace mineru::text {

// A [begin, end) byte range.
struct Span {
  size_t begin = 0, end = 0;
};

// One Split step: a compiled Oniguruma regex or a literal string.
class SplitPattern {
 public:
  // Errors (kCorrupt) carry Oniguruma's message and `where`.
  static Result<SplitPattern> Regex(std::string_view pattern, std::string_view where);
  static SplitPattern Literal(std::string literal);

  // Appends the pieces of s[span] to *out (offsets into s), in order.
  Status Split(std::string_view s, Span span, std::vector<Span>* out) const;

  const std::string& source() const { return source_; }

 private:
  struct OnigDeleter {
    void operator()(void* regex) const;
  };
  std::shared_ptr<void> regex_;  // regex_t*, shared: compiled once, searched from any thread
  std::string source_;           // the pattern or the literal
};

class PreTokenizer {
 public:
  static Result<PreTokenizer> FromJson(const Json& json, std::string_view where);

  // Cuts s into the pieces BPE encodes one by one (cleared first).
  Status Split(std::string_view s, std::vector<Span>* pieces) const;

  const std::vector<SplitPattern>& steps() const { return steps_; }

 private:
  std::vector<SplitPattern> steps_;  // applied in order, each to the pieces of the one before
};

}  // namespace mineru::text
